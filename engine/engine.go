// Package engine runs locator's workflows for one account: it quotes only
// the shortfall of a request, queues quotes so the broker's one-open-quote-
// per-symbol and 30-second same-symbol rules are never provoked, accepts an
// offer within the cost policy inside its 30-second window (choosing the
// right side of a Reg SHO pair), declines the rest explicitly, prices a
// symbol without taking the offer (a price check, cancelled at once),
// credits back unused shares, places a short under a write-ahead clientOrderId and
// follows it, and after a crash reconciles every unfinished workflow against
// the broker's history and inventory before sending anything.
//
// One loop per account alone owns the workflows' state. Requests, history
// rows, inventory reads, timers, a person's answers and the results of
// broker writes are events on its mailbox; it runs the pure step of package
// workflow, commits the record, and only then hands the effects (quote,
// accept, cancel, sell, place or cancel an order) to workers, which report
// back as events. The poller only reads and delivers.
//
// An execution helper in another module reaches an account's engine
// through package connect: connect.Open runs this engine in the helper's
// process when no other process owns the account (on the store the
// settings name), and follows the process that owns it otherwise, so two
// engines never drive one account. The Examples run an engine on its own
// against the simulator, as the owner does.
//
// docs/design.md gives the rules this package keeps (write-ahead intent,
// one owner per account, the broker's clock) and docs/broker.md the broker's
// locate workflow it drives.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/poller"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The engine's types are the domain's.
type (
	// Workflow is a locate request, a price check or a credit-back;
	// Located says plainly whether the shares are there.
	Workflow = workflow.Workflow
	// Policy is a locate's cost policy.
	Policy = workflow.Policy
	// Offer is an offer being weighed or put to a person.
	Offer = workflow.Offer
	// Order is an order placed under a write-ahead clientOrderId.
	Order = workflow.Order
	// Answer is a person's answer to an offer.
	Answer = workflow.Answer
	// Cadence is the poller's spacing (tests tighten it).
	Cadence = poller.Cadence
)

// Config wires an Engine. Client, Store and Account are required; the rest
// has defaults (the wall clock, a discarding logger).
type Config struct {
	Client  *brokerclient.Client
	Store   *store.Store
	Clock   clock.Clock
	Logger  *slog.Logger
	Account string
	// Env, when set, is checked against the account's accountType at Start,
	// together with the account being Active (spec "API keys" rule 5).
	Env brokerclient.Env
	// EnvChecked says the account detail already allowed writes in Env to
	// the key pair's previous owner of the account, whom this engine takes
	// over from (store.Recovery.Checked): Start goes on from that check, as
	// that owner would have, rather than read the detail again from a
	// bucket the dead owner may just have emptied.
	EnvChecked bool
	// Listed, when set, is the account as its key pair's account list
	// showed it (read once for all the accounts a fleet opens on one key
	// pair): Start checks it (brokerclient.CheckWrites) rather than read
	// the account's detail. The detail route is spaced a second apart per
	// key pair, and a key pair's second account waited that second.
	Listed *brokerclient.Account
	// Recovery, when set, is the account's rows as the store held them
	// once this engine's term began (store.Recoveries, Recent from
	// RecoverySince: read for many accounts at once by whoever took their
	// leases together, a fleet's takeover): Start goes on from it rather
	// than read it itself.
	Recovery *store.Recovery
	// Ask is consulted for an offer within policy when the request neither
	// auto-accepts nor sets a cap. It must answer before ctx's deadline (the
	// last moment an accept can still land). Nil means nobody can answer:
	// requests must then auto-accept or set a cap.
	Ask func(ctx context.Context, o Offer) bool
	// OnUpdate receives every state change, on the engine's loop: it must
	// return quickly (print a line, say).
	OnUpdate func(Update)
	// Cadence overrides the poller's spacing (tests).
	Cadence Cadence
	// Rules override the offer window, accept margin and settle grace.
	Rules workflow.Rules
	// Budget is the account's locate budget per trading day (none when
	// unset): the engine declines an offer that would pass it, whoever
	// asked for the locate.
	Budget workflow.Budget
	// QuoteSpacing is the broker's same-symbol quote spacing (default 30 s).
	QuoteSpacing time.Duration
	// Workers is how many broker writes may be under way at once (default 4).
	Workers int
	// SettleAllOrders settles, at Start, every order an earlier run left
	// unanswered, however recent. By default one younger than a minute is
	// left to the run that may still be sending it; `locator resume`, run
	// after a crash, settles them all.
	SettleAllOrders bool
	// Backlog is how many updates a subscriber may leave unread before its
	// subscription ends with a FellBehind update (default DefaultBacklog).
	Backlog int
}

// Update is one state change of a workflow or an order.
type Update = workflow.Update

// Errors the engine returns. Input errors match brokercode.ErrInput: the
// request is malformed; nothing was recorded or sent.
var (
	// ErrNotOpen: the workflow has ended or is unknown.
	ErrNotOpen = workflow.ErrNotOpen
	// ErrStopped: the engine was closed.
	ErrStopped = errors.New("engine stopped")
)

// Engine runs the workflows of one account.
type Engine struct {
	cfg    Config
	client *brokerclient.Client
	store  *store.Store
	clock  clock.Clock
	log    *slog.Logger
	poll   *poller.Poller

	failed atomic.Bool // background work stopped on an error (see Err)
	inbox  *mailbox[event]
	writes *pool
	asks   *pool
	runErr chan error

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed when the loop has ended

	// detail is the account as read at Start, or as listed (Config.Listed;
	// nil when Config.Env was not set, or Config.EnvChecked).
	detail *brokerclient.Account

	routes routeCache // the account's routes, read once a trading day

	// rows authenticates the workflow and order rows the engine creates,
	// and those it loads (see authentic).
	rows workflow.RowKey

	streamOnce sync.Once
	stream     *brokerclient.OrderFollower // the portfolio stream, once an order was placed or it was watched
	streamErr  error                       // why it could not be had
}

// New validates cfg and returns an engine; Start runs it.
func New(cfg Config) (*Engine, error) {
	if cfg.Client == nil || cfg.Store == nil || cfg.Account == "" {
		return nil, errors.New("engine: client, store and account are required")
	}
	key, err := cfg.Client.RowKey()
	if err != nil {
		return nil, fmt.Errorf("engine: the account's rows cannot be authenticated: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Rules.OfferWindow, workflow.DefaultRules.OfferWindow)
	def(&cfg.Rules.AcceptMargin, workflow.DefaultRules.AcceptMargin)
	def(&cfg.Rules.SettleGrace, workflow.DefaultRules.SettleGrace)
	def(&cfg.QuoteSpacing, defaultQuoteSpacing)
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Backlog <= 0 {
		cfg.Backlog = DefaultBacklog
	}
	e := &Engine{
		cfg: cfg, client: cfg.Client, store: cfg.Store, clock: cfg.Clock, log: cfg.Logger, rows: key,
		inbox:  newMailbox[event](),
		runErr: make(chan error, 1), done: make(chan struct{}),
	}
	e.writes, e.asks = &pool{limit: cfg.Workers}, &pool{limit: max(cfg.Workers, 4)}
	e.poll = poller.New(poller.Config{
		Account: cfg.Account, Source: poller.ClientSource(cfg.Client), Clock: cfg.Clock, Logger: cfg.Logger,
		Cadence:     cfg.Cadence,
		Rows:        func(rows []brokerclient.HistoryRow) { e.inbox.push(rowsEv{rows: rows}) },
		OnInventory: e.gotInventory,
		AfterPoll:   func(read time.Time) { e.inbox.push(tickEv{read: read}) },
	})
	return e, nil
}

// defaultQuoteSpacing is Config.QuoteSpacing's default.
const defaultQuoteSpacing = 30 * time.Second

// RecoverySince is the time from which Start of an engine of cfg needs the
// account's workflows updated (store.Recovery.Recent): a quote sent in
// that time may still hold its symbol's spacing, however old its
// workflow.
func RecoverySince(cfg Config, now time.Time) time.Time {
	spacing := cfg.QuoteSpacing
	if spacing <= 0 {
		spacing = defaultQuoteSpacing
	}
	return now.Add(-2 * spacing)
}

// Start checks the account (unless Config.EnvChecked; on Config.Listed when
// set), loads every unfinished workflow and order,
// and reconciles them before any of them steps (docs/design.md rule 1):
// one history read moves each recovered workflow to what the broker's
// history shows, so nothing it shows settled (an accept or cancel whose row
// already shows the outcome) is sent again; one inventory read, and the
// order book when a recovered locate has yet to quote, give that locate
// only its shortfall to quote (workflow.Available). Then it resumes what
// each was doing and starts the poller. It returns once the resumed records
// are committed.
func (e *Engine) Start(ctx context.Context) error {
	if e.cfg.Env != "" && !e.cfg.EnvChecked {
		acct := e.cfg.Listed
		var err error
		if acct == nil {
			acct, err = e.client.GuardWrites(ctx, e.cfg.Account, e.cfg.Env)
		} else {
			err = brokerclient.CheckWrites(acct, e.cfg.Env)
		}
		if err != nil {
			return err
		}
		e.detail = acct
	}
	l, err := e.load(ctx)
	if err != nil {
		return err
	}
	book, rows, err := e.reconcile(ctx, l)
	if err != nil {
		return err
	}
	e.ctx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(e.done)
		l.run(e.ctx)
	}()
	e.writes.begin(e.startWorker)
	e.asks.begin(e.startWorker)
	started := make(chan error, 1)
	e.inbox.push(startEv{book: book, reply: started})
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil && rows != nil {
		err = e.request(ctx, func(r chan error) event { return bookSeenEv{rows: rows, reply: r} })
	}
	if err != nil {
		e.Close()
		return err
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := e.poll.Run(e.ctx); err != nil && !errors.Is(err, context.Canceled) {
			e.log.Error("poller stopped", "err", err)
			e.fail(err)
		}
	}()
	return nil
}

// reconcile makes the reads the recovered workflows need before they step,
// before the loop runs: the history rows and the inventory queue on the
// loop's mailbox ahead of startEv, so the loop takes them first. It reads
// the order book once when a recovered locate has yet to quote (book, for
// its shortfall) or an order was left working (rows, which bring it up to
// the broker's record: a fill while no owner ran, which no stream pushed
// to anyone, is in today's book until the broker's day rolls over, and
// gone after); nil for what needs none. With no workflow recovered there
// is nothing for history or inventory to settle: an engine started from
// what was read for it (Config.Recovery: a fleet's, for many accounts at
// once, or a takeover's) leaves its idle account's refresh to the poller's
// first reads, once it serves (a takeover's accounts served a second
// sooner, each second account of a key pair no longer waiting on its
// bucket), drawn within its idle spacing (poller.Stagger) so that the
// thousands started together spread them; an engine on its own reads
// them at once, as its refresh, before it serves; a book read for a working
// order then goes after the reads of the key pair's other accounts that an
// offer waits on (brokerclient.PriorityIdle, HoldIdle), so a serve
// starting its accounts beside a locate takes none of that locate's turns.
func (e *Engine) reconcile(ctx context.Context, l *loop) (book []workflow.BookOrder, rows []brokerclient.Order, err error) {
	if len(l.open) == 0 {
		ctx = brokerclient.WithPriority(ctx, brokerclient.PriorityIdle)
	}
	if len(l.open) == 0 && e.cfg.Recovery != nil {
		e.poll.Stagger()
	} else {
		if err := e.poll.PollHistory(ctx); err != nil {
			return nil, nil, fmt.Errorf("reconcile: history: %w", err)
		}
		if err := e.poll.PollInventory(ctx); err != nil {
			return nil, nil, fmt.Errorf("reconcile: inventory: %w", err)
		}
	}
	quote := slices.ContainsFunc(slices.Collect(maps.Values(l.open)), toQuote)
	working := slices.ContainsFunc(slices.Collect(maps.Values(l.orders.open)), func(o *Order) bool { return o.State == states.OrderWorking })
	if !quote && !working {
		return nil, nil, nil
	}
	orders, _, err := e.client.Orders.Book(ctx, e.cfg.Account)
	if err != nil {
		return nil, nil, fmt.Errorf("reconcile: order book: %w", err)
	}
	if quote {
		book = ledger.BookOrders(orders)
	}
	if working {
		rows = orders
	}
	return book, rows, nil
}

// fail reports an error that stopped the engine's background work.
func (e *Engine) fail(err error) {
	e.failed.Store(true)
	select {
	case e.runErr <- err:
	default:
	}
}

// Done is closed when the loop has ended (Close, or a failure to start
// it): what lives beside the engine ends with it.
func (e *Engine) Done() <-chan struct{} { return e.done }

// Err delivers an error that stopped the engine's background work (the
// poller met bad credentials, say).
func (e *Engine) Err() <-chan error { return e.runErr }

// Close stops the loop, the workers and the poller. Unfinished workflows
// stay in the store and resume at the next Start.
func (e *Engine) Close() {
	if e.cancel != nil {
		e.cancel()
	}
	e.wg.Wait()
	e.streamOnce.Do(func() {}) // none starts after this
	if e.stream != nil {
		e.stream.Close()
	}
}

// ask sends a request to the loop and waits for its reply.
func ask[T any](ctx context.Context, e *Engine, build func(reply chan T) event) (T, error) {
	reply := make(chan T, 1)
	e.inbox.push(build(reply))
	return await(ctx, e, reply)
}

// await waits for ch to deliver (or be closed), unless ctx ends, the engine
// stops, or its background work failed first.
func await[T any](ctx context.Context, e *Engine, ch <-chan T) (T, error) {
	var zero T
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-e.done:
		return zero, ErrStopped
	case err := <-e.runErr:
		e.fail(err)
		return zero, err
	}
}

// Handle follows one workflow.
type Handle struct {
	ID string
	e  *Engine
}

// Wait blocks until the workflow ends and returns its final record.
func (h *Handle) Wait(ctx context.Context) (*Workflow, error) { return h.e.Wait(ctx, h.ID) }

// Wait blocks until workflow id ends and returns its final record.
func (e *Engine) Wait(ctx context.Context, id string) (*Workflow, error) {
	ch, err := ask(ctx, e, func(r chan chan *Workflow) event { return waitEv{id: id, reply: r} })
	if err != nil {
		return nil, err
	}
	if ch == nil {
		return e.store.Get(ctx, id) // not open here: the store has its end
	}
	return await(ctx, e, ch)
}

// Active returns copies of the unfinished workflows.
func (e *Engine) Active() []Workflow {
	out, _ := ask(context.Background(), e, func(r chan []Workflow) event { return activeEv{reply: r} })
	return out
}

// Inventory returns the latest inventory read.
func (e *Engine) Inventory() []brokerclient.InventoryRow {
	out, _ := ask(context.Background(), e, func(r chan []brokerclient.InventoryRow) event { return inventoryAskEv{reply: r} })
	return out
}

// Subscribe delivers every state change from now until ctx ends (first, a
// QueuedUntil update for each locate already waiting in the quote queue);
// the channel is closed then, or after the last update once the engine
// stops. It returns once the subscription is in place, so a read of the
// store made after it misses no later change. The subscriber has a queue
// of its own (see feed), so a stuck reader never stalls the engine, and
// gets every update, in order, none skipped or merged; one that leaves
// Config.Backlog updates unread gets, after those, one update with
// FellBehind set, and the channel closes: the updates it read are exact
// up to there, and the rest is in the store.
func (e *Engine) Subscribe(ctx context.Context) <-chan Update {
	f := newFeed(ctx, e.cfg.Backlog)
	if _, err := ask(ctx, e, func(r chan struct{}) event { return subscribeEv{feed: f, reply: r} }); err != nil {
		f.close()
	}
	return f.ch
}

// Running reports whether the loop runs and no background work stopped on
// an error; unlike Err, asking takes nothing away from whoever waits on it.
func (e *Engine) Running() bool {
	if e.ctx == nil || e.failed.Load() {
		return false
	}
	select {
	case <-e.done:
		return false
	default:
		return true
	}
}

// Queued is how many locates wait for their turn to quote: behind the
// one open quote per symbol, the same-symbol spacing or the quote route's
// one per second.
func (e *Engine) Queued() int {
	n, _ := ask(context.Background(), e, func(r chan int) event { return queuedAskEv{reply: r} })
	return n
}

// Detail is the account Start checked the environment on: its detail as
// read, or its row of the key pair's list (Config.Listed); nil when it
// checked none (Config.Env was not set, or Config.EnvChecked).
func (e *Engine) Detail() *brokerclient.Account { return e.detail }

// Idle reports whether the loop has nothing in hand: every event handed
// to it (a history read's rows, a worker's result, a caller's request)
// handled. A driver of virtual time asks it before it moves the clock: a
// jump while the loop still holds an offer's row would put the decision
// past the offer's window, which real time never does.
func (e *Engine) Idle() bool {
	select {
	case <-e.done:
		return true // stopped: nothing will be handled any more
	default:
		return e.inbox.inHand.Load() == 0
	}
}

// LastPoll is when the poller last read history successfully.
func (e *Engine) LastPoll() time.Time { return e.poll.LastPoll() }

// PollFailing is since when the poller's reads of the broker have been
// failing, and the last failure (zero while they succeed).
func (e *Engine) PollFailing() (time.Time, error) { return e.poll.Failing() }

// Polls reports the poller's completed history reads (tests, diagnostics).
func (e *Engine) Polls() int { return e.poll.Polls() }
