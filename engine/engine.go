// Package engine runs locator's workflows: it quotes only the shortfall of a
// request, queues quotes so the broker's one-open-quote-per-symbol and
// 30-second same-symbol rules are never provoked, accepts an offer within the
// cost policy inside its 30-second window (choosing the right side of a Reg
// SHO pair), declines the rest explicitly, credits back unused shares, and
// after a crash reconciles every unfinished workflow against the broker's
// history before sending anything. Decisions are checked by the states
// machines and persisted by the store with compare-and-set before any write
// leaves (write-ahead intent).
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/poller"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
)

// Config wires an Engine.
type Config struct {
	Client  *brokerclient.Client
	Store   *store.Store
	Clock   clock.Clock
	Logger  *slog.Logger
	Account string
	// Env, when set, is checked against the account's accountType at Start,
	// together with the account being Active (spec "API keys" rule 5).
	Env brokerclient.Env
	// Ask is consulted for an offer within policy when the request does not
	// auto-accept. It must answer before ctx's deadline (the last moment an
	// accept can still land). Nil means nobody can answer: such offers are
	// declined.
	Ask func(ctx context.Context, o Offer) bool
	// OnUpdate receives every state change, for progress displays.
	OnUpdate func(Update)
	// Cadence overrides the poller's spacing (tests).
	Cadence poller.Cadence
	// AcceptMargin is the least time that must remain in the offer window for
	// an accept to be sent (default 2 s).
	AcceptMargin time.Duration
	// OfferWindow is the broker's offer validity (default 30 s).
	OfferWindow time.Duration
	// QuoteSpacing is the broker's same-symbol quote spacing (default 30 s).
	QuoteSpacing time.Duration
	// SettleGrace is how long after a quote or sell left the engine waits for
	// its history row before giving up on it (default 20 s); it is never
	// re-sent.
	SettleGrace time.Duration
}

// Request is a locate request with "ensure" semantics: have at least
// Quantity located shares of Symbol.
type Request struct {
	Symbol   string
	Quantity int64
	Policy   store.Policy
}

// Offer is an offer the engine is considering.
type Offer struct {
	WorkflowID string
	Symbol     string
	QuoteReqID string // the leg: id, or id.SU for the SingleUse side
	LocateType int
	Price      decimal.Decimal
	Shares     int64
	Total      decimal.Decimal
	ExpiresAt  time.Time
}

// Update is one state change of a workflow.
type Update struct {
	Workflow store.Workflow
	From     states.State
	Event    states.Event
	// Reason explains this change (empty when the change carries none).
	Reason string
	// Offer is set when the change is an offer arriving.
	Offer *Offer
}

// Engine runs the workflows of one account.
type Engine struct {
	cfg    Config
	client *brokerclient.Client
	store  *store.Store
	clock  clock.Clock
	log    *slog.Logger
	poll   *poller.Poller

	mu        sync.Mutex
	active    map[string]*store.Workflow // non-terminal, by workflow id
	byQuote   map[string]string          // quoteReqID → workflow id
	queue     []string                   // locate workflows waiting to quote, FIFO
	lastQuote map[string]time.Time       // symbol → when its last quote left
	lastAny   time.Time                  // when the last quote left, any symbol
	deciding  map[string]bool            // offers being decided (asked), by workflow id
	declining map[string]string          // offers whose cancel is in flight → the reason
	waiters   map[string][]chan *store.Workflow
	idle      []chan struct{} // Resume waiters
	inventory []brokerclient.InventoryRow

	wakeQ  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	runErr chan error
}

// Errors the engine returns.
var (
	// ErrInput: the request is malformed; nothing was sent.
	ErrInput = errors.New("invalid request")
	// ErrNotOpen: the workflow has ended or is unknown.
	ErrNotOpen = errors.New("workflow is not open")
)

// New validates cfg and returns an engine; Start runs it.
func New(cfg Config) (*Engine, error) {
	if cfg.Client == nil || cfg.Store == nil || cfg.Account == "" {
		return nil, errors.New("engine: client, store and account are required")
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
	def(&cfg.AcceptMargin, 2*time.Second)
	def(&cfg.OfferWindow, 30*time.Second)
	def(&cfg.QuoteSpacing, 30*time.Second)
	def(&cfg.SettleGrace, 20*time.Second)
	e := &Engine{
		cfg: cfg, client: cfg.Client, store: cfg.Store, clock: cfg.Clock, log: cfg.Logger,
		active: map[string]*store.Workflow{}, byQuote: map[string]string{}, lastQuote: map[string]time.Time{},
		deciding: map[string]bool{}, declining: map[string]string{}, waiters: map[string][]chan *store.Workflow{},
		wakeQ: make(chan struct{}, 1), runErr: make(chan error, 2),
	}
	e.poll = poller.New(poller.Config{
		Account: cfg.Account, Source: poller.ClientSource(cfg.Client), Clock: cfg.Clock, Logger: cfg.Logger,
		Cadence: cfg.Cadence, OnInventory: e.onInventory, AfterPoll: e.checkTimers,
	})
	return e, nil
}

// Start checks the account, loads every unfinished workflow, reconciles them
// against the broker's history (one read, before anything is sent), then
// starts the poller and the quote dispatcher. It returns once reconciled.
func (e *Engine) Start(ctx context.Context) error {
	if e.cfg.Env != "" {
		if _, err := e.client.GuardWrites(ctx, e.cfg.Account, e.cfg.Env); err != nil {
			return err
		}
	}
	open, err := e.store.List(ctx, store.Filter{Account: e.cfg.Account, Open: true})
	if err != nil {
		return err
	}
	recent, err := e.store.List(ctx, store.Filter{Account: e.cfg.Account, Kind: states.Locate, Since: e.clock.Now().Add(-2 * e.cfg.QuoteSpacing)})
	if err != nil {
		return err
	}
	e.mu.Lock()
	for _, w := range recent {
		if w.SentAt.After(e.lastQuote[w.Symbol]) {
			e.lastQuote[w.Symbol] = w.SentAt
		}
		if w.SentAt.After(e.lastAny) {
			e.lastAny = w.SentAt
		}
	}
	for _, w := range open {
		e.track(w)
		if w.State == states.Requested && w.Kind == states.Locate {
			e.queue = append(e.queue, w.ID)
		}
	}
	e.mu.Unlock()
	for _, w := range open {
		if w.State != states.Requested {
			e.poll.Watch(w.QuoteReqID, e.onRows)
		}
	}
	// Reconcile before sending anything.
	if len(open) > 0 {
		if err := e.poll.PollHistory(ctx); err != nil {
			return fmt.Errorf("engine: reconcile history: %w", err)
		}
	}
	if _, err := e.readInventory(ctx); err != nil {
		return fmt.Errorf("engine: inventory: %w", err)
	}
	e.ctx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	// Resume what each recovered workflow was doing.
	for _, w := range e.snapshot() {
		e.resume(w)
	}
	e.updateHot()
	e.wg.Add(2)
	go func() {
		defer e.wg.Done()
		if err := e.poll.Run(e.ctx); err != nil && !errors.Is(err, context.Canceled) {
			e.log.Error("poller stopped", "err", err)
			e.runErr <- err
		}
	}()
	go func() {
		defer e.wg.Done()
		e.dispatch(e.ctx)
	}()
	return nil
}

// Err delivers an error that stopped the engine's background work (the
// poller met bad credentials, say).
func (e *Engine) Err() <-chan error { return e.runErr }

// Close stops the poller and the dispatcher. Unfinished workflows stay in
// the store and resume at the next Start.
func (e *Engine) Close() {
	if e.cancel != nil {
		e.cancel()
	}
	e.wg.Wait()
}

// resume re-drives a recovered workflow from its persisted state.
func (e *Engine) resume(w *store.Workflow) {
	switch w.State {
	case states.Offered:
		go e.decide(w.ID)
	case states.Accepting:
		if l, ok := w.Legs[w.AcceptedID]; ok && l.Status == 65 && e.clock.Now().Before(w.ExpiresAt) {
			// An accept is safe to repeat (spec "Short locates" rule 3).
			go e.sendAccept(w)
		}
	case states.Canceling:
		go e.sendCancel(w)
	case states.Requested:
		if w.Kind == states.CreditBack {
			go e.sendSell(w.ID)
		}
	}
}

// Handle follows one workflow.
type Handle struct {
	ID string
	e  *Engine
}

// Wait blocks until the workflow ends and returns its final record.
func (h *Handle) Wait(ctx context.Context) (*store.Workflow, error) {
	return h.e.Wait(ctx, h.ID)
}

// Wait blocks until workflow id ends and returns its final record.
func (e *Engine) Wait(ctx context.Context, id string) (*store.Workflow, error) {
	ch := make(chan *store.Workflow, 1)
	e.mu.Lock()
	if _, ok := e.active[id]; !ok {
		e.mu.Unlock()
		return e.store.Get(ctx, id)
	}
	e.waiters[id] = append(e.waiters[id], ch)
	e.mu.Unlock()
	select {
	case w := <-ch:
		return w, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case err := <-e.runErr:
		e.runErr <- err
		return nil, err
	}
}

// Resume waits until every unfinished workflow has ended.
func (e *Engine) Resume(ctx context.Context) error {
	ch := make(chan struct{})
	e.mu.Lock()
	if len(e.active) == 0 {
		e.mu.Unlock()
		return nil
	}
	e.idle = append(e.idle, ch)
	e.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case err := <-e.runErr:
		e.runErr <- err
		return err
	}
}

// Active returns copies of the unfinished workflows.
func (e *Engine) Active() []store.Workflow {
	var out []store.Workflow
	for _, w := range e.snapshot() {
		out = append(out, *w)
	}
	return out
}

// Polls reports the poller's completed history reads (tests, diagnostics).
func (e *Engine) Polls() int { return e.poll.Polls() }

func (e *Engine) snapshot() []*store.Workflow {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*store.Workflow, 0, len(e.active))
	for _, w := range e.active {
		out = append(out, w)
	}
	return out
}

// track registers a non-terminal workflow; e.mu held.
func (e *Engine) track(w *store.Workflow) {
	e.active[w.ID] = w
	e.byQuote[w.QuoteReqID] = w.ID
}

// apply persists a change of w with compare-and-set on its state and
// version, then updates the in-memory view and tells whoever listens.
func (e *Engine) apply(w *store.Workflow, c store.Change, offer *Offer) (*store.Workflow, error) {
	c.From, c.Version = w.State, w.Version
	saved, err := e.store.Apply(context.WithoutCancel(e.ctxOrBackground()), w.ID, c)
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			// Someone else moved it (another process): take the stored truth.
			if cur, gerr := e.store.Get(context.Background(), w.ID); gerr == nil {
				e.refresh(cur)
			}
		}
		return nil, err
	}
	if c.To != c.From || offer != nil {
		e.log.Info("workflow", "id", saved.ID, "symbol", saved.Symbol, "from", c.From, "to", c.To, "event", c.Event, "reason", c.Reason)
		if e.cfg.OnUpdate != nil {
			// Before waiters are released, so a progress display has shown
			// the last change when Wait returns.
			e.cfg.OnUpdate(Update{Workflow: *saved, From: c.From, Event: c.Event, Reason: c.Reason, Offer: offer})
		}
	}
	e.refresh(saved)
	return saved, nil
}

// refresh installs the latest record of a workflow and settles the waiters
// of one that ended.
func (e *Engine) refresh(w *store.Workflow) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !w.Terminal() {
		e.track(w)
		return
	}
	delete(e.active, w.ID)
	delete(e.deciding, w.ID)
	delete(e.declining, w.ID)
	for _, ch := range e.waiters[w.ID] {
		ch <- w
	}
	delete(e.waiters, w.ID)
	e.poll.Unwatch(w.QuoteReqID)
	if len(e.active) == 0 {
		for _, ch := range e.idle {
			close(ch)
		}
		e.idle = nil
	}
	e.wakeDispatcher()
	go e.updateHot()
}

func (e *Engine) ctxOrBackground() context.Context {
	if e.ctx != nil {
		return e.ctx
	}
	return context.Background()
}

// get returns the current record of an active workflow.
func (e *Engine) get(id string) *store.Workflow {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.active[id]
}

// updateHot tightens polling while any sent workflow waits on the broker.
func (e *Engine) updateHot() {
	hot := false
	for _, w := range e.snapshot() {
		if w.State != states.Requested {
			hot = true
			break
		}
	}
	e.poll.SetHot(hot)
}

// newWorkflow builds a workflow record with fresh ids.
func (e *Engine) newWorkflow(kind states.Kind, symbol string, requested int64) *store.Workflow {
	return &store.Workflow{
		ID: "wf-" + uuid.NewString()[:13], Kind: kind, Account: e.cfg.Account, Symbol: symbol,
		Requested: requested, QuoteReqID: uuid.NewString(), State: states.Requested,
	}
}

func rawJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
