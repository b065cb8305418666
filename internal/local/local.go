package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// askerGrace is how long an offer waits for its asker to come back (a
// follower reconnecting) before it is declined because the asker went
// away.
const askerGrace = 2 * time.Second

// leftKept is how long a caller's departure is remembered: its requests
// still open then are declined at once when they ask. A departure older
// than that is forgotten, so a daemon's memory of callers is the last
// hour's, not every follower it ever served; a question for a caller
// forgotten waits for it to listen again, to the question's deadline, like
// one for a caller not yet listening.
const leftKept = time.Hour

// Account is the account API's one implementation, on the engine of the
// process that owns the account: input validation, the live/paper guard,
// the cost policy, the questions put to callers, and the errors' kinds all
// live here. Every caller reaches it through As: in this process, or from
// another one through Client over the owner's socket or TLS (whose server
// side calls As for each request), so no rule exists twice.
type Account struct {
	eng      *engine.Engine
	st       *store.Store
	client   *brokerclient.Client
	clk      clock.Clock
	log      *slog.Logger
	account  string
	env      brokerclient.Env
	lease    func() locator.Lease
	held     func() bool
	gate     brokerclient.Gate
	notifier *notify.Notifier

	mu sync.Mutex
	// askers answer the questions of each caller's requests, by caller id;
	// changed is closed (and replaced) whenever one comes or goes.
	askers  map[string]*asker
	left    map[string]time.Time // when a caller's asker went away, for leftKept
	changed chan struct{}
	// subscribe is the engine's Subscribe: what put watches while a
	// question on an offer is out.
	subscribe func(context.Context) <-chan engine.Update
	// waiting counts the questions put to callers and not yet answered
	// (drivers of virtual time hold it still on it: Asking).
	waiting int

	day dayWatch // Today's
	// offers is told of each offer that starts waiting on a person
	// (NotifyOffers); nil: nobody.
	offers func(account.Question)
}

// Config wires an Account to a started engine.
type Config struct {
	Engine  *engine.Engine
	Store   *store.Store
	Client  *brokerclient.Client
	Clock   clock.Clock
	Logger  *slog.Logger
	Account string
	// Env is the account's kind (live or paper), as checked when the
	// engine started; empty makes New read it.
	Env brokerclient.Env
	// Lease is the owner's lease and Held whether it still holds it, for
	// Status.
	Lease func() locator.Lease
	Held  func() bool
	// Gate, when set, is asked before each broker request made for a
	// caller, as before the engine's own (the owner's, service.Owner's maySend).
	Gate brokerclient.Gate
	// Notifier is told of failed job runs and fee problems (nil: nobody).
	Notifier *notify.Notifier
}

// New serves the account API from a started engine until ctx ends.
func New(ctx context.Context, cfg Config) (*Account, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Lease == nil {
		cfg.Lease = func() locator.Lease { return locator.Lease{Account: cfg.Account} }
	}
	if cfg.Held == nil {
		cfg.Held = func() bool { return true }
	}
	env := cfg.Env
	if d := cfg.Engine.Detail(); d != nil {
		env = brokerclient.EnvOf(d.AccountType)
	}
	if env == "" {
		acct, _, err := cfg.Client.Accounts.Get(ctx, cfg.Account)
		if err != nil {
			return nil, fmt.Errorf("account %s: %w", cfg.Account, err)
		}
		env = brokerclient.EnvOf(acct.AccountType)
	}
	l := &Account{eng: cfg.Engine, st: cfg.Store, client: cfg.Client, clk: cfg.Clock, log: cfg.Logger, account: cfg.Account, gate: cfg.Gate,
		env: env, lease: cfg.Lease, held: cfg.Held, notifier: cfg.Notifier,
		askers: map[string]*asker{}, left: map[string]time.Time{},
		changed: make(chan struct{}), subscribe: cfg.Engine.Subscribe}
	return l, nil
}

// As is the account as caller c sees it: what c asks for is recorded as
// c's and checked against c's environment; c's questions go to whoever
// listens for c.ID (Listen), and c.Ask only says whether c can answer.
func (l *Account) As(c account.Caller) account.Account {
	if c.ID == "" {
		c.ID = uuid.NewString()
	}
	return &session{l: l, c: c}
}

// session is the account as one caller sees it.
type session struct {
	l *Account
	c account.Caller
}

var _ account.Account = (*session)(nil)

// guard refuses a write when the caller means the other environment than
// the account's (spec "API keys" rule 5): nothing is sent.
func (s *session) guard() error {
	if s.c.Env == "" || s.c.Env == s.l.env {
		return nil
	}
	return envRefused(s.l.account, s.l.env, s.c.Env)
}

// envRefused is the one refusal of a write whose caller selected another
// environment than the account's, in the same words whether the owner's
// guard refuses it or this process's own start-up check does.
func envRefused(acct string, is, selected brokerclient.Env) *account.Error {
	return account.Errorf(account.KindRefused, fmt.Sprintf("account %s is %s, but %s was selected; writes are blocked; nothing was sent", acct, is, selected))
}

// asker is who answers the offers of a request that asks.
func (s *session) asker(asks bool) func(context.Context, workflow.Offer) bool {
	if !asks || s.c.Ask == nil {
		return nil
	}
	return func(ctx context.Context, o workflow.Offer) bool {
		q := account.Question{Offer: &o}
		if w, err := s.l.resolve(ctx, o.WorkflowID); err == nil {
			if sides := workflow.Sides(w); len(sides) > 1 {
				q.Sides = sides
			}
		}
		return s.l.ask(ctx, s.c.ID, q)
	}
}

func (s *session) Locate(ctx context.Context, req account.LocateRequest) (*account.LocateResult, error) {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return nil, err
	}
	switch {
	case len(req.Items) == 0:
		return nil, account.Errorf(account.KindInput, "nothing to locate")
	case req.Ask && len(req.Items) > 1:
		return nil, account.Errorf(account.KindInput, "a batch's offers come faster than anyone can weigh them: its policy decides (set a cap or auto-accept)")
	}
	ask := s.asker(req.Ask)
	reqs := make([]engine.Request, len(req.Items))
	for i, it := range req.Items {
		reqs[i] = engine.Request{ID: it.ID, Symbol: it.Symbol, Quantity: it.Quantity, Policy: it.Policy, Ask: ask, Asker: s.c.Name}
		if err := reqs[i].Validate(ask != nil); err != nil {
			if len(reqs) > 1 {
				err = fmt.Errorf("%s: %w", it.Symbol, err)
			}
			return nil, kinded(err)
		}
	}
	hs, err := s.l.eng.LocateAll(ctx, reqs)
	return started(reqs, hs, err)
}

func (s *session) Quote(ctx context.Context, req account.QuoteRequest) (*account.LocateResult, error) {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return nil, err
	}
	if len(req.Items) == 0 {
		return nil, account.Errorf(account.KindInput, "nothing to price")
	}
	reqs := make([]engine.Request, len(req.Items))
	for i, it := range req.Items {
		reqs[i] = engine.Request{ID: it.ID, Symbol: it.Symbol, Quantity: it.Quantity, Asker: s.c.Name}
	}
	hs, err := s.l.eng.PriceCheckAll(ctx, reqs)
	return started(reqs, hs, err)
}

// started is a batch's result: each request's workflow, or why it was not
// started (err a *engine.BatchError); any other error refuses the whole
// batch.
func started(reqs []engine.Request, hs []*engine.Handle, err error) (*account.LocateResult, error) {
	var batch *engine.BatchError
	switch {
	case errors.Is(err, engine.ErrStopped):
		// A batch cut short by its owner going away is handed whole to the
		// next owner: the ids of what was started here are not started
		// twice there.
		return nil, kinded(engine.ErrStopped)
	case err != nil && !errors.As(err, &batch):
		return nil, kinded(err)
	}
	res := &account.LocateResult{Started: make([]account.Started, len(reqs))}
	for i, r := range reqs {
		res.Started[i].Symbol = r.Symbol
		if i < len(hs) && hs[i] != nil {
			res.Started[i].ID = hs[i].ID
		} else if batch != nil && batch.Errs[i] != nil {
			res.Started[i].Refused = Classify(batch.Errs[i])
		}
	}
	return res, nil
}

func (s *session) CreditBack(ctx context.Context, req account.CreditBackRequest) (*account.CreditBackResult, error) {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return nil, err
	}
	if req.Unused {
		return s.creditUnused(ctx, req)
	}
	if req.Confirm {
		return nil, account.Errorf(account.KindInput, "a credit-back of a quantity is confirmed by its caller: confirm only the unused shares")
	}
	h, err := s.l.eng.CreditBack(ctx, engine.CreditBackRequest{ID: req.ID, Symbol: req.Symbol, Shares: req.Quantity, Type: req.Type, Force: req.Force})
	if err != nil {
		return nil, kinded(err)
	}
	c := locator.Credit{Symbol: req.Symbol, Type: req.Type, Shares: req.Quantity}
	return &account.CreditBackResult{Started: []account.CreditStarted{{ID: h.ID, Credit: c}}}, nil
}

func (s *session) Short(ctx context.Context, req account.ShortRequest) (*account.ShortResult, error) {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return nil, err
	}
	by := engine.ShortAnswers{Ask: s.asker(req.Ask), Asker: s.c.Name}
	if by.Ask == nil && !req.Policy.Decides() {
		return nil, account.Errorf(account.KindInput, "the locate's offer would need a person's answer and nobody can give one here: set --max-price or --yes; nothing was sent")
	}
	if req.Confirm {
		if s.c.Ask == nil {
			return nil, account.Errorf(account.KindInput, "the order needs a confirmation and nobody can give one here: pass --yes; nothing was sent")
		}
		by.Confirm = func(ctx context.Context, o engine.Order) bool {
			return s.l.ask(ctx, s.c.ID, account.Question{Order: &o})
		}
	}
	res, err := s.l.eng.Short(ctx, req, by)
	return res, kinded(err)
}

func (s *session) PlaceOrder(ctx context.Context, req account.PlaceOrderRequest) (*workflow.Order, error) {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return nil, err
	}
	o := req.Order
	if o.ClientOrderID == "" {
		o.ClientOrderID = workflow.NewOrderID()
	}
	if err := workflow.ValidateID(o.ClientOrderID); err != nil {
		return nil, kinded(err)
	}
	if o.Account == "" {
		o.Account = s.l.account
	}
	if _, err := s.l.st.GetOrder(ctx, o.ClientOrderID); err == nil {
		got, err := s.l.eng.WaitOrder(ctx, o.ClientOrderID, true) // sent before: follow it
		return got, kinded(err)
	}
	got, err := s.l.eng.PlaceOrder(ctx, &o, req.Guard)
	return got, kinded(err)
}

func (s *session) CancelOrder(ctx context.Context, req account.CancelOrderRequest) (*workflow.Order, error) {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return nil, err
	}
	o, err := s.l.eng.CancelOrder(ctx, req.ClientOrderID)
	return o, kinded(err)
}

func (s *session) Answer(ctx context.Context, req account.AnswerRequest) error {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return err
	}
	w, err := s.l.resolve(ctx, req.ID)
	if err != nil {
		return err
	}
	if err := s.l.useLink(ctx, w, req); err != nil {
		return err
	}
	if w.State != states.Offered {
		return account.Errorf(account.KindNotOpen, fmt.Sprintf("%s is %s: no offer waits on it", w.ID, w.State))
	}
	in := engine.Answer{Accept: req.Accept}
	if req.Offer != "" || !req.Price.IsZero() {
		// The offer answered: the one Choose takes, or, for a yes, either
		// side of a pair the policy allows (the person chose it).
		o, _, _ := workflow.Choose(w)
		if sides := workflow.Sides(w); req.Accept && req.Offer != "" && len(sides) > 1 {
			if i := slices.IndexFunc(sides, func(s workflow.Offer) bool { return s.QuoteReqID == req.Offer }); i >= 0 {
				o, in.Side = &sides[i], req.Offer
			}
		}
		if o == nil || (req.Offer != "" && o.QuoteReqID != req.Offer) || (!req.Price.IsZero() && !o.PriceAnswers(req.Price)) {
			return account.Errorf(account.KindChanged, fmt.Sprintf("the offer waiting on %s is not the one answered (%s at %s); look again; nothing was sent",
				w.ID, req.Offer, req.Price.StringFixed(4)))
		}
	}
	if !req.Accept {
		in.By, in.Reason = workflow.CausePerson, "with "+orDefault(req.Via, "another process")
	}
	return kinded(s.l.eng.Answer(ctx, w.ID, in))
}

func (s *session) Cancel(ctx context.Context, req account.CancelRequest) error {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return err
	}
	w, err := s.l.resolve(ctx, req.ID)
	if err != nil {
		return err
	}
	in := workflow.CancelAsked{By: workflow.CausePerson, Reason: "with " + orDefault(req.Via, "another process")}
	if req.Interrupt {
		in = workflow.CancelAsked{By: workflow.CauseInterrupt, Reason: "interrupted: " + s.c.Name + " withdrew it"}
	}
	return kinded(s.l.eng.Cancel(ctx, w.ID, in))
}

func (s *session) Follow(ctx context.Context, req account.FollowRequest, on func(account.Update)) (*workflow.Workflow, error) {
	ctx = s.l.gated(ctx)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	updates := s.l.eng.Subscribe(ctx) // before the read: no change slips between
	w, err := s.l.resolve(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	// read is the workflow's version the store was read at, logged how
	// many changes its log holds up to there plus those shown since:
	// where a subscription that fell behind picks up again from the log.
	var read, logged int64
	var shown int64 // the version the changes shown from the log lead to
	show := on
	if !req.FromStart || on == nil {
		show = nil
	}
	if w, logged, err = s.l.replay(ctx, w.ID, 0, show); err != nil {
		return nil, kinded(err)
	}
	read = w.Version
	if show != nil {
		shown = w.Version
	}
	for !w.Terminal() {
		u, ok := <-updates // closed when ctx ends or the engine stops
		if !ok {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, account.Errorf(account.KindOwnerGone, "the owner stopped")
		}
		if u.FellBehind {
			// This follower's updates are exact up to here: it takes
			// the changes logged since from the store, on a new
			// subscription made before that read.
			updates = s.l.eng.Subscribe(ctx)
			var n int64
			if w, n, err = s.l.replay(ctx, w.ID, logged, on); err != nil {
				return nil, kinded(err)
			}
			logged, read, shown = n, w.Version, w.Version
			continue
		}
		if u.Workflow == nil || u.Workflow.ID != w.ID {
			continue
		}
		if u.Workflow.Version > read && u.Event != "" {
			logged++
		}
		if u.QueuedUntil.IsZero() && u.Workflow.Version <= shown {
			continue
		}
		if on != nil {
			on(u)
		}
		w = u.Workflow
	}
	return w, nil
}

func (s *session) Subscribe(ctx context.Context) (<-chan account.Update, error) {
	return s.l.eng.Subscribe(s.l.gated(ctx)), nil
}

func (s *session) RunJob(ctx context.Context, req account.JobRequest) (*account.JobResult, error) {
	ctx = s.l.gated(ctx)
	if err := s.guard(); err != nil {
		return nil, err
	}
	cfg, err := jobs.ParseConfig(req.Config)
	if err != nil {
		return nil, account.Errorf(account.KindInput, "config: "+err.Error())
	}
	j, err := cfg.Job(req.Job)
	if err != nil {
		return nil, account.Errorf(account.KindInput, err.Error())
	}
	run, err := s.l.Runner(s.c.Name+" (job "+j.Name+")", nil).RunOnce(ctx, j, req.Grace)
	if run == nil {
		return nil, kinded(err)
	}
	res := &account.JobResult{Run: run}
	var f *jobs.Failure
	switch {
	case errors.As(err, &f):
		res.Failure = f
	case err != nil:
		res.Failure = &account.JobFailure{Detail: err.Error()}
	}
	return res, nil
}

func (s *session) Status(ctx context.Context, req account.StatusRequest) (*account.Status, error) {
	ctx = s.l.gated(ctx)
	for _, sym := range req.Symbols {
		if err := brokercode.ValidateSymbol(sym); err != nil {
			return nil, kinded(err)
		}
	}
	if req.SettleOrders {
		if err := s.l.eng.OrdersSettled(ctx); err != nil {
			return nil, kinded(err)
		}
	}
	st := &account.Status{Account: s.l.account, Env: s.l.env, Owner: s.l.lease(), Held: s.l.held(), Running: s.l.eng.Running(),
		LastPoll: s.l.eng.LastPoll(), Queued: s.l.eng.Queued(), Open: s.l.eng.Active(), Inventory: s.l.eng.Inventory(),
		Broker: s.l.broker()}
	var err error
	if st.Standbys, err = s.l.st.Standbys(ctx, s.l.account); err != nil {
		return nil, kinded(err)
	}
	if st.Budget, err = s.l.eng.BudgetLeft(ctx); err != nil {
		return nil, kinded(err)
	}
	for _, sym := range req.Symbols {
		sh, err := s.l.shortable(ctx, sym, st.Inventory)
		if err != nil {
			return nil, kinded(err)
		}
		st.Shortable = append(st.Shortable, sh)
	}
	return st, nil
}

func (s *session) Fees(ctx context.Context, req account.FeesRequest) (*account.FeesResult, error) {
	ctx = s.l.gated(ctx)
	if req.Grace < 0 {
		return nil, account.Errorf(account.KindInput, fmt.Sprintf("grace %s: want a duration of zero or more", req.Grace))
	}
	if req.Orders && req.Stored {
		return nil, account.Errorf(account.KindInput, "orders and stored: a stored check reads nothing of the broker, and refreshing the orders reads its order book; ask one")
	}
	if req.Orders {
		if err := s.l.eng.RefreshOrders(ctx); err != nil {
			return nil, kinded(err)
		}
	}
	if req.Stored {
		r, err := ledger.CheckStored(ctx, s.l.st, s.l.account, s.l.clk.Now(), s.l.client.ClockSkew(), req.Window, req.Grace)
		if err != nil {
			return nil, kinded(err)
		}
		return &account.FeesResult{Report: r}, nil
	}
	r, synced, err := ledger.Check(ctx, s.l.client, s.l.st, s.l.account, s.l.clk.Now(), req.Window, req.Grace)
	if err != nil {
		return nil, kinded(err)
	}
	return &account.FeesResult{Report: r, Synced: synced}, nil
}

func (s *session) Today(ctx context.Context, _ account.TodayRequest) (*account.Today, error) {
	ctx = s.l.gated(ctx)
	return s.l.today(ctx)
}

// offersLookBack is how many of a symbol's latest workflows are searched
// for the last offers seen.
const offersLookBack = 100

// shortable is what is known of shorting symbol: the broker's
// easy-to-borrow answer, its rows of inventory, and the offers of its
// latest priced quote in the store.
func (l *Account) shortable(ctx context.Context, symbol string, inventory []brokerclient.InventoryRow) (account.Shortable, error) {
	sh := account.Shortable{Symbol: symbol, Located: []brokerclient.InventoryRow{}, Offers: []workflow.Offer{}}
	etb, _, err := l.client.Orders.EasyToBorrow(ctx, l.account, symbol)
	if err != nil {
		return sh, fmt.Errorf("easy-to-borrow check of %s: %w", symbol, err)
	}
	sh.EasyToBorrow = etb
	for _, r := range inventory {
		if r.Symbol == symbol {
			sh.Located = append(sh.Located, r)
		}
	}
	ws, err := l.st.List(ctx, store.Filter{Account: l.account, Symbol: symbol, Limit: offersLookBack})
	if err != nil {
		return sh, err
	}
	for _, w := range ws { // newest first
		if offers := workflow.Prices(w); states.Quotes(w.Kind) && len(offers) > 0 {
			sh.Offers, sh.OfferedAt, sh.OfferState = offers, w.OfferedAt, w.State
			break
		}
	}
	return sh, nil
}

// Runner runs jobs on this owner's engine through the account API, as a
// caller named name; notifier (nil: nobody) is told of failed runs.
func (l *Account) Runner(name string, notifier *notify.Notifier) *jobs.Runner {
	return &jobs.Runner{Account: l.As(account.Caller{Name: name}), Client: l.client, Store: l.st, Clock: l.clk,
		AccountID: l.account, Logger: l.log, Notifier: notifier}
}

// replay calls on with each change workflow id's log holds, its record as
// that change left it, and returns the record they lead to: read between
// two reads of the log that agree, so that every change is either in the
// log read or saved after the record (a later version).
// replay reads workflow id and its log as of one moment, shows on (when
// set) the changes the log holds past the first from, and returns the
// workflow and how many changes its log holds.
func (l *Account) replay(ctx context.Context, id string, from int64, on func(account.Update)) (*workflow.Workflow, int64, error) {
	log, err := l.st.Transitions(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	var w *workflow.Workflow
	for {
		if w, err = l.st.Get(ctx, id); err != nil {
			return nil, 0, err
		}
		again, err := l.st.Transitions(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		if len(again) == len(log) {
			break
		}
		log = again
	}
	var n int64
	for i, t := range log {
		if t.From == "" {
			continue // its creation
		}
		n++
		if on == nil || n <= from {
			continue
		}
		at := w
		if i < len(log)-1 {
			c := *w
			c.State = t.To
			at = &c
		}
		on(account.Update{Workflow: at, From: t.From, Event: t.Event, Reason: t.Reason})
	}
	return w, n, nil
}

// resolve finds the account's workflow an id names: the id itself, its
// quoteReqID, or a unique prefix of an id (store.Store.Find).
func (l *Account) resolve(ctx context.Context, id string) (*workflow.Workflow, error) {
	if id == "" {
		return nil, account.Errorf(account.KindInput, "no workflow id")
	}
	w, err := l.st.Find(ctx, l.account, id)
	return w, kinded(err)
}

// kinded gives err the kind the account API's callers branch on; the
// caller's own context ending passes through as it is.
func kinded(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return Classify(err)
}

// Asking counts the questions waiting on a person now (offers to take,
// orders to confirm): a person takes no virtual time to answer, so a
// driver of virtual time holds it still while one waits.
func (l *Account) Asking() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}

// Classify is err as an *account.Error, of the kind the account API's
// callers branch on (a broker's refusal of the input is KindInput, an
// ended workflow KindNotOpen, ...).
func Classify(err error) *account.Error {
	var ae *account.Error
	var ambiguous *store.AmbiguousError
	var env *brokerclient.EnvMismatchError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &env):
		return envRefused(env.AccountID, env.Got, env.Want)
	case errors.As(err, &ambiguous):
		return account.Errorf(account.KindInput, err.Error())
	case errors.Is(err, brokercode.ErrInput):
		return account.Errorf(account.KindInput, err.Error())
	case errors.Is(err, workflow.ErrNotOpen), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrOrderNotFound):
		return account.Errorf(account.KindNotOpen, err.Error())
	case errors.Is(err, engine.ErrSizing):
		return account.Errorf(account.KindSizing, err.Error())
	case errors.Is(err, brokerclient.ErrEnvMismatch), errors.Is(err, brokerclient.ErrAccountNotActive):
		return account.Errorf(account.KindRefused, err.Error()+"; nothing was sent")
	case errors.Is(err, engine.ErrStopped):
		return account.Errorf(account.KindOwnerGone, err.Error())
	}
	return account.AsError(err)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SyncLedger copies the account's cash ledger of today, on the broker's
// calendar, into the store (ledger.Sync), and reconciles nothing: what a
// daemon owner does by itself every service.LedgerSyncEvery, so that what
// reconciles the stored ledger alone (Fees with Stored: the dashboard's
// fees panel) is current. One read of the broker: Fees would read the
// account's detail as well, for its totalLocateCosts, into a report
// nobody reads, a quarter of an idle account's broker reads.
func (l *Account) SyncLedger(ctx context.Context) (locator.SyncResult, error) {
	today := ledger.TradeDate(l.clk.Now().Add(l.client.ClockSkew()))
	return ledger.Sync(l.gated(ctx), l.client, l.st, l.account, today, today.AddDate(0, 0, 1))
}

// gated is ctx with the owner's gate, if any: a broker request made for a
// caller leaves only while the owner trusts its lease, as the engine's.
func (l *Account) gated(ctx context.Context) context.Context {
	if l.gate == nil {
		return ctx
	}
	return brokerclient.WithGate(ctx, l.gate)
}
