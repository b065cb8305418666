// Package accounttest is the conformance suite of the account API: one
// set of cases, written once against account.Account, that every
// implementation must pass with the same results, updates and exit codes
// (the pattern of river's riverdrivertest). service runs it against the
// owner's in-process implementation and against a follower through the
// transport; a behaviour that differs between them fails here.
//
// Every case talks to the simulator over real HTTP on a fake clock (the
// simtest bundle of its Env) and judges what was sent from the
// simulator's request log.
package accounttest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// Env is one case's world: the simulator, the owner's store, and the
// account (LV100001, live) as a caller sees it through the implementation
// under test.
type Env struct {
	Sim   *simtest.Bundle
	Store *store.Store
	// Open returns the account as caller c sees it.
	Open func(c account.Caller) account.Account
}

// Setup makes a fresh Env for one case.
type Setup func(t *testing.T) *Env

// Run runs every case against the implementation setup makes.
func Run(t *testing.T, setup Setup) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, setup(t))
		})
	}
}

var cases = []struct {
	name string
	run  func(t *testing.T, e *Env)
}{
	{"LocateFilled", locateFilled},
	{"EnvGuardSendsNothing", envGuard},
	{"InputRefusedSendsNothing", inputRefused},
	{"PromptNo", promptNo},
	{"DeclineByAPerson", declineByAPerson},
	{"ApproveElsewhereWithdrawsQuestion", approveElsewhere},
	{"ChangedOfferRefused", changedOffer},
	{"WaitingOfferSeenElsewhere", waitingOfferSeenElsewhere},
	{"AnswerByLinkOnce", answerByLink},
	{"LinkAfterAnswerElsewhere", linkAfterElsewhere},
	{"PolicyDecline", policyDecline},
	{"CancelByAPerson", cancelByAPerson},
	{"InterruptWithdraws", interrupt},
	{"NotOpen", notOpen},
	{"Batch", batch},
	{"SameIDNotStartedTwice", sameID},
	{"CreditBack", creditBack},
	{"CreditBackUnused", creditBackUnused},
	{"CreditBackSingleUseAgain", creditBackSingleUseAgain},
	{"ShortConfirmed", shortConfirmed},
	{"ShortDeclinedAtConfirmation", shortDeclined},
	{"RunJob", runJob},
	{"StatusAndSubscribe", statusAndSubscribe},
	{"FollowByPrefix", followByPrefix},
	{"QuotePricesAndCancels", quotePrices},
	{"QuoteRefusedSendsNothing", quoteRefused},
	{"StatusShortable", statusShortable},
	{"FeesReconciled", feesReconciled},
	{"TodayPositionsOrdersLocates", today},
}

func capped(price string) workflow.Policy {
	return workflow.Policy{MaxPrice: decimal.RequireFromString(price)}
}

// ctx bounds a case in virtual time's real-time cost.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// writes counts the requests that changed something at the broker.
func writes(e *Env) int {
	n := 0
	for _, r := range e.Sim.Sim.Requests() {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/_sim/") {
			n++
		}
	}
	return n
}

// count counts the log's requests of method whose path holds part.
func count(e *Env, method, part string) int {
	n := 0
	for _, r := range e.Sim.Sim.Requests() {
		if r.Method == method && strings.Contains(r.Path, part) {
			n++
		}
	}
	return n
}

// ok fails the case on err.
func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// locateOne starts one locate and returns its workflow id.
func locateOne(t *testing.T, a account.Account, it account.LocateItem, ask bool) string {
	t.Helper()
	res, err := a.Locate(ctx(t), account.LocateRequest{Items: []account.LocateItem{it}, Ask: ask})
	ok(t, err)
	if len(res.Started) != 1 || res.Started[0].ID == "" {
		t.Fatalf("locate %s: %+v", it.Symbol, res.Started)
	}
	return res.Started[0].ID
}

// follow follows id to its end, recording the states it went through.
func follow(t *testing.T, a account.Account, id string) (*workflow.Workflow, []states.State) {
	t.Helper()
	var seen []states.State
	w, err := a.Follow(ctx(t), account.FollowRequest{ID: id}, func(u account.Update) {
		if u.Workflow != nil && (len(seen) == 0 || seen[len(seen)-1] != u.Workflow.State) {
			seen = append(seen, u.Workflow.State)
		}
	})
	ok(t, err)
	return w, append(seen, w.State)
}

// wantOutcome checks the words and exit code of w's outcome.
func wantOutcome(t *testing.T, w *workflow.Workflow, st states.State, words string, exit int) {
	t.Helper()
	o := account.OutcomeOf(w)
	if w.State != st || !strings.Contains(o.Words, words) || o.Exit != exit {
		t.Errorf("outcome %s %q exit %d, want %s with %q, exit %d", w.State, o.Words, o.Exit, st, words, exit)
	}
}

// asker is a caller's prompt that answers each offer with answer (after
// telling the case it was asked), or waits to be withdrawn when answer is
// nil.
type asker struct {
	mu        sync.Mutex
	asked     chan account.Question
	withdrawn chan string
	answer    *bool
}

func newAsker(answer *bool) *asker {
	return &asker{asked: make(chan account.Question, 4), withdrawn: make(chan string, 4), answer: answer}
}

func (k *asker) ask(ctx context.Context, q account.Question) bool {
	k.asked <- q
	if k.answer != nil {
		return *k.answer
	}
	<-ctx.Done()
	k.withdrawn <- q.ID
	return false
}

func yes() *bool { v := true; return &v }
func no() *bool  { v := false; return &v }

func caller(name string, k *asker) account.Caller {
	c := account.Caller{Name: name, Env: brokerclient.EnvLive}
	if k != nil {
		c.Ask = k.ask
	}
	return c
}

// question waits for the asker's question.
func (k *asker) question(t *testing.T) account.Question {
	t.Helper()
	select {
	case q := <-k.asked:
		return q
	case <-ctx(t).Done():
		t.Fatal("no question put to the asker")
	}
	return account.Question{}
}

// Spec "Short locates": a capped locate of a hard-to-borrow symbol is
// quoted, offered and accepted within the cap; its follower sees each
// state once, in order.
func locateFilled(t *testing.T, e *Env) {
	a := e.Open(caller("test locate", nil))
	sctx, stop := context.WithCancel(ctx(t))
	defer stop()
	updates, err := a.Subscribe(sctx)
	ok(t, err)
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false)
	var seen []states.State
	for u := range updates {
		if u.Workflow != nil && u.Workflow.ID == id {
			seen = append(seen, u.Workflow.State)
			if u.Workflow.Terminal() {
				break
			}
		}
	}
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", account.ExitOK)
	if want := []states.State{states.Quoting, states.Offered, states.Accepting, states.Filled}; !slices.Equal(dedupe(seen), want) {
		t.Errorf("states %v, want %v", seen, want)
	}
	if w.Asker != "test locate" {
		t.Errorf("asker %q, want the caller's name", w.Asker)
	}
	if n := count(e, "POST", "/locates/quote"); n != 1 {
		t.Errorf("%d quotes sent, want 1", n)
	}
}

// dedupe drops the states a follower may see twice (pending between
// quoting and offered is the broker's choice).
func dedupe(s []states.State) []states.State {
	var out []states.State
	for _, st := range s {
		if st == states.Pending || (len(out) > 0 && out[len(out)-1] == st) {
			continue
		}
		out = append(out, st)
	}
	return out
}

// Spec "Authentication", API keys rule 5: a caller who means paper is
// refused every write on a live account, and nothing is sent.
func envGuard(t *testing.T, e *Env) {
	a := e.Open(account.Caller{Name: "paper caller", Env: brokerclient.EnvPaper})
	before := writes(e)
	c := ctx(t)
	checks := map[string]error{}
	_, checks["locate"] = a.Locate(c, account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100, Policy: capped("0.05")}}})
	_, checks["credit-back"] = a.CreditBack(c, account.CreditBackRequest{Symbol: "HTBX", Quantity: 100, Type: brokercode.LocateTypeLocate})
	_, checks["short"] = a.Short(c, account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.RequireFromString("19"), Policy: capped("0.05")})
	_, checks["cancel-order"] = a.CancelOrder(c, account.CancelOrderRequest{ClientOrderID: "x"})
	checks["answer"] = a.Answer(c, account.AnswerRequest{ID: "x", Accept: true})
	checks["cancel"] = a.Cancel(c, account.CancelRequest{ID: "x"})
	_, checks["job"] = a.RunJob(c, account.JobRequest{Config: []byte(`{"jobs":[]}`), Job: "x"})
	for op, err := range checks {
		if account.KindOf(err) != account.KindRefused || account.ExitOf(err) != account.ExitUsage || !strings.Contains(err.Error(), "nothing was sent") {
			t.Errorf("%s: %v (kind %s), want refused, exit 2, saying nothing was sent", op, err, account.KindOf(err))
		}
	}
	if n := writes(e) - before; n != 0 {
		t.Errorf("%d writes reached the broker, want 0", n)
	}
}

// docs/design.md rule 8: bad input is refused before anything is recorded
// or sent.
func inputRefused(t *testing.T, e *Env) {
	a := e.Open(caller("test input", nil))
	c := ctx(t)
	bad := map[string]account.LocateRequest{
		"symbol":        {Items: []account.LocateItem{{Symbol: "not a symbol", Quantity: 100, Policy: capped("0.05")}}},
		"quantity":      {Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 2147483700, Policy: capped("0.05")}}},
		"nobody to ask": {Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100}}},
		"batch asks":    {Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 100}, {Symbol: "HTBY", Quantity: 100}}, Ask: true},
		"id":            {Items: []account.LocateItem{{ID: "a/b", Symbol: "HTBX", Quantity: 100, Policy: capped("0.05")}}},
		"empty":         {},
	}
	for name, req := range bad {
		if _, err := a.Locate(c, req); account.KindOf(err) != account.KindInput || account.ExitOf(err) != account.ExitUsage {
			t.Errorf("%s: %v, want an input error (exit 2)", name, err)
		}
	}
	if _, err := a.Short(c, account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.RequireFromString("19"), Policy: capped("0.05"), Confirm: true}); account.KindOf(err) != account.KindInput {
		t.Errorf("short to confirm with nobody to confirm: %v, want an input error", err)
	}
	// Issue 30, spec "Orders" rules 1-2 and the fat-finger guard: orders
	// the spec forbids, or past the guard, are refused before a locate or
	// an order is sent.
	for name, req := range map[string]account.ShortRequest{
		"stop without its price":   {OrderType: "Stop"},
		"extended-hours market":    {OrderType: "Market", TimeInForce: "Day_Plus"},
		"limit price on a stop":    {OrderType: "Stop", Stop: decimal.RequireFromString("11"), Limit: decimal.RequireFromString("11")},
		"IOC on SMART":             {Limit: decimal.RequireFromString("12"), TimeInForce: "IOC"},
		"notional past the guard":  {Limit: decimal.RequireFromString("12"), Guard: workflow.Guard{MaxNotional: decimal.RequireFromString("1000")}},
		"unknown time in force":    {Limit: decimal.RequireFromString("12"), TimeInForce: "Sometimes"},
		"unknown order type":       {OrderType: "TrailStop"},
		"stop-limit without limit": {OrderType: "StopLimit", Stop: decimal.RequireFromString("11")},
	} {
		req.Symbol, req.Quantity, req.Policy = "HTBX", 100, capped("0.05")
		if _, err := a.Short(c, req); account.KindOf(err) != account.KindInput || account.ExitOf(err) != account.ExitUsage {
			t.Errorf("short, %s: %v, want an input error (exit 2)", name, err)
		}
	}
	cover := workflow.Order{Symbol: "HTBX", Side: "Buy", OpenClose: "Close", OrderType: "Limit", TimeInForce: "Day", Quantity: 100,
		LimitPrice: decimal.RequireFromString("13")}
	if _, err := a.PlaceOrder(c, account.PlaceOrderRequest{Order: cover, Guard: workflow.Guard{MaxNotional: decimal.RequireFromString("1000")}}); account.KindOf(err) != account.KindInput {
		t.Errorf("cover past the guard's notional: %v, want an input error", err)
	}
	if ws, err := e.Store.List(c, store.Filter{}); err != nil || len(ws) != 0 {
		t.Errorf("%d workflows recorded, want 0", len(ws))
	}
	if n := writes(e); n != 0 {
		t.Errorf("%d writes reached the broker, want 0", n)
	}
}

// An offer put to the asker and refused at its prompt: declined at the
// prompt, a person's choice (exit 0), and cancelled at the broker.
func promptNo(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test prompt", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	w, _ := follow(t, a, id)
	if q := k.question(t); q.Offer == nil || q.Offer.WorkflowID != id || q.Deadline.IsZero() {
		t.Errorf("question %+v, want the offer of %s with a deadline", q, id)
	}
	wantOutcome(t, w, states.Declined, "declined at the prompt", account.ExitOK)
	if a, c := count(e, "POST", "/locates/accept"), count(e, "DELETE", "/locates/cancel/"); a != 0 || c == 0 {
		t.Errorf("%d accepts and %d cancels sent, want none and at least one", a, c)
	}
}

// A person's decline from elsewhere (locator decline) while the asker
// waits: the asker's question is withdrawn, and the outcome is the
// person's, exit 0, in its own words.
func declineByAPerson(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	done := make(chan *workflow.Workflow, 1)
	go func() { w, _ := a.Follow(context.WithoutCancel(ctx(t)), account.FollowRequest{ID: id}, nil); done <- w }()
	k.question(t)
	other := e.Open(caller("test other shell", nil))
	if err := other.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: false, Via: "'locator decline'"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.withdrawn:
	case <-ctx(t).Done():
		t.Fatal("the asker's question was not withdrawn")
	}
	w := <-done
	wantOutcome(t, w, states.Declined, "declined by a person with 'locator decline'", account.ExitOK)
	if n := count(e, "POST", "/locates/accept"); n != 0 {
		t.Errorf("%d accepts sent, want 0", n)
	}
}

// A person's approval from elsewhere fills the offer the asker was asked
// about, exactly once, and withdraws the asker's question.
func approveElsewhere(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	other := e.Open(caller("test dashboard", nil))
	if err := other.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Via: "the dashboard"}); err != nil {
		t.Fatal(err)
	}
	<-k.withdrawn
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled", account.ExitOK)
	if n := count(e, "POST", "/locates/accept"); n != 1 {
		t.Errorf("%d accepts sent, want 1", n)
	}
}

// docs/design.md: an approval is bound to the offer seen: one for another
// leg is refused and nothing is sent.
func changedOffer(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	for name, req := range map[string]account.AnswerRequest{
		"another leg":   {ID: id, Accept: true, Offer: "another-leg"},
		"another price": {ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Price: q.Offer.Price.Add(decimal.RequireFromString("0.0001"))},
	} {
		if err := a.Answer(ctx(t), req); account.KindOf(err) != account.KindChanged || account.ExitOf(err) != account.ExitUsage {
			t.Errorf("answer for %s: %v, want kind changed (exit 2)", name, err)
		}
	}
	if n := count(e, "POST", "/locates/accept"); n != 0 {
		t.Errorf("%d accepts sent, want 0", n)
	}
	ok(t, a.Cancel(ctx(t), account.CancelRequest{ID: id}))
	follow(t, a, id)
}

// Issue 26 item 3, spec "Short locates" rule 2: while a Reg SHO pair's
// offer waits on the asker (locate RSHO 1000 --allow-single-use), another
// shell's Status shows it open with the side and price the asker was
// asked (workflow.Offered: SingleUse, id.SU, 0.0400), and an approval
// bound to what that shell saw fills exactly that side at that price.
func waitingOfferSeenElsewhere(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	it := account.LocateItem{Symbol: "RSHO", Quantity: 1000}
	it.Policy.AllowSingleUse = true
	id := locateOne(t, a, it, true)
	q := k.question(t)
	if q.Offer == nil || !strings.HasSuffix(q.Offer.QuoteReqID, ".SU") || !q.Offer.Price.Equal(decimal.RequireFromString("0.04")) {
		t.Fatalf("question %+v, want the SingleUse side at 0.0400", q.Offer)
	}
	other := e.Open(caller("test other shell", nil))
	st, err := other.Status(ctx(t), account.StatusRequest{})
	ok(t, err)
	var seen *workflow.Offer
	for i := range st.Open {
		if w := &st.Open[i]; w.ID == id {
			if w.State != states.Offered {
				t.Fatalf("%s is %s in the other shell's status, want offered", id, w.State)
			}
			seen = workflow.Offered(w)
		}
	}
	if seen == nil || seen.QuoteReqID != q.Offer.QuoteReqID || !seen.Price.Equal(q.Offer.Price) || seen.LocateType != q.Offer.LocateType {
		t.Fatalf("the other shell sees the offer %+v, want the one asked %+v", seen, q.Offer)
	}
	ok(t, other.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: true, Offer: seen.QuoteReqID, Price: seen.Price, Via: "'locator approve'"}))
	<-k.withdrawn
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled — 1000 shares at 0.0400 (SingleUse) = 40.00", account.ExitOK)
	if n := count(e, "POST", "/locates/accept"); n != 1 || w.AcceptedID != q.Offer.QuoteReqID {
		t.Errorf("%d accepts sent, accepted %s; want one, of %s", n, w.AcceptedID, q.Offer.QuoteReqID)
	}
}

// An answer by signed link (account.AnswerRequest.ByLink) approves its
// offer once: one accept is sent, and a second use of the offer's links,
// to approve or to decline, is refused as used (exit 2) and sends nothing.
// One that does not name its offer is refused before anything is recorded.
func answerByLink(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	link := e.Open(caller("test link", nil))
	if err := link.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: true, ByLink: true}); account.KindOf(err) != account.KindInput {
		t.Errorf("answer by link without its offer: %v, want kind input", err)
	}
	req := account.AnswerRequest{ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Price: q.Offer.Price, Via: "a signed link", ByLink: true}
	ok(t, link.Answer(ctx(t), req))
	<-k.withdrawn
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled", account.ExitOK)
	before := writes(e)
	for _, accept := range []bool{true, false} {
		req.Accept = accept
		if err := link.Answer(ctx(t), req); account.KindOf(err) != account.KindUsed || account.ExitOf(err) != account.ExitUsage {
			t.Errorf("second use of the offer's links (accept %v): %v, want kind used (exit 2)", accept, err)
		}
	}
	if n := writes(e) - before; n != 0 {
		t.Errorf("%d writes sent after the link's use, want 0", n)
	}
	if n := count(e, "POST", "/locates/accept"); n != 1 {
		t.Errorf("%d accepts sent, want 1", n)
	}
}

// A link used after its offer was answered another way (at the prompt) is
// refused, as no offer waits, and uses the offer's links all the same: the
// next use is refused as used. Nothing is sent by either.
func linkAfterElsewhere(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Declined, "declined", account.ExitOK)
	before := writes(e)
	link := e.Open(caller("test link", nil))
	req := account.AnswerRequest{ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Price: q.Offer.Price, Via: "a signed link", ByLink: true}
	if err := link.Answer(ctx(t), req); account.KindOf(err) != account.KindNotOpen {
		t.Errorf("link after the prompt's answer: %v, want kind not open", err)
	}
	if err := link.Answer(ctx(t), req); account.KindOf(err) != account.KindUsed {
		t.Errorf("link used again: %v, want kind used", err)
	}
	if n := writes(e) - before; n != 0 {
		t.Errorf("%d writes sent by the links, want 0", n)
	}
}

// An offer above the cap is declined by the cost policy: exit 4.
func policyDecline(t *testing.T, e *Env) {
	a := e.Open(caller("test policy", nil))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBY", Quantity: 200, Policy: capped("0.01")}, false)
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Declined, "declined by the cost policy", account.ExitDeclined)
}

// A person's cancel (locator cancel) of an offer waiting on the asker:
// cancelled in its own words, exit 0; nothing is left open.
func cancelByAPerson(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	k.question(t)
	other := e.Open(caller("test cancel", nil))
	ok(t, other.Cancel(ctx(t), account.CancelRequest{ID: id, Via: "'locator cancel'"}))
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Canceled, "canceled by a person with 'locator cancel'", account.ExitOK)
}

// The asker interrupted (Ctrl-C) withdraws its own request: exit 130, and
// the offer is cancelled at the broker.
func interrupt(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	k.question(t)
	ok(t, a.Cancel(ctx(t), account.CancelRequest{ID: id, Interrupt: true}))
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Canceled, "canceled: interrupted", account.ExitInterrupted)
}

// What has ended or never was is not open: exit 2, nothing sent.
func notOpen(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	c := ctx(t)
	for name, err := range map[string]error{
		"cancel": a.Cancel(c, account.CancelRequest{ID: "wf-nosuch"}),
		"answer": a.Answer(c, account.AnswerRequest{ID: "wf-nosuch", Accept: true}),
		"cancel-order": func() error {
			_, err := a.CancelOrder(c, account.CancelOrderRequest{ClientOrderID: "nosuch"})
			return err
		}(),
		"follow": func() error { _, err := a.Follow(c, account.FollowRequest{ID: "wf-nosuch"}, nil); return err }(),
	} {
		if account.KindOf(err) != account.KindNotOpen || account.ExitOf(err) != account.ExitUsage {
			t.Errorf("%s: %v, want not open (exit 2)", name, err)
		}
	}
	id := locateOne(t, a, account.LocateItem{Symbol: "AAPL", Quantity: 100, Policy: capped("0.05")}, false)
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.NotNeeded, "not_needed — easy to borrow", account.ExitOK)
	if err := a.Cancel(c, account.CancelRequest{ID: id}); account.KindOf(err) != account.KindNotOpen {
		t.Errorf("cancel of an ended workflow: %v, want not open", err)
	}
}

// Spec "Short locates" with a watchlist: every item ends as it would
// alone; each symbol is quoted at most once.
func batch(t *testing.T, e *Env) {
	a := e.Open(caller("test batch", nil))
	items := []account.LocateItem{
		{Symbol: "HTBX", Quantity: 400, Policy: capped("0.05")},
		{Symbol: "HTBY", Quantity: 500, Policy: capped("0.05")},
		{Symbol: "NOINV", Quantity: 100, Policy: capped("0.05")},
		{Symbol: "AAPL", Quantity: 100, Policy: capped("0.05")},
	}
	res, err := a.Locate(ctx(t), account.LocateRequest{Items: items})
	ok(t, err)
	want := []states.State{states.Filled, states.Filled, states.Rejected, states.NotNeeded}
	for i, s := range res.Started {
		if s.Refused != nil {
			t.Fatalf("%s refused: %v", s.Symbol, s.Refused)
		}
		w, _ := follow(t, a, s.ID)
		if w.State != want[i] {
			t.Errorf("%s ended %s, want %s", s.Symbol, w.State, want[i])
		}
	}
	if n := count(e, "POST", "/locates/quote"); n != 3 {
		t.Errorf("%d quotes, want 3", n)
	}
}

// A request sent again with its id (its owner went away before answering)
// is not started twice.
func sameID(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	it := account.LocateItem{ID: "wf-conformance1", Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}
	id := locateOne(t, a, it, false)
	again := locateOne(t, a, it, false)
	if id != it.ID || again != it.ID {
		t.Errorf("ids %s and %s, want %s twice", id, again, it.ID)
	}
	follow(t, a, id)
	if n := count(e, "POST", "/locates/quote"); n != 1 {
		t.Errorf("%d quotes, want 1", n)
	}
}

// Spec "Short locates" rule 5: unused shares are credited back.
func creditBack(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 500, Policy: capped("0.05")}, false))
	s, err := a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 200, Type: brokercode.LocateTypeLocate})
	ok(t, err)
	w, _ := follow(t, a, s.Started[0].ID)
	wantOutcome(t, w, states.Credited, "credited — 200 Locate shares credited back", account.ExitOK)
	if _, err := a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 900, Type: brokercode.LocateTypeLocate}); account.KindOf(err) != account.KindInput {
		t.Errorf("credit back more than held: %v, want an input error", err)
	}
}

// Spec "Short locates" rule 5 and "Locate inventory row": the unused
// shares (ledger.Unused) are the located shares available, less those a
// short took, in whole lots; asked to confirm, the caller sees them first
// and a no sends nothing; one symbol's are credited back alone, then every
// symbol's, and a third time nothing is left. Bad requests send nothing.
func creditBackUnused(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test", k))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 500, Policy: capped("0.05")}, false))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBY", Quantity: 300, Policy: capped("0.05")}, false))
	if _, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 200, Limit: decimal.RequireFromString("12.50"), Policy: capped("0.05")}); err != nil {
		t.Fatal(err)
	}
	before := writes(e)
	for _, bad := range []account.CreditBackRequest{
		{Unused: true, Symbol: "HTBX", Quantity: 100},
		{Unused: true, ID: "wf-mine"},
		{Unused: true, Symbol: "HT/BX"},
		{Unused: true, Type: "locate"},
		{Symbol: "HTBX", Quantity: 100, Type: brokercode.LocateTypeLocate, Confirm: true},
	} {
		if _, err := a.CreditBack(ctx(t), bad); account.KindOf(err) != account.KindInput {
			t.Errorf("%+v: %v, want an input error", bad, err)
		}
	}
	if _, err := e.Open(caller("nobody", nil)).CreditBack(ctx(t), account.CreditBackRequest{Unused: true, Confirm: true}); account.KindOf(err) != account.KindInput {
		t.Errorf("a confirmation nobody can give: %v, want an input error", err)
	}
	res, err := a.CreditBack(ctx(t), account.CreditBackRequest{Unused: true, Confirm: true})
	ok(t, err)
	want := []locator.Credit{{Symbol: "HTBX", Type: brokercode.LocateTypeLocate, Shares: 300}, {Symbol: "HTBY", Type: brokercode.LocateTypeLocate, Shares: 300}}
	if q := k.question(t); !slices.Equal(q.Credits, want) {
		t.Errorf("question %+v, want the credits %+v", q, want)
	}
	if !res.Declined || len(res.Started) != 0 || writes(e) != before {
		t.Errorf("declined at the confirmation: %+v, %d writes, want nothing sent", res, writes(e)-before)
	}
	credited := func(req account.CreditBackRequest, want ...locator.Credit) {
		t.Helper()
		res, err := a.CreditBack(ctx(t), req)
		ok(t, err)
		var got []locator.Credit
		for _, s := range res.Started {
			w, _ := follow(t, a, s.ID)
			wantOutcome(t, w, states.Credited, "credited", account.ExitOK)
			got = append(got, s.Credit)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v started %+v (skipped %+v), want %+v", req, got, res.Skipped, want)
		}
	}
	credited(account.CreditBackRequest{Unused: true, Symbol: "HTBX"}, want[0])
	credited(account.CreditBackRequest{Unused: true}, want[1])
	credited(account.CreditBackRequest{Unused: true})
	if n := count(e, "POST", "/locates/sell"); n != 2 {
		t.Errorf("%d sells, want 2", n)
	}
}

// Issue 26 item 1, spec "Short locates" rule 5: a SingleUse lot no short
// used is credited back as unused, and so is a second one located the same
// day after the first was credited back (shares credited back are not
// shares used): twice `locate RSHO 1000 --allow-single-use --max-price
// 0.05` then `credit-back --all`, the second locate held the spec's 30
// seconds by the engine. Both lots are sold back, and the broker ends with
// no RSHO SingleUse share available.
func creditBackSingleUseAgain(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	item := account.LocateItem{Symbol: "RSHO", Quantity: 1000, Policy: capped("0.05")}
	item.Policy.AllowSingleUse = true
	lot := locator.Credit{Symbol: "RSHO", Type: brokercode.LocateTypeSingleUse, Shares: 1000}
	for round := range 2 {
		w, _ := follow(t, a, locateOne(t, a, item, false))
		wantOutcome(t, w, states.Filled, "filled", account.ExitOK)
		if w.LocateType != string(lot.Type) {
			t.Fatalf("round %d: located %s shares, want the SingleUse side", round, w.LocateType)
		}
		res, err := a.CreditBack(ctx(t), account.CreditBackRequest{Unused: true})
		ok(t, err)
		if len(res.Started) != 1 || res.Started[0].Credit != lot || len(res.Skipped) != 0 {
			t.Fatalf("round %d: credit-back of the unused shares started %+v, skipped %+v; want %+v", round, res.Started, res.Skipped, lot)
		}
		w, _ = follow(t, a, res.Started[0].ID)
		wantOutcome(t, w, states.Credited, "credited", account.ExitOK)
	}
	if n := count(e, "POST", "/locates/sell"); n != 2 {
		t.Errorf("%d sells, want 2", n)
	}
	rows, _, err := e.Sim.Client(t, e.Sim.Live).Locates.Inventory(ctx(t), "LV100001")
	ok(t, err)
	for _, r := range rows {
		if r.Symbol == "RSHO" && r.Available != 0 {
			t.Errorf("the broker still holds %d RSHO %s shares available", r.Available, r.Type())
		}
	}
}

// Spec "Orders": a short's order is confirmed by the asker, then placed
// once under its clientOrderId.
func shortConfirmed(t *testing.T, e *Env) {
	k := newAsker(yes())
	a := e.Open(caller("test short", k))
	res, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.RequireFromString("12.50"), Policy: capped("0.05"), Confirm: true})
	ok(t, err)
	if q := k.question(t); q.Order == nil || q.Order.Quantity != 100 {
		t.Errorf("question %+v, want the order to confirm", q)
	}
	if res.Locate == nil || !res.Locate.Located() || res.Order == nil || res.Declined {
		t.Fatalf("short %+v, want a located short with its order", res)
	}
	if n := count(e, "POST", "/order"); n != 1 {
		t.Errorf("%d orders sent, want 1", n)
	}
}

// A short refused at its confirmation sends no order: the person's
// choice.
func shortDeclined(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test short", k))
	res, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.RequireFromString("12.50"), Policy: capped("0.05"), Confirm: true})
	ok(t, err)
	if !res.Declined || res.Order != nil {
		t.Errorf("short %+v, want declined at its confirmation, no order", res)
	}
	if n := count(e, "POST", "/order"); n != 0 {
		t.Errorf("%d orders sent, want 0", n)
	}
}

// A job run on the owner: recorded, with its outcome; a run whose worst end
// is the policy's decline says so (exit 4).
func runJob(t *testing.T, e *Env) {
	a := e.Open(caller("test job", nil))
	config := []byte(`{"jobs": [
		{"name": "loc", "kind": "locate", "schedule": "@every 1h", "holidays": "run", "symbols": ["HTBX"], "quantity": 300, "policy": {"maxPrice": 1}},
		{"name": "cheap", "kind": "locate", "schedule": "@every 1h", "holidays": "run", "symbols": ["HTBY"], "quantity": 300, "policy": {"maxPrice": 0.0001}}]}`)
	res, err := a.RunJob(ctx(t), account.JobRequest{Config: config, Job: "loc", Grace: time.Second})
	ok(t, err)
	if res.Run == nil || res.Run.Outcome != locator.JobOK || res.Failure != nil {
		t.Errorf("run %+v, failure %+v, want ok", res.Run, res.Failure)
	}
	res, err = a.RunJob(ctx(t), account.JobRequest{Config: config, Job: "cheap", Grace: time.Second})
	ok(t, err)
	if res.Run == nil || res.Run.Outcome != locator.JobFailed || res.Failure == nil || res.Failure.Exit() != account.ExitDeclined {
		t.Errorf("run %+v, failure %+v, want failed with exit 4", res.Run, res.Failure)
	}
	if _, err := a.RunJob(ctx(t), account.JobRequest{Config: []byte(`{"jobs": [`), Job: "loc"}); account.KindOf(err) != account.KindInput {
		t.Errorf("bad config: %v, want an input error", err)
	}
}

// Status names the account, its kind, its owner and its term, and the
// daemons standing by (one recorded here); a subscriber sees a locate's
// changes.
func statusAndSubscribe(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	sb := locator.Standby{Account: "LV100001", Process: "daemon:standby-test", PID: 4242, Host: "standby-host"}
	ok(t, e.Store.StandBy(ctx(t), sb, time.Minute))
	st, err := a.Status(ctx(t), account.StatusRequest{})
	ok(t, err)
	if st.Account != "LV100001" || st.Env != brokerclient.EnvLive || st.Owner.PID == 0 || st.Owner.Term < 1 || !st.Running {
		t.Errorf("status %+v", st)
	}
	if len(st.Standbys) != 1 || st.Standbys[0].PID != 4242 || st.Standbys[0].Host != "standby-host" {
		t.Errorf("standbys %+v, want the one recorded", st.Standbys)
	}
	ok(t, e.Store.LeaveStandby(ctx(t), sb.Account, sb.Process))
	sctx, stop := context.WithCancel(ctx(t))
	defer stop()
	updates, err := a.Subscribe(sctx)
	ok(t, err)
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 100, Policy: capped("0.05")}, false)
	for u := range updates {
		if u.Workflow != nil && u.Workflow.ID == id && u.Workflow.State == states.Filled {
			return
		}
	}
	t.Error("the subscription ended before the locate filled")
}

// A workflow is named by a unique prefix of its id, as people copy it; a
// prefix several ids share is refused.
func followByPrefix(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	first := locateOne(t, a, account.LocateItem{Symbol: "AAPL", Quantity: 100, Policy: capped("0.05")}, false)
	locateOne(t, a, account.LocateItem{Symbol: "MSFT", Quantity: 100, Policy: capped("0.05")}, false)
	w, err := a.Follow(ctx(t), account.FollowRequest{ID: first[:10]}, nil)
	ok(t, err)
	if w.ID != first {
		t.Errorf("followed %s, want %s", w.ID, first)
	}
	if _, err := a.Follow(ctx(t), account.FollowRequest{ID: "wf-"}, nil); account.KindOf(err) != account.KindInput {
		t.Errorf("follow wf- with two workflows: %v, want an input error naming both", err)
	}
}

// Spec "Short locates" rules 2 and 6: a quote request prices each symbol
// and cancels every quote at the broker (history 52 for each row, both
// sides of a Reg SHO pair), accepting nothing; the prices come back with
// their type (the Reg SHO side); an easy-to-borrow symbol is not quoted;
// an item sent again with its id is not priced twice.
func quotePrices(t *testing.T, e *Env) {
	a := e.Open(caller("test quote", nil))
	res, err := a.Quote(ctx(t), account.QuoteRequest{Items: []account.QuoteItem{
		{ID: "wf-quote-htbx", Symbol: "HTBX", Quantity: 300}, {Symbol: "RSHO", Quantity: 200}, {Symbol: "AAPL", Quantity: 100},
	}})
	ok(t, err)
	again, err := a.Quote(ctx(t), account.QuoteRequest{Items: []account.QuoteItem{{ID: "wf-quote-htbx", Symbol: "HTBX", Quantity: 300}}})
	ok(t, err)
	if again.Started[0].ID != "wf-quote-htbx" {
		t.Errorf("sent again: %+v, want the same price check", again.Started)
	}
	type price struct {
		typ   int
		price string
	}
	want := []struct {
		st     states.State
		prices []price
	}{
		{states.Priced, []price{{brokercode.TypeCodeLocate, "0.015"}}},
		{states.Priced, []price{{brokercode.TypeCodePreBorrow, "0.09"}, {brokercode.TypeCodeSingleUse, "0.04"}}},
		{states.NotNeeded, nil},
	}
	for i, s := range res.Started {
		if s.Refused != nil {
			t.Fatalf("%s refused: %v", s.Symbol, s.Refused)
		}
		w, _ := follow(t, a, s.ID)
		if w.Kind != states.PriceCheck || w.State != want[i].st || account.OutcomeOf(w).Exit != account.ExitOK {
			t.Errorf("%s: %s %s (%s), want a price check ending %s, exit 0", s.Symbol, w.Kind, w.State, account.OutcomeOf(w).Words, want[i].st)
		}
		var got []price
		for _, o := range workflow.Prices(w) {
			got = append(got, price{o.LocateType, o.Price.String()})
		}
		if !slices.Equal(got, want[i].prices) {
			t.Errorf("%s prices %v, want %v", s.Symbol, got, want[i].prices)
		}
	}
	if n := count(e, "POST", "/locates/quote"); n != 2 {
		t.Errorf("%d quotes, want 2", n)
	}
	if n := count(e, "POST", "/locates/accept"); n != 0 {
		t.Errorf("%d accepts, want 0", n)
	}
	rows, _, err := e.Sim.Client(t, e.Sim.Live).Locates.History(ctx(t), "LV100001")
	ok(t, err)
	if len(rows) != 3 {
		t.Errorf("%d history rows, want 3 (HTBX, RSHO, RSHO.SU)", len(rows))
	}
	for _, r := range rows {
		if r.LocateStatus != 52 {
			t.Errorf("%s %s: status %d, want 52 Canceled", r.Symbol, r.QuoteReqID, r.LocateStatus)
		}
	}
}

// docs/design.md rule 8: a quote request with a bad item, or asked by a
// caller meaning the other environment, is refused whole, nothing sent.
func quoteRefused(t *testing.T, e *Env) {
	a := e.Open(caller("test quote", nil))
	for name, req := range map[string]account.QuoteRequest{
		"empty":    {},
		"quantity": {Items: []account.QuoteItem{{Symbol: "HTBX", Quantity: 300}, {Symbol: "RSHO", Quantity: 250}}},
		"symbol":   {Items: []account.QuoteItem{{Symbol: "not a symbol", Quantity: 100}}},
	} {
		if _, err := a.Quote(ctx(t), req); account.KindOf(err) != account.KindInput || account.ExitOf(err) != account.ExitUsage {
			t.Errorf("%s: %v, want an input error (exit 2)", name, err)
		}
	}
	paper := e.Open(account.Caller{Name: "paper caller", Env: brokerclient.EnvPaper})
	if _, err := paper.Quote(ctx(t), account.QuoteRequest{Items: []account.QuoteItem{{Symbol: "HTBX", Quantity: 100}}}); account.KindOf(err) != account.KindRefused {
		t.Errorf("paper caller: %v, want refused", err)
	}
	if n := writes(e); n != 0 {
		t.Errorf("%d writes reached the broker, want 0", n)
	}
}

// Status tells about the symbols asked for: easy to borrow, the located
// inventory, and the offers of the latest priced quote (a locate's or a
// price check's) with how it ended.
func statusShortable(t *testing.T, e *Env) {
	a := e.Open(caller("test shortable", nil))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false))
	res, err := a.Quote(ctx(t), account.QuoteRequest{Items: []account.QuoteItem{{Symbol: "RSHO", Quantity: 200}}})
	ok(t, err)
	follow(t, a, res.Started[0].ID)
	st, err := a.Status(ctx(t), account.StatusRequest{Symbols: []string{"HTBX", "RSHO", "AAPL"}})
	ok(t, err)
	if len(st.Shortable) != 3 {
		t.Fatalf("shortable %+v, want three symbols", st.Shortable)
	}
	htbx, rsho, aapl := st.Shortable[0], st.Shortable[1], st.Shortable[2]
	if htbx.EasyToBorrow || len(htbx.Located) != 1 || htbx.Located[0].Available != 300 || len(htbx.Offers) != 1 ||
		!htbx.Offers[0].Price.Equal(decimal.RequireFromString("0.015")) || htbx.OfferState != states.Filled {
		t.Errorf("HTBX %+v, want 300 located and its filled offer at 0.015", htbx)
	}
	if rsho.EasyToBorrow || len(rsho.Located) != 0 || len(rsho.Offers) != 2 || rsho.OfferState != states.Priced || rsho.OfferedAt.IsZero() {
		t.Errorf("RSHO %+v, want nothing located and both sides of its price check", rsho)
	}
	if !aapl.EasyToBorrow || len(aapl.Offers) != 0 {
		t.Errorf("AAPL %+v, want easy to borrow, no offers", aapl)
	}
	if _, err := a.Status(ctx(t), account.StatusRequest{Symbols: []string{"no symbol"}}); account.KindOf(err) != account.KindInput {
		t.Errorf("status of a bad symbol: %v, want an input error", err)
	}
}

// Spec "Cash ledger": the fee check syncs the ledger into the owner's
// database and matches a filled locate's fee (it lands FeeDelay after the
// fill); a negative grace is refused before anything is sent.
func feesReconciled(t *testing.T, e *Env) {
	a := e.Open(caller("test fees", nil))
	// What the fee check reads (the owner's poller reads history and
	// inventory meanwhile, on its own cadence).
	feeReads := func() int {
		n := 0
		for _, r := range e.Sim.Sim.Requests() {
			if r.Path == "/v1/api/accounts/LV100001" || strings.Contains(r.Path, "/cash-transactions/") {
				n++
			}
		}
		return n
	}
	before := feeReads()
	if _, err := a.Fees(ctx(t), account.FeesRequest{Window: locator.FeeWindow{Days: 1}, Grace: -time.Hour}); account.KindOf(err) != account.KindInput {
		t.Errorf("negative grace: %v, want an input error", err)
	}
	if n := feeReads() - before; n != 0 {
		t.Errorf("negative grace: %d fee-check reads sent, want 0", n)
	}
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false)
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", account.ExitOK)
	e.Sim.Clock.Advance(10 * time.Second)
	res, err := a.Fees(ctx(t), account.FeesRequest{Window: locator.FeeWindow{Days: 1}, Grace: time.Hour})
	ok(t, err)
	r := res.Report
	if feeReads() <= before {
		t.Error("the fee check read neither the account nor the ledger")
	}
	if r.Account != "LV100001" || res.Synced.Fetched < 1 || r.Problems() != 0 {
		t.Errorf("report of %s, synced %+v, %d problem(s): %s", r.Account, res.Synced, r.Problems(), r)
	}
	var mine []locator.FeeLine
	for _, l := range r.Lines {
		if l.WorkflowID == id {
			mine = append(mine, l)
		}
	}
	if len(mine) != 1 || mine[0].Status != locator.FeeMatched || mine[0].Kind != locator.LineFee || !mine[0].Charged.Equal(decimal.RequireFromString("4.50")) {
		t.Errorf("the locate's lines %+v, want one fee of 4.50 matched", mine)
	}
}

// Spec "P&L stream" and "Profit and loss response" rule 5: Today joins the
// open positions to the stream's model on the lot id, lists the working
// order placed and today's locate and credit-back (finished ones too), and
// nets each symbol's credit-back out of its spend and the spend out of its
// P&L; Status then reports the stream live.
func today(t *testing.T, e *Env) {
	a := e.Open(caller("test today", nil))
	w, _ := follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false))
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", account.ExitOK)
	s, err := a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 100, Type: brokercode.LocateTypeLocate})
	ok(t, err)
	cb, _ := follow(t, a, s.Started[0].ID)
	wantOutcome(t, cb, states.Credited, "credited — 100 Locate shares credited back", account.ExitOK)
	o, err := a.PlaceOrder(ctx(t), account.PlaceOrderRequest{Order: workflow.Order{Symbol: "MSFT", Side: "Buy", OpenClose: "Open",
		OrderType: "Limit", TimeInForce: "Day", Quantity: 10, LimitPrice: decimal.RequireFromString("1.00"), Route: "SMART"}})
	ok(t, err)
	if o.Terminal() {
		t.Fatalf("order %s %s, want it working", o.State, o.Reason)
	}

	// The test's own watch of the stream: what the owner's must agree with.
	c := e.Sim.Client(t, e.Sim.Live)
	pw, err := c.Streams.WatchPnL(ctx(t), []string{"LV100001"})
	ok(t, err)
	t.Cleanup(pw.Close)
	ok(t, pw.Wait(ctx(t)))
	want, _ := pw.Snapshot("LV100001")

	// The owner's watch starts with the first Today, which waits for its
	// snapshot.
	day, err := a.Today(ctx(t), account.TodayRequest{})
	ok(t, err)
	if day.PnL == nil || !day.PnL.DayPnl.Equal(want.DayPnl) || !day.PnL.TotalUnrealized.Equal(want.TotalUnrealized) {
		t.Fatalf("P&L %+v, want the stream's %+v", day.PnL, want.PnLTotals)
	}
	if len(day.Positions) != 1 || day.Positions[0].Symbol != "MSFT" || day.Positions[0].Shares != 100 ||
		!day.Positions[0].PnL.UnrealizedPnL.Equal(want.Positions[0].PnLCalc.UnrealizedPnL) {
		t.Errorf("positions %+v, want MSFT 100 with the stream's %+v", day.Positions, want.Positions)
	}
	if len(day.Orders) != 1 || day.Orders[0].ClientOrderID != o.ClientOrderID {
		t.Errorf("working orders %+v, want %s", day.Orders, o.ClientOrderID)
	}
	if len(day.Locates) != 2 || day.Locates[0].ID != cb.ID || day.Locates[1].ID != w.ID {
		t.Errorf("today's locates %+v, want the credit-back then the locate", day.Locates)
	}
	var htbx *account.SymbolDay
	for i := range day.Symbols {
		if day.Symbols[i].Symbol == "HTBX" {
			htbx = &day.Symbols[i]
		}
	}
	if htbx == nil || !htbx.Spend.Equal(decimal.RequireFromString("4.50")) || !htbx.Recovery.IsPositive() ||
		!htbx.NetSpend.Equal(htbx.Spend.Sub(htbx.Recovery)) || !htbx.NetPnL.Equal(htbx.DayPnL.Sub(htbx.NetSpend)) {
		t.Errorf("HTBX's day %+v, want spend 4.50 less a recovery, and the P&L net of it", htbx)
	}
	st, err := a.Status(ctx(t), account.StatusRequest{})
	ok(t, err)
	if st.Broker.Stream != account.StreamLive || !st.Broker.FailingSince.IsZero() {
		t.Errorf("broker %+v, want the stream live and no failing read", st.Broker)
	}
	if _, err := a.CancelOrder(ctx(t), account.CancelOrderRequest{ClientOrderID: o.ClientOrderID}); err != nil {
		t.Error(err)
	}
}
