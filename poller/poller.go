// Package poller runs one spaced history and inventory poller per account:
// one history GET per tick serves every waiting workflow, and the rows new
// or changed since the last read go to one receiver (Config.Rows), the
// account's engine, which alone knows which workflow a row belongs to. The cadence follows the broker's polling
// guidance (docs/broker.md, "Polling"): after a write about 2 s then 2 s
// spacing; after a quote, every half second across its 1.5 to 3 s settle
// window (Quoted), the history route's 2 per second, so an offer is seen
// within one read of settling; idle, inventory every 5 s and history every
// 8 s; while nothing is open on the account (SetQuiet), history every
// 2 minutes and inventory only when history changed; about 1 s while
// an offer is live. The accounts of a key pair share its buckets:
// a history read an open workflow waits on asks its key pair's pacer
// first (brokerclient.PriorityUrgent), an idle account's reads last, so
// with many accounts on one key pair the idle cadence is a ceiling that
// stretches, never a queue an offer waits behind.
package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
)

// Source is what the poller reads; *brokerclient.Client provides it through
// ClientSource.
type Source interface {
	History(ctx context.Context, account string) ([]brokerclient.HistoryRow, error)
	Inventory(ctx context.Context, account string) ([]brokerclient.InventoryRow, error)
}

// ClientSource adapts a brokerclient.Client.
func ClientSource(c *brokerclient.Client) Source { return clientSource{c} }

type clientSource struct{ c *brokerclient.Client }

func (s clientSource) History(ctx context.Context, account string) ([]brokerclient.HistoryRow, error) {
	rows, _, err := s.c.Locates.History(ctx, account)
	return rows, err
}

func (s clientSource) Inventory(ctx context.Context, account string) ([]brokerclient.InventoryRow, error) {
	rows, _, err := s.c.Locates.Inventory(ctx, account)
	return rows, err
}

func (s clientSource) HoldIdle() func() { return s.c.HoldIdle() }

// idleHolder is a Source that can hold its key pair's idle reads while
// this account awaits an outcome (ClientSource: brokerclient's
// Client.HoldIdle); see SetAwaiting.
type idleHolder interface{ HoldIdle() (release func()) }

// Cadence is the poller's spacing, from the spec's "Short locates" rule 7.
type Cadence struct {
	AfterWrite    time.Duration // first history poll after a write (2 s)
	WriteSpacing  time.Duration // spacing of the follow-up polls (2 s)
	WritePolls    int           // history polls after a write, the first included (4)
	Hot           time.Duration // spacing while an offer is live or a quote young (1 s)
	IdleHistory   time.Duration // idle history spacing (8 s)
	IdleInventory time.Duration // idle inventory spacing (5 s)
	// SettleMin and SettleMax bound when the broker settles a quote it
	// has (1.5 and 3 s: the spec's States table, "settles in about 1.5 to
	// 3 seconds"); see Quoted.
	SettleMin, SettleMax time.Duration
	// Quiet spaces history while the account has nothing open
	// (SetQuiet): nothing locator does can change it then, and the
	// streams carry the account's orders, positions and P&L (2 min:
	// with the owner's ledger sync, a read every
	// service.LedgerSyncEvery, an idle account reads the broker three
	// times in 4 minutes).
	Quiet            time.Duration
	MaxBackoff       time.Duration // cap of the error back-off (60 s)
	InventoryOnWrite time.Duration // delay of the inventory refresh asked for after fills and sells
}

// DefaultCadence is the spec's guidance.
var DefaultCadence = Cadence{
	AfterWrite: 2 * time.Second, WriteSpacing: 2 * time.Second, WritePolls: 4,
	SettleMin: 1500 * time.Millisecond, SettleMax: 3 * time.Second,
	Hot: time.Second, IdleHistory: 8 * time.Second, IdleInventory: 5 * time.Second, Quiet: 2 * time.Minute,
	MaxBackoff: 60 * time.Second, InventoryOnWrite: time.Second,
}

// withDefaults fills each zero field from DefaultCadence, so a partly set
// cadence never spins (a zero spacing) or outruns the route's limit.
func (c Cadence) withDefaults() Cadence {
	d := DefaultCadence
	for _, f := range []struct{ v, def *time.Duration }{
		{&c.AfterWrite, &d.AfterWrite}, {&c.WriteSpacing, &d.WriteSpacing}, {&c.Hot, &d.Hot},
		{&c.SettleMin, &d.SettleMin}, {&c.SettleMax, &d.SettleMax},
		{&c.IdleHistory, &d.IdleHistory}, {&c.IdleInventory, &d.IdleInventory}, {&c.Quiet, &d.Quiet},
		{&c.MaxBackoff, &d.MaxBackoff}, {&c.InventoryOnWrite, &d.InventoryOnWrite},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if c.SettleMax < c.SettleMin {
		c.SettleMax = c.SettleMin
	}
	if c.WritePolls <= 0 {
		c.WritePolls = d.WritePolls
	}
	return c
}

// Config configures a Poller.
type Config struct {
	Account string
	Source  Source
	Clock   clock.Clock
	Logger  *slog.Logger
	Cadence Cadence
	// Rows receives each history read's new or changed rows, in the
	// order read, on the poller's goroutine (optional; not called when
	// none changed). Both rows of a Reg SHO pair that change in one read
	// arrive in one call, so a choice between the sides sees both.
	Rows func([]brokerclient.HistoryRow)
	// OnInventory receives every inventory read (optional).
	OnInventory func([]brokerclient.InventoryRow)
	// AfterPoll runs after each history poll's rows were delivered, with
	// the instant the read was asked for (optional): a row the read lacked
	// was missing then. The engine checks its timers there.
	AfterPoll func(read time.Time)
}

// Poller polls one account.
type Poller struct {
	cfg  Config
	wake chan struct{}

	mu        sync.Mutex
	seen      map[string]brokerclient.HistoryRow // last delivered row per quoteReqID, of the last history read
	hot       bool
	quiet     bool      // nothing is open on the account (SetQuiet)
	awaiting  bool      // a sent quote or sell-back waits for its outcome (SetAwaiting)
	release   func()    // ends the hold of the key pair's idle reads (holdLocked; nil: none)
	ran       bool      // Run has returned: no hold is taken any more
	writePoll int       // follow-up polls left after a write
	writeDue  time.Time // the first history read after the last write (AfterWrite)
	// settles are the settle windows of the quotes answered (Quoted)
	// that no history read has begun after the end of yet, soonest first.
	settles  []window
	nextHist time.Time // when history is due
	lastHist time.Time // when the last history read began
	nextInv  time.Time // when inventory is due (zero: not until asked, SetQuiet)
	invAsked bool      // an inventory read was asked for (RefreshInventory)
	invRead  bool      // an inventory read was made
	// preemptIdle gives up the idle read in flight (nil: none).
	preemptIdle context.CancelFunc
	quietUntil  time.Time // after a failed read, nothing is pulled in before this
	polls       int
	polledAt    time.Time // when the last successful history read delivered
	// failing is when the reads began failing (zero while they succeed),
	// failErr the last failure's error.
	failing time.Time
	failErr error
	rng     *rand.Rand
}

// New returns a poller; Run starts it.
func New(cfg Config) *Poller {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Cadence = cfg.Cadence.withDefaults()
	now := cfg.Clock.Now()
	return &Poller{
		cfg: cfg, wake: make(chan struct{}, 1),
		seen:     map[string]brokerclient.HistoryRow{},
		nextHist: now, nextInv: now,
		rng: rand.New(rand.NewPCG(uint64(now.UnixNano()), 7)),
	}
}

// Stagger moves the first reads, due at once, to a moment drawn within the
// idle spacing of each (history's, inventory's): an account with nothing
// to recover needs its refresh within that time, not at once, and the
// thousands a takeover or a desk's start opens together spread their
// reads over it, rather than send them all as the others still open. A
// write, or a read asked for, brings them forward as ever.
func (p *Poller) Stagger() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Clock.Now()
	p.nextHist = now.Add(time.Duration(p.rng.Int64N(int64(p.cfg.Cadence.IdleHistory))))
	p.nextInv = now.Add(time.Duration(p.rng.Int64N(int64(p.cfg.Cadence.IdleInventory))))
}

// Wrote tells the poller a write was sent: history is polled about 2 s later
// and then at 2 s spacing a few times.
func (p *Poller) Wrote() {
	p.mu.Lock()
	due := later(p.cfg.Clock.Now().Add(p.cfg.Cadence.AfterWrite), p.quietUntil)
	sooner(&p.nextHist, due)
	p.writeDue = due
	p.writePoll = p.cfg.Cadence.WritePolls
	p.preemptLocked()
	p.mu.Unlock()
	p.kick()
}

// window is a quote's settle window: the broker settles it no sooner
// than from and no later than to (Quoted).
type window struct{ from, to time.Time }

// Quoted tells the poller a quote was answered at answered: the broker
// has it and settles it 1.5 to 3 s from then (Cadence.SettleMin,
// SettleMax), however long the answer took to reach the poller (the
// engine's loop writes other workflows' records first). History is read
// every half second across that window, the route's pace, the first read
// half a second after it opens and the last at or after its end
// (settleReadLocked): an offer is seen within one read of settling, at
// most half a second, and accepted at once (an offer seen late is
// accepted late, and the 30 s window runs from the broker's offer). One
// read serves every window open, so quotes a second apart cost two reads
// each. The reads end with the window, or sooner once no sent quote
// awaits its outcome (SetAwaiting); the follow-up polls of a write follow.
func (p *Poller) Quoted(answered time.Time) {
	c := p.cfg.Cadence
	p.mu.Lock()
	now := p.cfg.Clock.Now()
	// A read due sooner on the idle or quiet cadence alone would show
	// nothing of the quote (it settles SettleMin after its answer at the soonest)
	// and take a turn of the key pair's bucket: it moves to the window's
	// first read. One due for another write's or quote's sake stays.
	alone := !p.writeDue.After(now) && len(p.settles) == 0
	p.settles = append(p.settles, window{answered.Add(c.SettleMin), answered.Add(c.SettleMax)})
	due, _ := p.settleReadLocked(p.lastHist)
	due = later(due, p.quietUntil)
	if due.Before(p.nextHist) || alone {
		p.nextHist = due
	}
	p.writeDue = due
	p.writePoll = c.WritePolls
	p.holdLocked()
	p.preemptLocked()
	p.mu.Unlock()
	p.kick()
}

// settleReadLocked is when history must next be read for the settle
// windows open (false: none is), the last read having begun at last:
// half a second after the later of last and a window's opening (an offer
// settled since last waits at most that for the read that shows it), or
// at a window's end when that comes sooner, never sooner than the route's
// pace after last. p.mu is held.
func (p *Poller) settleReadLocked(last time.Time) (time.Time, bool) {
	var next time.Time
	for i, w := range p.settles {
		due := later(w.from, last).Add(historyGap)
		if due.After(w.to) {
			due = later(w.to, last.Add(historyGap))
		}
		if i == 0 || due.Before(next) {
			next = due
		}
	}
	return next, len(p.settles) > 0
}

// SetHot tightens history polling to about 1 s (an offer is live or a quote
// is young) or relaxes it. It never pulls a read before the one Wrote
// scheduled: the spec's 2 s after a write is when history can first show
// its outcome (a quote settles in 1.5 to 3 s), and with many accounts on
// one key pair a read before it takes the turn of one that can.
func (p *Poller) SetHot(hot bool) {
	p.mu.Lock()
	changed := p.hot != hot
	p.hot = hot
	if hot {
		p.preemptLocked()
		sooner(&p.nextHist, later(later(p.cfg.Clock.Now().Add(p.cfg.Cadence.Hot), p.quietUntil), p.writeDue))
	}
	p.mu.Unlock()
	if changed {
		p.kick()
	}
}

// SetAwaiting says whether a sent quote or sell-back waits for its outcome
// in history (a quote not yet offered, a sell not yet queued): those reads
// go first on the key pair's history bucket, before an account's reads
// for anything else (a fill after an accept, an offer a person is asked
// about) and before the idle accounts'. See holdLocked. Once none awaits,
// the settle windows' reads end (every quote answered has its outcome),
// and the cadence is the write's and SetHot's.
func (p *Poller) SetAwaiting(awaiting bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.awaiting = awaiting
	if !awaiting {
		p.settles = nil
	}
	p.holdLocked()
}

// holdLocked holds the key pair's idle reads (a Source that can,
// idleHolder) while a quote this account awaits is in its settle window
// (Quoted, until the read at the window's end): this account's reads then
// come at instants it knows, and each finds its token in the bucket. A
// quote left unsettled past its window (pending at the broker) holds them
// no longer. p.mu is held.
func (p *Poller) holdLocked() {
	h, ok := p.cfg.Source.(idleHolder)
	want := ok && p.awaiting && len(p.settles) > 0 && !p.ran
	switch {
	case want && p.release == nil:
		p.release = h.HoldIdle()
	case !want && p.release != nil:
		p.release()
		p.release = nil
	}
}

// SetQuiet says whether the account has nothing open (no workflow, sent
// or queued): its history is then read every Cadence.Quiet rather than at
// the idle cadence, and its inventory only after a history read that
// changed (a locate or credit-back made by another program, in the
// broker's own window), since only another program on the account could
// change them, and what it changes of inventory history shows first (a
// request reads inventory anew anyway when its last read is older than
// 5 s). Turning quiet drops the reads due on the idle cadence or for a
// write whose workflow has ended (history comes Quiet after the last
// read; an inventory read asked for after a fill, or never made yet,
// stays). Leaving quiet, as a locate or credit-back starts, brings each
// read to no later than the idle cadence from now, at once.
func (p *Poller) SetQuiet(quiet bool) {
	p.mu.Lock()
	wake := p.quiet && !quiet
	if quiet && !p.quiet {
		p.nextHist = later(p.nextHist, p.lastHist.Add(p.cfg.Cadence.Quiet))
		p.writePoll = 0
		if !p.invAsked && p.invRead && p.nextInv.After(p.cfg.Clock.Now()) {
			p.nextInv = time.Time{}
		}
	}
	p.quiet = quiet
	if wake {
		now := p.cfg.Clock.Now()
		sooner(&p.nextHist, later(now.Add(p.cfg.Cadence.IdleHistory), p.quietUntil))
		sooner(&p.nextInv, later(now.Add(p.cfg.Cadence.IdleInventory), p.quietUntil))
	}
	p.mu.Unlock()
	if wake {
		p.kick()
	}
}

// historyGap is the least spacing of two history reads: the history
// route allows 2 per second (spec "Rate limits").
const historyGap = time.Second / 2

// Expect tells the poller that history shows a change at once (an accept
// was answered: the broker fills it on receipt). The next history read
// moves up to half a second after the last one, the route's pace, when it
// was due later, and the cadence counts on from it, so a fill is seen
// half a second sooner at the cost of at most one read in three.
func (p *Poller) Expect() {
	p.mu.Lock()
	sooner(&p.nextHist, later(later(p.lastHist.Add(historyGap), p.cfg.Clock.Now()), p.quietUntil))
	p.mu.Unlock()
	p.kick()
}

// RefreshInventory asks for an inventory read soon (after fills and sells).
func (p *Poller) RefreshInventory() {
	p.mu.Lock()
	sooner(&p.nextInv, later(p.cfg.Clock.Now().Add(p.cfg.Cadence.InventoryOnWrite), p.quietUntil))
	p.invAsked = true
	p.mu.Unlock()
	p.kick()
}

// Polls reports how many history polls have completed.
func (p *Poller) Polls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls
}

// LastPoll is when the last successful history read was delivered (zero
// before the first): a health check tells a stalled poller by its age.
func (p *Poller) LastPoll() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polledAt
}

// Failing reports since when the reads have been failing and the last
// failure, or a zero time while the last read succeeded: a page tells a
// broker that does not answer now, not only one that stopped answering a
// while ago.
func (p *Poller) Failing() (time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failing, p.failErr
}

func (p *Poller) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// PollHistory reads history once now, delivers what changed and counts on
// the cadence from this read. The engine's Start calls it to reconcile the
// recovered workflows before any of them steps (docs/design.md rule 1);
// the poller's own ticks call it too.
func (p *Poller) PollHistory(ctx context.Context) error {
	read := p.cfg.Clock.Now()
	p.mu.Lock()
	p.lastHist = read
	p.mu.Unlock()
	rows, err := p.cfg.Source.History(ctx, p.cfg.Account)
	if err != nil {
		return err
	}
	p.deliver(rows, read)
	p.mu.Lock()
	p.nextHist = p.cfg.Clock.Now().Add(p.historySpacingLocked())
	// A read begun at or after a settle window's end has shown its
	// outcome; the windows still open are read across (see Quoted).
	p.settles = slices.DeleteFunc(p.settles, func(w window) bool { return !w.to.After(read) })
	if due, ok := p.settleReadLocked(read); ok {
		sooner(&p.nextHist, due)
	}
	p.holdLocked()
	p.mu.Unlock()
	return nil
}

// PollInventory reads inventory once now, hands it to OnInventory and
// counts the idle inventory spacing from this read (while quiet, the next
// read waits for a change in history, see SetQuiet). The engine's Start
// calls it, beside PollHistory, so a recovered request quotes only its
// shortfall; the poller's own ticks call it too.
func (p *Poller) PollInventory(ctx context.Context) error {
	rows, err := p.cfg.Source.Inventory(ctx, p.cfg.Account)
	if err != nil {
		return err
	}
	if p.cfg.OnInventory != nil {
		p.cfg.OnInventory(rows)
	}
	p.mu.Lock()
	p.nextInv = time.Time{}
	if !p.quiet {
		p.nextInv = p.cfg.Clock.Now().Add(p.cfg.Cadence.IdleInventory)
	}
	p.invAsked, p.invRead = false, true
	p.mu.Unlock()
	return nil
}

// deliver hands the new or changed rows of the read asked for at read to
// Config.Rows, then runs AfterPoll.
func (p *Poller) deliver(rows []brokerclient.HistoryRow, read time.Time) {
	var changed []brokerclient.HistoryRow
	p.mu.Lock()
	for _, r := range rows {
		if prev, ok := p.seen[r.QuoteReqID]; ok && sameRow(prev, r) {
			continue
		}
		p.seen[r.QuoteReqID] = r
		changed = append(changed, r)
	}
	p.forgetGoneLocked(rows)
	p.polls++
	p.polledAt = p.cfg.Clock.Now()
	if p.quiet && len(changed) > 0 {
		// Another program located or credited back: inventory moved too.
		sooner(&p.nextInv, later(p.polledAt, p.quietUntil))
	}
	p.mu.Unlock()
	if len(changed) > 0 && p.cfg.Rows != nil {
		p.cfg.Rows(changed)
	}
	if p.cfg.AfterPoll != nil {
		p.cfg.AfterPoll(read)
	}
}

// forgetGoneLocked drops the rows seen earlier that the history just
// read no longer has (history is the trading day's: yesterday's rows
// leave it), so seen holds one day's rows however long the poller runs.
// Every row read is in seen, so there is something to drop only when seen
// holds more. p.mu is held.
func (p *Poller) forgetGoneLocked(rows []brokerclient.HistoryRow) {
	if len(p.seen) <= len(rows) {
		return
	}
	read := make(map[string]bool, len(rows))
	for _, r := range rows {
		read[r.QuoteReqID] = true
	}
	for id := range p.seen {
		if !read[id] {
			delete(p.seen, id)
		}
	}
}

// sameRow compares the fields a transition can change.
func sameRow(a, b brokerclient.HistoryRow) bool {
	return a.LocateStatus == b.LocateStatus && a.FilledShares == b.FilledShares && a.LocateShares == b.LocateShares &&
		a.LocatePrice.Equal(b.LocatePrice) && a.LocateError == b.LocateError && a.LocateType == b.LocateType &&
		a.TextValue() == b.TextValue() && a.UpdatedDate.Equal(b.UpdatedDate.Time)
}

// Run polls until ctx ends or an error that retrying cannot fix (bad
// credentials, an account the keys do not own).
func (p *Poller) Run(ctx context.Context) error {
	defer func() { // no hold outlives the poller
		p.mu.Lock()
		p.ran = true
		p.holdLocked()
		p.mu.Unlock()
	}()
	failures := 0
	for {
		p.mu.Lock()
		next := p.nextHist
		sooner(&next, p.nextInv)
		p.mu.Unlock()
		if wait := next.Sub(p.cfg.Clock.Now()); wait > 0 {
			t := p.cfg.Clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-p.wake:
				t.Stop()
				continue
			case <-t.C():
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := p.tick(ctx)
		if err == nil {
			failures = 0
			p.mu.Lock()
			p.failing, p.failErr = time.Time{}, nil
			p.mu.Unlock()
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.mu.Lock()
		if p.failing.IsZero() {
			p.failing = p.cfg.Clock.Now()
		}
		p.failErr = err
		p.mu.Unlock()
		if irrecoverable(err) {
			return fmt.Errorf("poller %s: %w", p.cfg.Account, err)
		}
		failures++
		back := p.backoff(failures)
		p.cfg.Logger.Warn("poll failed; backing off", "account", p.cfg.Account, "err", err, "wait", back)
		p.mu.Lock()
		at := p.cfg.Clock.Now().Add(back)
		p.nextHist, p.quietUntil = later(p.nextHist, at), at
		if !p.nextInv.IsZero() {
			p.nextInv = later(p.nextInv, at)
		}
		p.mu.Unlock()
	}
}

// tick runs whichever reads are due and schedules the next ones.
func (p *Poller) tick(ctx context.Context) error {
	now := p.cfg.Clock.Now()
	p.mu.Lock()
	histDue, invDue := !now.Before(p.nextHist), !p.nextInv.IsZero() && !now.Before(p.nextInv)
	p.mu.Unlock()
	if histDue {
		if err := p.paced(ctx, p.PollHistory, false, &p.nextHist); err != nil {
			return err
		}
	}
	if invDue {
		if err := p.paced(ctx, p.PollInventory, true, &p.nextInv); err != nil {
			return err
		}
	}
	return nil
}

// priorityLocked is the priority of this account's reads: urgent while a
// sent quote or sell-back waits for its outcome (SetAwaiting), normal
// while another sent write or a live offer does (SetHot), idle otherwise,
// the follow-up reads of a write whose workflow has ended included. p.mu
// is held.
func (p *Poller) priorityLocked() brokerclient.Priority {
	switch {
	case p.awaiting:
		return brokerclient.PriorityUrgent
	case p.hot:
		return brokerclient.PriorityNormal
	}
	return brokerclient.PriorityIdle
}

// paced runs read at this account's priority as it is when the read
// begins. The key pair's buckets are shared by its accounts (spec "Rate
// limits"): a read that a sent quote or sell-back waits on goes before
// the others of the key pair, one that another sent write waits on (the
// fill after an accept) next, an idle account's (or one whose workflows
// have sent nothing yet) after them. An inventory read (on a bucket of
// its own) asked for after a fill or sell goes no lower than normal.
// An idle read waiting for the key pair's bucket is given up when the
// account turns urgent meanwhile (a quote or sell-back sent, see
// preemptLocked; the priority is chosen and the read made preemptible
// under one lock, so none begins idle after the quote): the poller's
// next tick reads again (next, the read's due time, p.mu held to change
// it) at the urgent priority rather than waiting behind the idle
// accounts, or behind the hold of idle reads its own quote took.
func (p *Poller) paced(ctx context.Context, read func(context.Context) error, inventory bool, next *time.Time) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.mu.Lock()
	prio := p.priorityLocked()
	if inventory && p.invAsked && prio == brokerclient.PriorityIdle {
		prio = brokerclient.PriorityNormal
	}
	if prio == brokerclient.PriorityIdle {
		p.preemptIdle = cancel
	}
	p.mu.Unlock()
	err := read(brokerclient.WithPriority(rctx, prio))
	if prio != brokerclient.PriorityIdle {
		return err
	}
	p.mu.Lock()
	p.preemptIdle = nil
	p.mu.Unlock()
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		// Preempted: read again, urgent, but not before the broker can
		// show the write that made it urgent (a read at once would show
		// nothing new; history's next read is already set for it).
		p.mu.Lock()
		*next = later(*next, p.cfg.Clock.Now().Add(p.cfg.Cadence.Hot))
		p.mu.Unlock()
		return nil
	}
	return err
}

// preemptLocked gives up the idle read in flight, if any (see paced).
// p.mu is held.
func (p *Poller) preemptLocked() {
	if p.preemptIdle != nil {
		p.preemptIdle()
	}
}

func (p *Poller) historySpacingLocked() time.Duration {
	c := p.cfg.Cadence
	switch {
	case p.hot:
		return c.Hot
	case p.writePoll > 0:
		// The spec: "poll history up to four times at 2-second spacing";
		// the poll just made was one of them.
		p.writePoll--
		if p.writePoll > 0 {
			return c.WriteSpacing
		}
	case p.quiet:
		return c.Quiet
	}
	return c.IdleHistory
}

// backoff is exponential from 1 s with jitter, capped.
func (p *Poller) backoff(n int) time.Duration {
	base := min(time.Second<<min(n-1, 6), p.cfg.Cadence.MaxBackoff)
	p.mu.Lock()
	j := time.Duration(p.rng.Int64N(int64(base/4) + 1))
	p.mu.Unlock()
	return min(base+j, p.cfg.Cadence.MaxBackoff)
}

// irrecoverable errors stop the poller: retrying cannot fix credentials or
// an account the keys do not own.
func irrecoverable(err error) bool {
	return errors.Is(err, brokerclient.ErrNotFound) || errors.Is(err, brokerclient.ErrUnauthorized) ||
		errors.Is(err, brokerclient.ErrBadRequest) || errors.Is(err, brokercode.ErrInput)
}

// sooner moves *next to due when due comes first, or when *next is zero
// (no read is due: inventory while quiet).
func sooner(next *time.Time, due time.Time) {
	if next.IsZero() || (!due.IsZero() && due.Before(*next)) {
		*next = due
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
