package tradingday

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/local"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// eodJob is the jobs file of the EOD job the days run.
var eodJob = []byte(`{"jobs": [{"name": "eod", "kind": "credit-back-unused", "schedule": "@close-15m"}]}`)

// Result is how a day went.
type Result struct {
	Seed uint64
	// Ran is how many operations ran (all of them, or up to the one after
	// which an invariant broke).
	Ran int
	// Trace is a line per operation run: the operation and what came of it.
	Trace []string
	// Violation is the first invariant broken; nil when none was.
	Violation *Violation
}

// Violation is a broken invariant: its name, what the broker or the
// person saw, and the operation after which it was found (index into
// Day.Ops; -1 at the end of the day).
type Violation struct {
	Invariant string
	Detail    string
	Op        int
}

func (v *Violation) Error() string {
	return fmt.Sprintf("invariant %s broken: %s", v.Invariant, v.Detail)
}

// Run runs day on a fresh simulator and a fresh database in a folder of
// its own under dir and
// checks it. An error is a failure to run the day (not a broken
// invariant, which is Result.Violation).
func Run(ctx context.Context, day Day, dir string) (*Result, error) {
	r, err := newRunner(ctx, day, dir)
	if err != nil {
		return nil, err
	}
	defer r.close()
	res := &Result{Seed: day.Seed}
	for i, op := range day.Ops {
		words, err := r.do(ctx, op)
		res.Ran = i + 1
		res.Trace = append(res.Trace, fmt.Sprintf("%3d %s → %s", i, op, words))
		var v *Violation
		if errors.As(err, &v) {
			v.Op = i
			res.Violation = v
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("seed %d op %d (%s): %w", day.Seed, i, op, err)
		}
	}
	if v := r.checkDay(); v != nil {
		v.Op = -1
		res.Violation = v
	}
	return res, nil
}

// runner is one day's world: the simulator on its fake clock, driven as
// virtual time, and the account's owner (engine, store, local.Account),
// which a restart replaces.
type runner struct {
	day      Day
	sim      *brokersim.Sim
	srv      *httptest.Server
	clk      *clock.Fake
	client   *brokerclient.Client // the owner's of the moment
	link     *link                // its link to the broker
	inflight atomic.Int64
	starting atomic.Bool // an owner is starting: no poller sleeps yet
	undrive  func()      // stops clock.Drive moving clk
	callers  int         // callers made, for their ids
	db       string

	st     *store.Store
	eng    *engine.Engine
	local  *local.Account
	cancel context.CancelFunc

	orders *desk // the order and money side (orders.go), made on first use
}

func newRunner(ctx context.Context, day Day, dir string) (*runner, error) {
	clk := clock.NewFake(Start)
	sim, err := brokersim.New(day.Scenario, brokersim.WithClock(clk), brokersim.WithClockSkew(day.Skew), brokersim.WithFaults(brokersim.Faults{RatePushLoss: day.PushLoss}))
	if err != nil {
		return nil, err
	}
	// A database of its own, even when a shrink runs the seed again.
	sub, err := os.MkdirTemp(dir, fmt.Sprintf("day-%d-", day.Seed))
	if err != nil {
		return nil, err
	}
	r := &runner{day: day, sim: sim, clk: clk, srv: httptest.NewServer(sim),
		db: filepath.Join(sub, "locator.db")}
	// While an owner starts, no poller sleeps yet: its client pacing a
	// read is the one timer (1); else the engine's poller and dispatcher
	// sleep (2). Every timer of a day's code is waited on: one fired and
	// not yet received is a goroutine woken and not yet at work.
	r.undrive = clk.Drive(1, func() bool {
		return r.inflight.Load() == 0 && clk.Unreceived() == 0 && (r.starting.Load() || clk.Timers() >= 2)
	})
	if err := r.startOwner(ctx, false); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// startOwner opens the database and starts an engine and the account API
// on it, on a link to the broker of its own, as a process that owns the
// account does (as `locator resume` does after a crash when resume is
// set: every order left unanswered is settled).
func (r *runner) startOwner(ctx context.Context, resume bool) error {
	r.starting.Store(true)
	defer r.starting.Store(false)
	client, err := r.brokerClient()
	if err != nil {
		return err
	}
	r.client = client
	st, err := store.Open(ctx, r.db, r.clk)
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	e, err := engine.New(engine.Config{Client: r.client, Store: st, Clock: r.clk, Account: Account, Env: brokerclient.EnvLive, Logger: log,
		SettleAllOrders: resume})
	if err != nil {
		st.Close()
		return err
	}
	if err := e.Start(ctx); err != nil {
		st.Close()
		return err
	}
	octx, cancel := context.WithCancel(ctx)
	l, err := local.New(octx, local.Config{Engine: e, Store: st, Client: r.client, Clock: r.clk, Logger: log,
		Account: Account, Env: brokerclient.EnvLive})
	if err != nil {
		cancel()
		e.Close()
		st.Close()
		return err
	}
	r.st, r.eng, r.local, r.cancel = st, e, l, cancel
	return nil
}

// brokerClient is a new owner's client of the broker, on a link of its
// own (r.link).
func (r *runner) brokerClient() (*brokerclient.Client, error) {
	key := r.day.Scenario.Keys[0]
	r.link = &link{base: simtest.InFlight(r.srv.Client().Transport, &r.inflight)}
	return brokerclient.NewClient(
		brokerclient.WithBaseURL(r.srv.URL),
		brokerclient.WithCredentials(key.KeyID, key.Secret),
		brokerclient.WithHTTPClient(&http.Client{Transport: r.link}),
		brokerclient.WithClock(r.clk),
		brokerclient.WithRandSeed(r.day.Seed),
	)
}

// stopOwner stops the owner without finishing its workflows: they stay
// in the database for the next owner.
func (r *runner) stopOwner() {
	if r.eng == nil {
		return
	}
	r.cancel()
	r.eng.Close()
	r.st.Close()
	r.eng, r.local = nil, nil
}

func (r *runner) close() {
	r.stopOwner()
	r.undrive()
	r.srv.Close()
}

// sleep waits d of virtual time.
func (r *runner) sleep(ctx context.Context, d time.Duration) error {
	t := r.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// as is the account as a caller named name sees it; ask, when set, is
// the caller's prompt, listening for the questions of its requests on the
// owner of the moment (see local.Account.Listen).
func (r *runner) as(name string, ask func(context.Context, account.Question) bool) account.Account {
	r.callers++
	c := account.Caller{ID: fmt.Sprintf("caller-%d", r.callers), Name: name, Env: brokerclient.EnvLive, Ask: ask}
	if ask != nil {
		r.local.Listen(c.ID, ask)
	}
	return r.local.As(c)
}

// followWait bounds, in wall time, how long a follower may wait for a
// workflow's end: a hang guard, not a verdict on speed. Virtual time
// reaches the end in well under a second of wall time on a quiet machine,
// but it runs only while the whole process is quiet (clock.Drive), and six
// days side by side beside a CI run once took over 30 s: a bound that
// tight made a seed's verdict depend on the machine.
const followWait = 5 * time.Minute

// dayWait bounds a day's wall time, a hang guard like followWait (a day
// of 60 operations takes seconds).
const dayWait = 15 * time.Minute

// recorded says how the owner's database holds workflow id now, for a
// follower-ends verdict: a follower still waiting on a workflow its owner
// recorded final missed the end; one on a workflow still open waited on
// virtual time that ran slowly.
func (r *runner) recorded(id string) string {
	if r.st == nil {
		return "no owner's database"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := r.st.Find(ctx, "", id)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s (final: %t, updated %s of virtual time ago)", w.State, w.Terminal(), r.clk.Now().Sub(w.UpdatedAt).Round(time.Millisecond))
}

// do runs one operation to its end and checks what it can check then.
func (r *runner) do(ctx context.Context, op Op) (string, error) {
	if f, ok := orderOps[op.Kind]; ok {
		return f(r, ctx, op)
	}
	switch op.Kind {
	case OpLocate:
		return r.locate(ctx, op)
	case OpBatch:
		return r.batch(ctx, op)
	case OpQuote:
		return r.quote(ctx, op)
	case OpCreditBack, OpCreditAll:
		return r.creditBack(ctx, op)
	case OpCreditQty:
		return r.creditQuantity(ctx, op)
	case OpEOD:
		return r.eod(ctx)
	case OpRestart:
		return r.restart(ctx, op)
	case OpCrash:
		return r.crash(ctx, op)
	case OpHandover:
		return r.handover(ctx, op)
	case OpFollower:
		return r.follower(ctx, op)
	case OpCancelCall:
		return r.cancelCall(ctx, op)
	case OpEvening:
		return r.evening(ctx, op)
	case OpWait:
		return "waited", r.sleep(ctx, op.Wait)
	case OpNextDay:
		return r.nextDay(ctx)
	}
	return "", fmt.Errorf("unknown operation %q", op.Kind)
}

// batch locates the operation's symbols in one request, auto-accepting
// under its price cap, and follows each workflow to its end.
func (r *runner) batch(ctx context.Context, op Op) (string, error) {
	pol := workflow.Policy{AutoAccept: true, MaxPrice: op.MaxPrice, AllowSingleUse: op.SingleUse}
	req := account.LocateRequest{}
	for _, s := range op.Symbols {
		req.Items = append(req.Items, account.LocateItem{Symbol: s, Quantity: op.Quantity, Policy: pol})
	}
	a := r.as("batch", nil)
	res, err := a.Locate(ctx, req)
	if err != nil {
		return "", err
	}
	return r.followAll(ctx, a, res.Started, nil)
}

// quote asks a price for one symbol and follows the quote to its end.
func (r *runner) quote(ctx context.Context, op Op) (string, error) {
	a := r.as("quote", nil)
	res, err := a.Quote(ctx, account.QuoteRequest{Items: []account.QuoteItem{{Symbol: op.Symbols[0], Quantity: op.Quantity}}})
	if err != nil {
		return "", err
	}
	return r.followAll(ctx, a, res.Started, nil)
}

// creditBack credits back the unused shares of the operation's symbol, or
// of every symbol without one, follows each credit-back to its end, and
// checks the broker then shows nothing left it may credit back.
func (r *runner) creditBack(ctx context.Context, op Op) (string, error) {
	sym := ""
	if len(op.Symbols) > 0 {
		sym = op.Symbols[0]
	}
	a := r.as("credit-back", nil)
	res, err := a.CreditBack(ctx, account.CreditBackRequest{Symbol: sym, Unused: true})
	if err != nil {
		return "", err
	}
	words, err := r.followAll(ctx, a, res.Workflows(), nil)
	for _, sk := range res.Skipped {
		words += fmt.Sprintf("[skipped %+v] ", sk)
	}
	if err != nil {
		return words, err
	}
	return words, r.creditedBack(ctx, sym, string(op.Kind))
}

// creditQuantity credits back op.Quantity shares of the Locate row of
// op.Symbols[0], as `credit-back SYM QTY --type Locate` asks, and checks:
//   - working-sell-kept: what the owner credited back is at most the
//     symbol's located shares beyond those its working short sales at the
//     broker still need (it refuses a quantity above them, exit 2);
//   - nothing-sent-on-refusal: a refused credit-back sends the broker
//     nothing.
func (r *runner) creditQuantity(ctx context.Context, op Op) (string, error) {
	sym := op.Symbols[0]
	var held int64
	for _, inv := range r.sim.Inventory() {
		if inv.Account == Account && inv.Symbol == sym {
			held += inv.Available
		}
	}
	need := r.workingShorts()[sym]
	sells := r.sells()
	// What the desk holds bounds what it asks for, so that the working
	// short sales' claim on it decides, not a row too small.
	qty := op.Quantity
	if held >= 100 {
		qty = min(qty, held/100*100)
	}
	a := r.as("credit-back", nil)
	res, err := a.CreditBack(ctx, account.CreditBackRequest{Symbol: sym, Type: brokercode.LocateTypeLocate, Quantity: qty})
	if err != nil && account.KindOf(err) != account.KindInput {
		return "", err
	}
	if err != nil {
		words := fmt.Sprintf("refused (exit %d): %v", console.ExitOf(err), err)
		if n := r.sells(); n != sells {
			return words, &Violation{Invariant: "nothing-sent-on-refusal", Detail: fmt.Sprintf("credit-back %s %d refused (%v), but %d credit-backs reached the broker", sym, qty, err, n-sells)}
		}
		return words, nil
	}
	words, err := r.followAll(ctx, a, res.Workflows(), nil)
	if err != nil {
		return words, err
	}
	var credited int64
	for _, s := range res.Workflows() {
		if w, err := a.Follow(ctx, account.FollowRequest{ID: s.ID}, nil); err == nil && w.State == states.Credited {
			credited += w.Quantity
		}
	}
	if spare := max(held-need, 0); credited > spare {
		return words, &Violation{Invariant: "working-sell-kept",
			Detail: fmt.Sprintf("credit-back %s %d credited back %d shares; the account held %d located and its working short sales needed %d, so %d were spare", sym, qty, credited, held, need, spare)}
	}
	return words, nil
}

// sells counts the credit-backs the broker answered.
func (r *runner) sells() int {
	n := 0
	for _, q := range r.sim.Requests() {
		if q.Method == "POST" && q.Path == creditBackPath && q.Status == 200 {
			n++
		}
	}
	return n
}

// restart starts a locate, lets it run for op.Wait, closes the owner and
// starts a new one on the same database, which follows the locate to its
// end.
func (r *runner) restart(ctx context.Context, op Op) (string, error) {
	a := r.as("restart", nil)
	res, err := a.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: op.Symbols[0], Quantity: op.Quantity,
		Policy: workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString("0.10"), AllowSingleUse: op.SingleUse}}}})
	if err != nil {
		return "", err
	}
	if err := r.sleep(ctx, op.Wait); err != nil {
		return "", err
	}
	r.stopOwner()
	if err := r.startOwner(ctx, false); err != nil {
		return "", fmt.Errorf("restart: %w", err)
	}
	return r.followAll(ctx, r.as("restart", nil), res.Started, nil)
}

// nextDay runs the EOD job, then stops the owner overnight and starts it
// at the next trading day's 10:00 ET.
func (r *runner) nextDay(ctx context.Context) (string, error) {
	words, err := r.eod(ctx)
	if err != nil {
		return words, err
	}
	// The desk stops its owner overnight and starts it in the morning.
	r.stopOwner()
	next := market.Next(r.clk.Now()).Open.Add(30 * time.Minute)
	r.sim.Advance(next.Sub(r.clk.Now()))
	if err := r.startOwner(ctx, false); err != nil {
		return "", err
	}
	return words + "; now " + market.DateTime(r.clk.Now()), nil
}

// eod runs the EOD job and checks it credited back every share it may.
func (r *runner) eod(ctx context.Context) (string, error) {
	res, err := r.as("eod job", nil).RunJob(ctx, account.JobRequest{Config: eodJob, Job: "eod", Grace: time.Second})
	if err != nil {
		return "", err
	}
	words := string(res.Run.Outcome)
	if res.Failure != nil {
		words += ": " + res.Failure.Error()
	}
	return words, r.creditedBack(ctx, "", "the EOD job")
}

// locate runs one locate answered as op says, and checks what the person
// was shown and what the broker ended with.
func (r *runner) locate(ctx context.Context, op Op) (string, error) {
	pol := workflow.Policy{AllowSingleUse: op.SingleUse}
	var (
		mu    sync.Mutex
		shown *workflow.Offer // what the prompt showed
	)
	asked := make(chan account.Question, 1)
	prompt := func(answer bool) func(context.Context, account.Question) bool {
		return func(_ context.Context, q account.Question) bool {
			mu.Lock()
			shown = q.Offer
			mu.Unlock()
			return answer
		}
	}
	var ask func(context.Context, account.Question) bool
	switch op.Answer {
	case AnswerPolicy:
		pol.AutoAccept, pol.MaxPrice = true, op.MaxPrice
	case AnswerPromptYes:
		ask = prompt(true)
	case AnswerPromptNo:
		ask = prompt(false)
	case AnswerOther, AnswerNone:
		// A prompt left open: the answer comes from elsewhere, or never.
		ask = func(qctx context.Context, q account.Question) bool {
			if op.Answer == AnswerOther {
				select {
				case asked <- q:
				default:
				}
			}
			<-qctx.Done()
			return false
		}
	}
	a := r.as("locate", ask)
	res, err := a.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: op.Symbols[0], Quantity: op.Quantity, Policy: pol}},
		Ask: ask != nil})
	if err != nil {
		return "", err
	}
	st := res.Started[0]
	if st.Refused != nil {
		return "refused: " + st.Refused.Error(), nil
	}
	var (
		words string
		ferr  error
		other error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		words, ferr = r.followAll(ctx, a, res.Started, func(w *workflow.Workflow) *Violation {
			mu.Lock()
			defer mu.Unlock()
			if op.Answer == AnswerPromptNo && shown != nil && !w.OfferPrice().Equal(shown.Price) {
				return &Violation{Invariant: "declined-offer-priced-as-shown",
					Detail: fmt.Sprintf("%s: the person declined %s at %s; the record prices it %s", w.ID, shown.QuoteReqID, shown.Price, w.OfferPrice())}
			}
			return nil
		})
	}()
	if op.Answer == AnswerOther {
		other = r.approveFromElsewhere(ctx, st.ID, asked, done)
	}
	<-done
	if other != nil {
		return words, other
	}
	return words, ferr
}

// approveFromElsewhere waits (until ended is closed) for the offer of workflow id to be put to
// its (silent) prompt, reads it from another caller's Status as a person
// at another shell or on the page would, and approves it at the price
// shown there, as the page shows it (four decimals).
func (r *runner) approveFromElsewhere(ctx context.Context, id string, asked <-chan account.Question, ended <-chan struct{}) error {
	var q account.Question
	select {
	case q = <-asked:
	case <-ctx.Done():
		return ctx.Err()
	case <-ended:
		return nil // never asked: the workflow ended before an offer (rejected, covered)
	}
	other := r.as("another shell", nil)
	st, err := other.Status(ctx, account.StatusRequest{})
	if err != nil {
		return err
	}
	var seen *workflow.Workflow
	for i := range st.Open {
		if st.Open[i].ID == id {
			seen = &st.Open[i]
		}
	}
	if seen == nil {
		if w, err := other.Follow(ctx, account.FollowRequest{ID: id}, nil); err == nil && w.Terminal() {
			return nil // it ended meanwhile
		}
		return &Violation{Invariant: "waiting-offer-shown-elsewhere",
			Detail: fmt.Sprintf("%s waits on a person with %s at %s; another caller's status does not list it", id, q.Offer.QuoteReqID, q.Offer.Price)}
	}
	p := seen.OfferPrice()
	if !p.Equal(q.Offer.Price) {
		return &Violation{Invariant: "waiting-offer-shown-elsewhere",
			Detail: fmt.Sprintf("%s waits on a person with %s at %s; another caller's status shows price %q type %q", id, q.Offer.QuoteReqID, q.Offer.Price, p, seen.LocateType)}
	}
	shownText := p.StringFixed(4)
	err = other.Answer(ctx, account.AnswerRequest{ID: id, Accept: true, Offer: q.Offer.QuoteReqID,
		Price: decimal.RequireFromString(shownText), Via: "the dashboard"})
	if err != nil && account.KindOf(err) != account.KindNotOpen {
		return &Violation{Invariant: "approval-of-shown-offer",
			Detail: fmt.Sprintf("%s: approving %s at %s as shown (broker wrote %s) failed: %v", id, q.Offer.QuoteReqID, shownText, r.wire(q.Offer.QuoteReqID), err)}
	}
	<-ended
	if err == nil {
		if w, ferr := other.Follow(ctx, account.FollowRequest{ID: id}, nil); ferr == nil && w.State != states.Filled {
			return &Violation{Invariant: "approval-of-shown-offer",
				Detail: fmt.Sprintf("%s: %s approved at %s as shown and the answer taken, but it ended %s (%s)", id, q.Offer.QuoteReqID, shownText, w.State, account.OutcomeOf(w).Words)}
		}
	}
	return nil
}

// wire is the locatePrice text the broker wrote for quoteReqID.
func (r *runner) wire(id string) string {
	for _, l := range r.sim.Locates() {
		if l.QuoteReqID == id {
			return l.Wire
		}
	}
	return "?"
}

// followAll follows each workflow started to its end, within followWait,
// and checks each against the broker (and extra, when given).
func (r *runner) followAll(ctx context.Context, a account.Account, started []account.Started, extra func(*workflow.Workflow) *Violation) (string, error) {
	fctx, cancel := context.WithTimeout(ctx, followWait)
	defer cancel()
	words := ""
	for _, s := range started {
		if s.Refused != nil {
			words += fmt.Sprintf("[%s refused: %v] ", s.Symbol, s.Refused)
			continue
		}
		w, err := a.Follow(fctx, account.FollowRequest{ID: s.ID}, nil)
		if err != nil {
			if fctx.Err() != nil && ctx.Err() == nil {
				return words, &Violation{Invariant: "follower-ends", Detail: fmt.Sprintf("%s (%s): the follower still waits %s after it started: %v; the owner's record: %s", s.ID, s.Symbol, followWait, err, r.recorded(s.ID))}
			}
			return words, err
		}
		o := account.OutcomeOf(w)
		words += fmt.Sprintf("[%s %s exit %d] ", w.Symbol, o.Words, console.Exit(o.End))
		if v := r.checkWorkflow(w, o); v != nil {
			return words, v
		}
		if extra != nil {
			if v := extra(w); v != nil {
				return words, v
			}
		}
	}
	return words, nil
}
