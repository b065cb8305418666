package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// quoteSpacingAny is the least gap between two quotes of one key pair: the
// quote route allows one per second.
const quoteSpacingAny = time.Second

// persistRetries is how often a step whose record could not be saved is
// tried again (a second apart) before the workflow is failed with the
// reason.
const persistRetries = 5

// event is something for the loop to handle.
type event interface{}

// Events on the loop's mailbox.
type (
	// startEv resumes the recovered workflows, after the reconciling reads
	// (queued ahead of it); book is the order book for those yet to quote.
	startEv struct {
		book  []workflow.BookOrder
		reply chan error
	}
	rowsEv struct{ rows []brokerclient.HistoryRow }
	// inventoryEv is an inventory read (the poller's, or a request's),
	// stamped when it arrived.
	inventoryEv struct {
		rows []brokerclient.InventoryRow
		at   time.Time
	}
	// tickEv follows a history read asked for at read.
	tickEv    struct{ read time.Time }
	writtenEv struct {
		id  string
		in  workflow.Written
		sym string
	}
	answerEv struct {
		id    string
		in    workflow.Answer
		reply chan error // nil from an asker's job
	}
	locateEv struct {
		w     *Workflow
		begin workflow.Begin
		book  []workflow.BookOrder
		ask   asker
		reply chan error
	}
	creditEv struct {
		w     *Workflow
		reply chan error
	}
	cancelEv struct {
		id    string
		in    workflow.CancelAsked
		reply chan error
	}
	waitEv struct {
		id    string
		reply chan chan *Workflow
	}
	activeEv       struct{ reply chan []Workflow }
	inventoryAskEv struct {
		reply chan []brokerclient.InventoryRow
	}
	queuedAskEv struct{ reply chan int }
	// coverageAskEv asks for the latest inventory if it is still good for
	// symbols' pre-quote coverage check (see loop.freshFor).
	coverageAskEv struct {
		symbols []string
		reply   chan freshInventory
	}
	subscribeEv struct {
		feed  *feed
		reply chan struct{}
	}
)

// job is a broker write or a question, run on a worker; the event it
// returns goes back to the loop.
type job func(ctx context.Context) event

// asker answers an offer put to a person.
type asker func(ctx context.Context, o Offer) bool

// loop is the state one account's loop alone owns: no other goroutine
// reads or writes it, so nothing here needs a lock.
type loop struct {
	e         *Engine
	open      map[string]*Workflow // unfinished workflows, by id
	busy      map[string]int       // symbol → open locates and price checks past Requested (its one open quote)
	byQuote   map[string]string    // quoteReqID → workflow id: the one registry a history row is routed by
	loaded    map[string]int64     // versions found at Start, to resume what reconciling did not move
	queue     []string             // locates and price checks waiting to quote, FIFO
	books     map[string][]workflow.BookOrder
	lastQuote map[string]time.Time // symbol → when its last quote left
	lastAny   time.Time
	waiters   map[string][]chan *Workflow
	inventory []brokerclient.InventoryRow
	invAt     time.Time            // when inventory arrived
	savedInv  []byte               // the last inventory snapshot saved (JSON)
	touched   map[string]time.Time // symbol → when a fill, credit-back, cancel or order last moved its inventory
	quoting   map[string]bool      // workflows whose quote is with a worker, not yet answered
	selling   map[string]bool      // workflows whose sell (credit-back) is with a worker, not yet answered
	group     *group               // steps awaiting one commit while a batch of events is handled
	retries   []retry
	subs      []*feed // the Subscribe callers'
	orders    orderBook
	askers    map[string]asker // who answers a workflow's offer, when not Config.Ask
}

// load reads what an earlier run left unfinished and builds the loop.
func (e *Engine) load(ctx context.Context) (*loop, error) {
	l := &loop{
		e: e, open: map[string]*Workflow{}, busy: map[string]int{}, byQuote: map[string]string{}, loaded: map[string]int64{},
		books: map[string][]workflow.BookOrder{}, lastQuote: map[string]time.Time{}, touched: map[string]time.Time{},
		waiters: map[string][]chan *Workflow{}, orders: newOrderBook(), askers: map[string]asker{},
		quoting: map[string]bool{}, selling: map[string]bool{},
	}
	rec, err := e.recovery(ctx)
	if err != nil {
		return nil, err
	}
	l.savedInv = rec.Inventory
	since := RecoverySince(e.cfg, e.clock.Now())
	for _, w := range rec.Recent {
		if !states.Quotes(w.Kind) || w.UpdatedAt.Before(since) {
			continue
		}
		// The broker had its quote by the time this process last
		// recorded anything of it after sending (its answer, a row): a
		// workflow ended before its quote's answer was handled keeps the
		// send's instant as SentAt, before the broker's receipt (seed
		// 114: the next owner quoted the symbol 30 s after that instant,
		// and the broker refused it for the spacing).
		at := w.SentAt
		if w.UpdatedAt.After(at) {
			at = w.UpdatedAt
		}
		if w.State == states.Quoting {
			// Its quote, unanswered, may have reached the broker at
			// any moment up to now (an owner killed mid-send): the
			// symbol's spacing counts from now.
			at = e.clock.Now()
		}
		l.noteQuote(w.Symbol, at)
	}
	open, orders, err := e.authentic(ctx, rec.Open, rec.Orders, rec.Refused)
	if err != nil {
		return nil, err
	}
	for _, w := range open {
		l.track(w)
		l.loaded[w.ID] = w.Version
	}
	for _, o := range orders {
		// An unsettled order younger than leftoverAge may belong to a run
		// still sending it: leave it to that run.
		if o.Settled() || e.cfg.SettleAllOrders || e.clock.Now().Sub(o.UpdatedAt) >= leftoverAge {
			l.orders.track(o)
		}
	}
	return l, nil
}

// run is the account's loop: it handles events until ctx ends.
func (l *loop) run(ctx context.Context) {
	defer l.shutdown()
	for {
		// Always asleep on the clock when idle, so a virtual-time driver
		// can tell the loop is waiting.
		t := l.e.clock.NewTimer(l.nextWake())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-l.e.inbox.ready:
			t.Stop()
			l.e.inbox.drain(func(evs []event) {
				l.grouped(func() {
					for _, ev := range evs {
						l.handle(ctx, ev)
					}
				})
			})
		case <-t.C():
		}
		l.due()
	}
}

// nextWake is how long the loop may sleep: until the next quote or retry is
// due, at most a minute.
func (l *loop) nextWake() time.Duration {
	wait := time.Minute
	now := l.e.clock.Now()
	if _, d := l.nextQuotable(); d > 0 && d < wait {
		wait = d
	}
	for _, r := range l.retries {
		if d := r.at.Sub(now); d < wait {
			wait = max(d, time.Millisecond)
		}
	}
	return wait
}

// due sends the quotes whose turn has come and retries due steps.
func (l *loop) due() {
	for {
		id, _ := l.nextQuotable()
		if id == "" {
			break
		}
		l.queue = slices.DeleteFunc(l.queue, func(q string) bool { return q == id })
		w := l.open[id]
		located := brokerclient.Available(l.inventory, w.Symbol)
		l.step(w, workflow.QuoteTurn{Available: workflow.Available(located, l.books[id], w.Symbol)})
	}
	now := l.e.clock.Now()
	// A retry that fails again is appended to l.retries while this runs.
	retries := l.retries
	l.retries = nil
	for _, r := range retries {
		if r.at.After(now) {
			l.retries = append(l.retries, r)
			continue
		}
		r.again()
	}
}

// coverQueued ends the queued locates the inventory now covers (another
// request of the symbol filled), at once rather than at their turn to
// quote, which the same-symbol spacing may hold back for half a minute.
// A price check is never covered: it asks its price whatever inventory
// holds, so it keeps its turn.
func (l *loop) coverQueued() {
	for _, id := range slices.Clone(l.queue) {
		w := l.open[id]
		if w == nil || w.Kind != states.Locate {
			continue
		}
		if have := workflow.Available(brokerclient.Available(l.inventory, w.Symbol), l.books[id], w.Symbol); have >= w.Requested {
			l.queue = slices.DeleteFunc(l.queue, func(q string) bool { return q == id })
			l.step(w, workflow.QuoteTurn{Available: have})
		}
	}
}

// nextQuotable returns the first queued workflow that may be quoted now, or
// how long until one may: one open quote per symbol, QuoteSpacing between
// quotes of a symbol, and one quote per second overall counted from the
// broker's answer to the last one. The broker had that quote by the time it
// answered, so the next cannot reach it less than a second later whatever
// the network does, and no 429 can come of it; at most one quote is with a
// worker at a time, so a quote waiting on the client's pacer never holds
// back the accepts.
func (l *loop) nextQuotable() (string, time.Duration) {
	if len(l.queue) == 0 || len(l.quoting) > 0 {
		return "", 0
	}
	now := l.e.clock.Now()
	if d := l.lastAny.Add(quoteSpacingAny).Sub(now); d > 0 {
		return "", d
	}
	var wait time.Duration
	for _, id := range l.queue {
		w := l.open[id]
		if w == nil || l.busy[w.Symbol] > 0 {
			continue
		}
		if d := l.lastQuote[w.Symbol].Add(l.e.cfg.QuoteSpacing).Sub(now); d > 0 {
			if wait == 0 || d < wait {
				wait = d
			}
			continue
		}
		return id, 0
	}
	return "", wait
}

// queued is the update saying that locate w waits in the quote queue
// behind the same-symbol spacing, if it does.
func (l *loop) queued(w *Workflow) (Update, bool) {
	if w == nil {
		return Update{}, false
	}
	until := l.lastQuote[w.Symbol].Add(l.e.cfg.QuoteSpacing)
	if !until.After(l.e.clock.Now()) {
		return Update{}, false
	}
	return Update{Workflow: w, From: w.State, QueuedUntil: until}, true
}

// noteQuote records the broker's answer to a quote at: it spaces both the
// symbol's next quote and the next quote of any symbol.
func (l *loop) noteQuote(symbol string, at time.Time) {
	l.noteAnswer(symbol, at)
	if at.After(l.lastAny) {
		l.lastAny = at
	}
}

// noteAnswer records the broker's answer to a quote of symbol: the symbol's
// 30 seconds count from it (the broker received the quote before it
// answered, so the next one cannot reach it closer).
func (l *loop) noteAnswer(symbol string, at time.Time) {
	if at.After(l.lastQuote[symbol]) {
		l.lastQuote[symbol] = at
	}
	// A symbol's spacing over is a symbol that may quote: its entry
	// goes, so a long-lived loop holds the last QuoteSpacing's symbols,
	// not every symbol it ever quoted.
	now := l.e.clock.Now()
	for s, t := range l.lastQuote {
		if !t.Add(l.e.cfg.QuoteSpacing).After(now) {
			delete(l.lastQuote, s)
		}
	}
}

// touch records that a fill, credit-back, cancel or order moved symbol's
// inventory now (see freshFor). Marks too old for freshFor to look at go,
// so the map holds the last moments' symbols, not every symbol moved.
func (l *loop) touch(symbol string) {
	now := l.e.clock.Now()
	for s, t := range l.touched {
		if now.Sub(t) > 2*inventoryFresh {
			delete(l.touched, s)
		}
	}
	l.touched[symbol] = now
}

// env is what the step may know of workflow id's surroundings.
func (l *loop) env(id string) workflow.Env {
	env := workflow.Env{Now: l.e.clock.Now(), CanAsk: l.askerOf(id) != nil, Rules: l.e.cfg.Rules, Skew: l.e.client.ClockSkew(), Budget: l.e.cfg.Budget}
	if env.Budget.Set() {
		env.Spent = func(symbol string) workflow.Spent {
			var pending map[string]*Workflow
			if l.group != nil {
				pending = l.group.flows
			}
			s, err := l.e.spentToday(l.e.ctx, symbol, pending)
			if err != nil {
				// Unknown spend: nothing more is spent on a guess.
				l.e.log.Warn("locate budget: today's spend could not be read; declining", "err", err)
				return workflow.Spent{Total: l.e.cfg.Budget.Total, Symbol: l.e.cfg.Budget.PerSymbol[symbol]}
			}
			return s
		}
	}
	return env
}

// askerOf is who answers workflow id's offer: its requester's, else the
// engine's.
func (l *loop) askerOf(id string) asker {
	if a := l.askers[id]; a != nil {
		return a
	}
	return l.e.cfg.Ask
}

// handle is the loop's one dispatch on events.
func (l *loop) handle(ctx context.Context, ev event) {
	switch ev := ev.(type) {
	case startEv:
		l.resume(ev)
	case rowsEv:
		l.onRows(ev.rows)
	case inventoryEv:
		l.inventory, l.invAt = ev.rows, ev.at
		// A snapshot is saved when the inventory changed: an idle
		// account's reads (every 5 s) otherwise wrote a row each, a
		// transaction per account and read, and a table growing for ever.
		// The first read after a start compares with the last owner's
		// snapshot (store.Recovery.Inventory: a takeover's thousands of
		// accounts otherwise each saved the one their last owner had).
		if raw := rawJSON(ev.rows); !bytes.Equal(raw, l.savedInv) {
			if err := l.e.store.SaveInventory(ctx, l.e.cfg.Account, raw); err != nil {
				l.e.log.Warn("inventory snapshot not saved", "err", err)
			} else {
				l.savedInv = raw
			}
		}
		l.coverQueued()
	case tickEv:
		for _, w := range l.sorted() {
			if l.quoting[w.ID] || l.selling[w.ID] {
				// Its write has not been answered: when it reached the
				// broker is not known yet, so no read can show its row
				// missing (a quote or sell held by the key pair's pacer or
				// a slow link is not lost).
				continue
			}
			l.step(w, workflow.Tick{Read: ev.read})
		}
	case writtenEv:
		l.onWritten(ev)
	case answerEv:
		l.onAnswer(ev)
	case locateEv:
		l.onLocate(ctx, ev)
	case creditEv:
		ev.reply <- l.create(ctx, ev.w, workflow.SellTurn{}, nil)
	case cancelEv:
		ev.reply <- l.cancel(ctx, ev.id, ev.in)
	case waitEv:
		l.onWait(ev)
	case activeEv:
		out := make([]Workflow, 0, len(l.open))
		for _, w := range l.sorted() {
			out = append(out, *w)
		}
		ev.reply <- out
	case inventoryAskEv:
		ev.reply <- slices.Clone(l.inventory)
	case queuedAskEv:
		ev.reply <- len(l.queue)
	case coverageAskEv:
		l.onCoverage(ev)
	case subscribeEv:
		l.onSubscribe(ev)
	case orderEvent:
		if o := l.orders.open[ev.orderID()]; o != nil {
			l.touch(o.Symbol)
		}
		l.orders.handle(ctx, l, ev)
	default:
		l.e.log.Error("engine: unknown event", "type", fmt.Sprintf("%T", ev))
	}
}

// resume resumes what Start found unmoved by reconciling (see Start).
func (l *loop) resume(ev startEv) {
	// Reconciling (the history rows, the timers' check after that
	// read and the inventory, all handled before this event) may have
	// moved some; resume the others from their persisted state. One
	// yet to quote quotes its shortfall, from that inventory and this
	// book, at its turn.
	for id, v := range l.loaded {
		w := l.open[id]
		if w == nil {
			continue
		}
		cur := latestOf(l.group, flowKind{}, w)
		if toQuote(cur) && l.books[id] == nil {
			l.books[id] = ev.book
		}
		if cur.Version == v {
			l.step(w, workflow.Resume{})
		}
	}
	l.loaded = nil
	l.orders.resume(l)
	l.updateHot()
	// Start returns once the resumed records are committed.
	l.group.then(func() { ev.reply <- nil })
}

// inventoryFresh is how long an inventory read stands in for a new one in a
// request's coverage check: the poller's idle inventory spacing (spec
// "Short locates" rule 7), so a fresh read is never older than one the
// poller would make anyway.
const inventoryFresh = 5 * time.Second

// freshFor says whether the latest inventory read answers the coverage
// check of symbols without a new read: it is younger than inventoryFresh
// and no fill, credit-back, cancel or order has touched any of them since
// a moment inventoryFresh before it arrived (a margin for the read being in
// flight while history showed the change).
func (l *loop) freshFor(symbols []string) bool {
	if l.invAt.IsZero() || l.e.clock.Now().Sub(l.invAt) > inventoryFresh {
		return false
	}
	for _, s := range symbols {
		if t, ok := l.touched[s]; ok && !t.Before(l.invAt.Add(-inventoryFresh)) {
			return false
		}
	}
	return true
}

// sorted lists the open workflows oldest first, for a stable order.
func (l *loop) sorted() []*Workflow {
	out := make([]*Workflow, 0, len(l.open))
	for _, w := range l.open {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *Workflow) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// create records a new workflow (its write-ahead intent), with the MAC of
// its request, and takes its first step.
func (l *loop) create(ctx context.Context, w *Workflow, first workflow.Input, book []workflow.BookOrder) error {
	w.MAC = l.e.rows.Workflow(w)
	if err := l.e.store.Create(ctx, w); err != nil {
		if ctx.Err() != nil {
			// The engine is closing (its owner going away): nothing was
			// recorded, and the caller takes the request to the next owner.
			return ErrStopped
		}
		return err
	}
	l.track(w)
	if book != nil {
		l.books[w.ID] = book
	}
	l.step(w, first)
	return nil
}

func (l *loop) cancel(ctx context.Context, id string, in workflow.CancelAsked) error {
	w := l.open[id]
	if w == nil {
		if stored, err := l.e.store.Get(ctx, id); err == nil {
			return fmt.Errorf("%w: %s is %s", ErrNotOpen, id, stored.State)
		}
		return fmt.Errorf("%w: unknown workflow %s", ErrNotOpen, id)
	}
	return l.step(w, in)
}

// onRows routes a history read's new or changed rows to the open
// workflows they belong to (by quoteReqID, the .SU shadow row with its
// base id), in the order their ids first appear; a row of no open
// workflow is left alone.
func (l *loop) onRows(rows []brokerclient.HistoryRow) {
	var order []string
	groups := map[string][]brokerclient.HistoryRow{}
	for _, r := range rows {
		base := r.BaseID()
		if _, ok := l.byQuote[base]; !ok {
			continue
		}
		if _, ok := groups[base]; !ok {
			order = append(order, base)
		}
		groups[base] = append(groups[base], r)
	}
	for _, base := range order {
		if w := l.open[l.byQuote[base]]; w != nil {
			l.stepRows(w, groups[base])
		}
	}
}

// stepRows turns one workflow's new or changed history rows (both legs of a
// Reg SHO pair together) into its Rows input.
func (l *loop) stepRows(w *Workflow, rows []brokerclient.HistoryRow) {
	in := workflow.Rows{Legs: map[string]workflow.Leg{}, Raw: rawJSON(rows)}
	latest := rows[0]
	for _, r := range rows {
		leg := workflow.Leg{Status: r.LocateStatus, Price: r.LocatePrice, Type: r.LocateType,
			Shares: r.LocateShares, Text: r.TextValue(), Error: r.LocateError}
		if !r.UpdatedDate.NoZone {
			leg.At = r.UpdatedDate.Time
		}
		in.Legs[r.QuoteReqID] = leg
		if r.UpdatedDate.After(latest.UpdatedDate.Time) {
			latest = r
		}
	}
	in.Latest = latest.QuoteReqID
	if t := latest.UpdatedDate.Time; !latest.UpdatedDate.NoZone && !t.IsZero() {
		in.OfferedAt = l.e.localTime(t)
	}
	l.step(w, in)
}

// localTime turns a time on the broker's clock into this machine's, so
// that offer windows are measured on the broker's clock: a host whose clock
// is off neither misses nor overstays a window. An offset within the Date
// header's resolution (a second) is no evidence of skew and is ignored.
func (e *Engine) localTime(broker time.Time) time.Time {
	return broker.Add(-e.client.ClockSkew())
}

// step steps workflow w with input in (see stepRecord).
func (l *loop) step(w *Workflow, in workflow.Input) error { return stepRecord(l, flowKind{}, w, in, 0) }

// track registers a non-terminal workflow.
func (l *loop) track(w *Workflow) {
	l.untrack(w.ID)
	l.open[w.ID] = w
	for _, q := range quoteIDs(w) {
		l.byQuote[q] = w.ID
	}
	if quoted(w) {
		l.busy[w.Symbol]++
	}
}

// untrack forgets the record held for id, keeping busy and byQuote in
// step.
func (l *loop) untrack(id string) {
	old := l.open[id]
	if old == nil {
		return
	}
	if quoted(old) {
		if l.busy[old.Symbol]--; l.busy[old.Symbol] <= 0 {
			delete(l.busy, old.Symbol)
		}
	}
	for _, q := range quoteIDs(old) {
		delete(l.byQuote, q)
	}
	delete(l.open, id)
}

// quoteIDs are the quoteReqIDs whose rows belong to w: its own, and the
// one it sent again in place of while that one's late rows are watched for.
func quoteIDs(w *Workflow) []string {
	if w.LostQuoteReqID == "" {
		return []string{w.QuoteReqID}
	}
	return []string{w.QuoteReqID, w.LostQuoteReqID}
}

// quoted says whether w is a locate or price check whose quote has left:
// its symbol has its one open quote (spec "Short locates" rule 4).
func quoted(w *Workflow) bool { return states.Quotes(w.Kind) && !toQuote(w) }

// toQuote says whether w is a locate or price check waiting for its turn
// to quote (for the first time, or again after its quote was lost on the
// way).
func toQuote(w *Workflow) bool {
	return states.Quotes(w.Kind) && (w.State == states.Requested || w.State == states.Requoting)
}

// install takes a saved record as the truth, tells whoever listens, and
// settles the waiters of one that ended.
func (l *loop) install(w *Workflow, from states.State, tr *workflow.Transition, offer *Offer) {
	if tr != nil || offer != nil {
		u := Update{Workflow: w, From: from, Offer: offer}
		if tr != nil {
			u.Event, u.Reason = tr.Event, tr.Reason
		}
		l.e.log.Info("workflow", "id", w.ID, "symbol", w.Symbol, "from", from, "to", w.State, "event", u.Event, "reason", u.Reason)
		l.publish(u)
	}
	if tr != nil && (tr.To == states.Filled || tr.To == states.Credited || tr.To == states.Canceled) {
		l.touch(w.Symbol)
	}
	if !w.Terminal() {
		l.track(w)
		l.updateHot()
		return
	}
	l.untrack(w.ID)
	delete(l.books, w.ID)
	delete(l.askers, w.ID)
	l.queue = slices.DeleteFunc(l.queue, func(q string) bool { return q == w.ID })
	for _, q := range quoteIDs(w) {
		if l.byQuote[q] == w.ID {
			delete(l.byQuote, q)
		}
	}
	for _, ch := range l.waiters[w.ID] {
		ch <- w
	}
	delete(l.waiters, w.ID)
	l.checkIdle()
	l.updateHot()
}

// publish hands an update to OnUpdate (before waiters are released, so a
// progress display has shown the last change when Wait returns) and to the
// subscribers.
func (l *loop) publish(u Update) {
	if l.e.cfg.OnUpdate != nil {
		l.e.cfg.OnUpdate(u)
	}
	l.subs = slices.DeleteFunc(l.subs, func(f *feed) bool { return f.ctx.Err() != nil })
	for _, f := range l.subs {
		f.put(u)
	}
}

func (l *loop) checkIdle() {
	if l.orders.settled() {
		for _, ch := range l.orders.quiet {
			close(ch)
		}
		l.orders.quiet = nil
	}
}

// shutdown releases whoever waits on the loop.
func (l *loop) shutdown() {
	for _, f := range l.subs {
		f.close()
	}
	l.subs = nil
}

// newWorkflow builds a workflow record with a fresh quoteReqID, and id
// unless the caller chose it.
func (e *Engine) newWorkflow(kind states.Kind, id, symbol string, requested int64) *Workflow {
	if id == "" {
		id = workflow.NewID()
	}
	return &Workflow{
		ID: id, Kind: kind, Account: e.cfg.Account, Symbol: symbol,
		Requested: requested, QuoteReqID: workflow.NewQuoteReqID(), State: states.Initial(kind),
	}
}

func rawJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// brokerNow is the broker's time now (this machine's clock, skew
// corrected): what its session rules are measured on.
func (e *Engine) brokerNow() time.Time {
	return e.clock.Now().Add(e.client.ClockSkew())
}
