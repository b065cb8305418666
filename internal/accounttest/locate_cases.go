// Locate cases: a locate filled, the guards and input checks that send
// nothing, a market not open, a batch, one id started once.

package accounttest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

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
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", console.ExitOK)
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
		if account.KindOf(err) != account.KindRefused || console.ExitOf(err) != console.ExitUsage || !strings.Contains(err.Error(), "nothing was sent") {
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
		if _, err := a.Locate(c, req); account.KindOf(err) != account.KindInput || console.ExitOf(err) != console.ExitUsage {
			t.Errorf("%s: %v, want an input error (exit 2)", name, err)
		}
	}
	if _, err := a.Short(c, account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.RequireFromString("19"), Policy: capped("0.05"), Confirm: true}); account.KindOf(err) != account.KindInput {
		t.Errorf("short to confirm with nobody to confirm: %v, want an input error", err)
	}
	// Spec "Orders" rules 1-2 and the fat-finger guard: orders
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
		req.Guard.RefPrice = decimal.RequireFromString("12.50") // refused for its own fault, not for want of a reference
		if _, err := a.Short(c, req); account.KindOf(err) != account.KindInput || console.ExitOf(err) != console.ExitUsage {
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
		if account.KindOf(err) != account.KindNotOpen || console.ExitOf(err) != console.ExitUsage {
			t.Errorf("%s: %v, want not open (exit 2)", name, err)
		}
	}
	id := locateOne(t, a, account.LocateItem{Symbol: "AAPL", Quantity: 100, Policy: capped("0.05")}, false)
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.NotNeeded, "not_needed — easy to borrow", console.ExitOK)
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
