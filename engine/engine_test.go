package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

type testBundle struct {
	sim      *simtest.Bundle
	store    *store.Store
	dbPath   string
	engine   *engine.Engine
	onUpdate func(engine.Update)
	backlog  int
	mu       sync.Mutex
	updates  []engine.Update
	// loops are the engines start made, for the driver of virtual time.
	loops simtest.Loops
}

type setupOpt struct {
	sim      []simtest.Option
	scenario func(*brokersim.Scenario)
	ask      func(context.Context, engine.Offer) bool
	noStart  bool
	// clockRuns, when set, holds the virtual clock still while it reports
	// false (a test stopping an engine mid-wait, say).
	clockRuns func() bool
	// onUpdate, when set, also receives every update, on the loop.
	onUpdate func(engine.Update)
	// backlog is the engine's Config.Backlog.
	backlog int
	// driver is the store's database (storetest.Drivers): SQLite when unset.
	driver string
}

// setup starts the simulator, a store on a temp file and an engine for
// LV100001 on one fake clock driven as virtual time.
func setup(t *testing.T, o setupOpt) *testBundle {
	t.Helper()
	opts := o.sim
	if o.scenario != nil {
		opts = append(opts, simtest.WithScenario(o.scenario))
	}
	b := &testBundle{sim: simtest.New(t, opts...), dbPath: filepath.Join(t.TempDir(), "locator.db")}
	if o.driver != "" {
		b.dbPath = storetest.DSN(t, o.driver)
	}
	st, err := store.Open(t.Context(), b.dbPath, b.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b.store = st
	b.sim.RunClockWhile(t, 2, func() bool { return b.loops.Idle() && (o.clockRuns == nil || o.clockRuns()) })
	b.onUpdate, b.backlog = o.onUpdate, o.backlog
	if !o.noStart {
		b.engine = b.start(t, o.ask)
	}
	return b
}

// start builds and starts an engine on the bundle's store (again, after a
// simulated crash).
func (b *testBundle) start(t *testing.T, ask func(context.Context, engine.Offer) bool) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Config{
		Client: b.sim.Client(t, b.sim.Live), Store: b.store, Clock: b.sim.Clock, Account: "LV100001",
		Env: brokerclient.EnvLive, Ask: ask, Logger: slog.New(slog.NewTextHandler(tWriter{t}, nil)), Backlog: b.backlog,
		OnUpdate: func(u engine.Update) {
			b.mu.Lock()
			b.updates = append(b.updates, u)
			b.mu.Unlock()
			if b.onUpdate != nil {
				b.onUpdate(u)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b.loops.Add(e)
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// setupSymbols is setup with n fresh hard-to-borrow symbols, HTB00 on,
// each offered at 0.01.
func setupSymbols(t *testing.T, n int) (*testBundle, []string) {
	t.Helper()
	var symbols []string
	b := setup(t, setupOpt{scenario: func(sc *brokersim.Scenario) {
		for i := range n {
			sym := fmt.Sprintf("HTB%02d", i)
			symbols = append(symbols, sym)
			sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: sym, LocateType: 1, Shares: 10000, Price: brokersim.Dec(decimal.RequireFromString("0.01"))})
		}
	}})
	return b, symbols
}

// tWriter sends the engine's log to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (b *testBundle) locate(t *testing.T, symbol string, qty int64, p workflow.Policy) *workflow.Workflow {
	t.Helper()
	h, err := b.engine.Locate(t.Context(), engine.Request{Symbol: symbol, Quantity: qty, Policy: p})
	if err != nil {
		t.Fatalf("locate %s %d: %v", symbol, qty, err)
	}
	return b.wait(t, h.ID)
}

func (b *testBundle) wait(t *testing.T, id string) *workflow.Workflow {
	t.Helper()
	// A hang guard, not a bound on speed: virtual time moves a timer at a
	// time, each after a quiet spell, and a quote's settle window read
	// every half second makes many timers; a workflow whose quote was lost
	// twice spans a minute of virtual time, and under the whole suite on
	// two cores 20 s of the wall's did not always cover it.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	w, err := b.engine.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return w
}

// requests returns the simulator's log lines "METHOD path" matching sub.
func (b *testBundle) requests(sub string) []brokersim.RequestRecord {
	var out []brokersim.RequestRecord
	for _, r := range b.sim.Sim.Requests() {
		if strings.Contains(r.Method+" "+r.Path, sub) {
			out = append(out, r)
		}
	}
	return out
}

func (b *testBundle) no429(t *testing.T) {
	t.Helper()
	for _, r := range b.sim.Sim.Requests() {
		if r.Status == 429 {
			t.Errorf("the simulator answered 429 to %s %s", r.Method, r.Path)
		}
	}
}

func auto(maxPrice string) workflow.Policy {
	p := workflow.Policy{AutoAccept: true}
	if maxPrice != "" {
		p.MaxPrice = decimal.RequireFromString(maxPrice)
	}
	return p
}

func expect(t *testing.T, w *workflow.Workflow, state states.State) {
	t.Helper()
	if w.State != state {
		t.Fatalf("%s %s: state %s (%s), want %s", w.ID, w.Symbol, w.State, w.Reason, state)
	}
}

// Spec "Short locates" rule 1 and the ensure semantics: an easy-to-borrow
// symbol needs no locate; nothing is quoted.
func TestEasyToBorrowNeedsNoLocate(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	w := b.locate(t, "AAPL", 1000, auto(""))
	expect(t, w, states.NotNeeded)
	if n := len(b.requests("locates/quote")); n != 0 {
		t.Errorf("%d quotes sent, want 0", n)
	}
}

// A plain locate is quoted, offered, accepted inside the window and filled;
// a second request the inventory covers is answered without a quote, and a
// larger one quotes only the shortfall (rounded up to 100).
func TestLocateFilledThenCoveredThenShortfall(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	w := b.locate(t, "HTBX", 300, auto("0.02"))
	expect(t, w, states.Filled)
	if w.Quantity != 300 || w.Price.String() != "0.015" || w.LocateType != "Locate" || w.AcceptedID != w.QuoteReqID {
		t.Errorf("filled workflow %+v", w)
	}
	expect(t, b.locate(t, "HTBX", 200, auto("0.02")), states.Covered)
	w3 := b.locate(t, "HTBX", 500, auto("0.02"))
	expect(t, w3, states.Filled)
	if w3.Quantity != 200 {
		t.Errorf("shortfall quote of %d shares, want 200", w3.Quantity)
	}
	quotes := b.requests("POST /v1/api/accounts/locates/quote")
	if len(quotes) != 2 {
		t.Fatalf("%d quotes, want 2", len(quotes))
	}
	if gap := quotes[1].Time.Sub(quotes[0].Time); gap < 30*time.Second {
		t.Errorf("same-symbol quotes %s apart, want at least 30 s (spec \"Locate limits\")", gap)
	}
	if n := len(b.requests("POST /v1/api/accounts/locates/accept")); n != 2 {
		t.Errorf("%d accepts, want 2", n)
	}
	log, err := b.store.Transitions(t.Context(), w.ID)
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, tr := range log {
		path = append(path, string(tr.To))
	}
	if got := strings.Join(path, ">"); !strings.HasSuffix(got, "offered>accepting>filled") || !strings.HasPrefix(got, "requested>quoting") {
		t.Errorf("transition path %s", got)
	}
	b.no429(t)
}

// Spec "Short locates" rule 2: a Reg SHO pair is one workflow; the engine
// takes the cheaper side within policy, SingleUse only when allowed, and the
// sibling's expiry is expected.
func TestRegSHOPair(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		symbol  string
		policy  workflow.Policy
		state   states.State
		leg     string // "" base, ".SU" shadow
		price   string
		locType string
	}{
		{"cheaper SingleUse when allowed", "RSHO", workflow.Policy{AutoAccept: true, AllowSingleUse: true}, states.Filled, ".SU", "0.04", "SingleUse"},
		{"PreBorrow when SingleUse is not allowed", "RSHO", workflow.Policy{AutoAccept: true}, states.Filled, "", "0.09", "PreBorrow"},
		{"declined when PreBorrow is above the cap", "RSHO", workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString("0.05")}, states.Declined, "", "", ""},
		{"only SingleUse priced, allowed", "RSSU", workflow.Policy{AutoAccept: true, AllowSingleUse: true}, states.Filled, ".SU", "0.05", "SingleUse"},
		{"only SingleUse priced, not allowed", "RSSU", workflow.Policy{AutoAccept: true}, states.Declined, "", "", ""},
		{"no inventory on either side expires", "RSDRY", workflow.Policy{AutoAccept: true, AllowSingleUse: true}, states.Expired, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpt{})
			w := b.locate(t, tc.symbol, 1000, tc.policy)
			expect(t, w, tc.state)
			if tc.state == states.Filled {
				if w.AcceptedID != w.QuoteReqID+tc.leg || w.Price.String() != tc.price || w.LocateType != tc.locType {
					t.Errorf("accepted %s at %s (%s), want %s%s at %s (%s)", w.AcceptedID, w.Price, w.LocateType, w.QuoteReqID, tc.leg, tc.price, tc.locType)
				}
				if len(w.Legs) != 2 {
					t.Errorf("legs %v, want both rows of the pair", w.Legs)
				}
			}
			if tc.state == states.Declined {
				if n := len(b.requests("DELETE /v1/api/accounts/locates/cancel")); n != 1 {
					t.Errorf("%d cancels sent, want 1: a declined offer is cancelled, not left to expire", n)
				}
			}
			if n := len(b.requests("POST /v1/api/accounts/locates/accept")); (tc.state == states.Filled) != (n == 1) {
				t.Errorf("%d accepts sent", n)
			}
		})
	}
}

// The cost policy: an offer above max price or max total cost is declined
// and cancelled; the broker's history shows it Canceled (52).
func TestDeclinedByPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	w := b.locate(t, "HTBY", 1000, auto("0.02"))
	expect(t, w, states.Declined)
	if !strings.Contains(w.Reason, "above the cap") {
		t.Errorf("reason %q", w.Reason)
	}
	w2 := b.locate(t, "HTBX", 1000, workflow.Policy{AutoAccept: true, MaxCost: decimal.RequireFromString("10")})
	expect(t, w2, states.Declined) // 0.015 × 1000 = 15 > 10
	rows, _, err := b.sim.Client(t, b.sim.Live).Locates.History(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.LocateStatus != brokercode.LocateStatusCanceled {
			t.Errorf("history row %s status %s, want Canceled", r.QuoteReqID, r.LocateStatus)
		}
	}
}

// Spec "Locate errors" (asynchronous): the broker's rejections end the
// workflow as rejected, with its reason.
func TestRejected(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	for sym, reason := range map[string]string{"RSTR": "R06", "NOINV": "11 No shares available"} {
		w := b.locate(t, sym, 100, auto(""))
		expect(t, w, states.Rejected)
		if !strings.HasPrefix(w.Reason, reason) {
			t.Errorf("%s: reason %q, want prefix %q", sym, w.Reason, reason)
		}
	}
}

// Asked offers: a yes accepts; a no declines; no answer before the window's
// end declines without sending a late accept.
func TestAskPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer func(ctx context.Context, o engine.Offer) bool
		state  states.State
	}{
		{"yes", func(ctx context.Context, o engine.Offer) bool { return true }, states.Filled},
		{"no", func(ctx context.Context, o engine.Offer) bool { return false }, states.Declined},
		{"silence", func(ctx context.Context, o engine.Offer) bool { <-ctx.Done(); return true }, states.Declined},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var offered []engine.Offer
			var mu sync.Mutex
			b := setup(t, setupOpt{ask: func(ctx context.Context, o engine.Offer) bool {
				mu.Lock()
				offered = append(offered, o)
				mu.Unlock()
				return tc.answer(ctx, o)
			}})
			w := b.locate(t, "HTBX", 400, workflow.Policy{})
			expect(t, w, tc.state)
			mu.Lock()
			defer mu.Unlock()
			if len(offered) != 1 || offered[0].Total.String() != "6" || offered[0].Shares != 400 {
				t.Errorf("offers asked %+v, want one of 0.015 × 400 = 6", offered)
			}
			if n := len(b.requests("locates/accept")); (tc.state == states.Filled) != (n == 1) {
				t.Errorf("%d accepts sent", n)
			}
		})
	}
}

// Cancel: a workflow waiting on the broker is cancelled there and ends
// canceled (52); a queued one ends without anything sent.
func TestCancel(t *testing.T) {
	t.Parallel()
	asked, withdrawn := make(chan engine.Offer, 1), make(chan struct{})
	// Virtual time stands still from the moment the second locate joins
	// the quote queue (on the loop, before it sleeps on the spacing) to
	// its cancel: under load it ran past the spacing, and the locate was
	// quoted before the cancel came.
	second, queued := workflow.NewID(), make(chan struct{})
	var held atomic.Bool
	b := setup(t, setupOpt{ask: func(ctx context.Context, o engine.Offer) bool {
		asked <- o
		select {
		case <-ctx.Done():
		case <-withdrawn: // the person's prompt goes with the cancel
		}
		return false
	}, clockRuns: func() bool { return !held.Load() }, onUpdate: func(u engine.Update) {
		if u.Workflow != nil && u.Workflow.ID == second && !u.QueuedUntil.IsZero() {
			held.Store(true)
			close(queued)
		}
	}})
	h, err := b.engine.Locate(t.Context(), engine.Request{Symbol: "HTBX", Quantity: 100})
	if err != nil {
		t.Fatal(err)
	}
	o := <-asked
	if err := b.engine.Cancel(t.Context(), h.ID, workflow.CancelAsked{}); err != nil {
		t.Fatal(err)
	}
	expect(t, b.wait(t, h.ID), states.Canceled)
	close(withdrawn)
	if o.WorkflowID != h.ID {
		t.Errorf("offer for %s", o.WorkflowID)
	}
	// A second request on the same symbol waits 30 s in the queue: cancel
	// it there.
	h2, err := b.engine.Locate(t.Context(), engine.Request{ID: second, Symbol: "HTBX", Quantity: 100})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-queued:
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("the second locate did not join the quote queue")
	}
	if err := b.engine.Cancel(t.Context(), h2.ID, workflow.CancelAsked{}); err != nil {
		t.Fatal(err)
	}
	held.Store(false)
	w2 := b.wait(t, h2.ID)
	expect(t, w2, states.Canceled)
	if n := len(b.requests("locates/quote")); n != 1 {
		t.Errorf("%d quotes, want 1", n)
	}
	if err := b.engine.Cancel(t.Context(), h2.ID, workflow.CancelAsked{}); !errors.Is(err, engine.ErrNotOpen) {
		t.Errorf("cancel of an ended workflow: %v", err)
	}
}

// Credit-back: Locate shares are sold back once and the workflow ends
// credited when the credit clears; a request above the row's available is
// refused with nothing sent.
func TestCreditBack(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	expect(t, b.locate(t, "HTBX", 500, auto("")), states.Filled)
	if _, err := b.engine.CreditBack(t.Context(), engine.CreditBackRequest{Symbol: "HTBX", Shares: 600, Type: brokercode.LocateTypeLocate}); !errors.Is(err, brokercode.ErrInput) {
		t.Fatalf("credit-back above available: %v", err)
	}
	if _, err := b.engine.CreditBack(t.Context(), engine.CreditBackRequest{Symbol: "HTBX", Shares: 200, Type: brokercode.LocateTypePreBorrow}); !errors.Is(err, brokercode.ErrInput) {
		t.Fatalf("credit-back of a type not held: %v", err)
	}
	h, err := b.engine.CreditBack(t.Context(), engine.CreditBackRequest{Symbol: "HTBX", Shares: 200, Type: brokercode.LocateTypeLocate})
	if err != nil {
		t.Fatal(err)
	}
	w := b.wait(t, h.ID)
	expect(t, w, states.Credited)
	sells := b.requests("POST /v1/api/accounts/locates/sell")
	if len(sells) != 1 || !strings.Contains(sells[0].Body, `"locateType":"Locate"`) {
		t.Errorf("sells %+v, want one with locateType Locate", sells)
	}
	inv, _, err := b.sim.Client(t, b.sim.Live).Locates.Inventory(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if got := brokerclient.Available(inv, "HTBX"); got != 300 {
		t.Errorf("available after crediting 200 of 500: %d", got)
	}
}

// Bad input is refused before anything is sent.
func TestBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	sent := func() int { // everything but the poller's own reads
		return len(b.sim.Sim.Requests()) - len(b.requests("/locates/history")) - len(b.requests("/locates/inventory"))
	}
	before := sent()
	for _, req := range []engine.Request{
		{Symbol: "HTBX", Quantity: 150}, {Symbol: "HTBX", Quantity: 0}, {Symbol: "", Quantity: 100},
		{Symbol: "ht/bx", Quantity: 100}, {Symbol: "HTBX", Quantity: 100, Policy: workflow.Policy{MaxPrice: decimal.NewFromInt(-1)}},
	} {
		if _, err := b.engine.Locate(t.Context(), req); !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("%+v: %v, want ErrInput", req, err)
		}
	}
	if after := sent(); after != before {
		t.Errorf("%d requests sent for bad input", after-before)
	}
}

// With 20 symbols requested at once, one history GET per poller tick serves
// every workflow, no 429 is provoked, and every offer within policy is
// accepted before its window closes.
func TestTwentySymbolsAtOnce(t *testing.T) {
	t.Parallel()
	b, symbols := setupSymbols(t, 20)
	var handles []*engine.Handle
	for _, sym := range symbols {
		h, err := b.engine.Locate(t.Context(), engine.Request{Symbol: sym, Quantity: 500, Policy: auto("0.02")})
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, h)
	}
	for _, h := range handles {
		expect(t, b.wait(t, h.ID), states.Filled)
	}
	b.no429(t)
	histories := len(b.requests("GET /v1/api/accounts/LV100001/locates/history"))
	if polls := b.engine.Polls(); histories != polls {
		t.Errorf("%d history GETs for %d poller ticks: want one per tick", histories, polls)
	}
	if histories > 60 {
		t.Errorf("%d history GETs for 20 workflows: the poller should share them", histories)
	}
	quotes := b.requests("POST /v1/api/accounts/locates/quote")
	for i := 1; i < len(quotes); i++ {
		if gap := quotes[i].Time.Sub(quotes[i-1].Time); gap < 950*time.Millisecond {
			t.Errorf("quotes %d and %d %s apart: the quote route allows 1 per second", i-1, i, gap)
		}
	}
}

// Recovery (docs/design.md rule 1): an engine stopped after its quote left is
// replaced by a new one that reconciles from history and finishes the
// workflow without quoting again.
func TestRecoveryAfterStop(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{noStart: true})
	first := b.start(t, nil)
	b.engine = first
	h, err := first.Locate(t.Context(), engine.Request{Symbol: "HTBX", Quantity: 300, Policy: auto("")})
	if err != nil {
		t.Fatal(err)
	}
	for len(b.requests("locates/quote")) == 0 {
		time.Sleep(time.Millisecond) // wait for the dispatcher to send (wall clock, not a window)
	}
	first.Close()
	b.sim.Advance(5 * time.Second) // the offer appears while no engine runs
	b.engine = b.start(t, nil)
	w := b.wait(t, h.ID)
	expect(t, w, states.Filled)
	if n := len(b.requests("locates/quote")); n != 1 {
		t.Errorf("%d quotes across the restart, want 1", n)
	}
	raw, _ := json.Marshal(w.Legs)
	if !strings.Contains(string(raw), `"status":50`) {
		t.Errorf("legs %s", raw)
	}
}

// And spec "Rate limits" (recovery of a 429): accepts run on the
// workers, not on the poller. With the simulator answering the first
// accepts with a burst of 429s, history keeps its cadence (from the
// simulator's request log, on the fake clock) and every offer is still
// accepted inside its window.
func TestAccept429BurstStallsNothing(t *testing.T) {
	t.Parallel()
	b, symbols := setupSymbols(t, 4)
	if err := b.sim.Sim.SetFaults(brokersim.Faults{Script: []brokersim.FaultStep{{Match: "POST /v1/api/accounts/locates/accept", Kind: "429", Count: 4}}}); err != nil {
		t.Fatal(err)
	}
	var handles []*engine.Handle
	for _, sym := range symbols {
		h, err := b.engine.Locate(t.Context(), engine.Request{Symbol: sym, Quantity: 500, Policy: auto("0.02")})
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, h)
	}
	var last time.Time
	for _, h := range handles {
		w := b.wait(t, h.ID)
		expect(t, w, states.Filled)
		if w.UpdatedAt.After(last) {
			last = w.UpdatedAt
		}
	}
	var throttled int
	var firstThrottle, lastAccept time.Time
	for _, r := range b.requests("POST /v1/api/accounts/locates/accept") {
		switch {
		case r.Status == 429:
			if throttled++; throttled == 1 {
				firstThrottle = r.Time
			}
		case r.Time.After(lastAccept):
			lastAccept = r.Time
		}
	}
	if throttled != 4 || lastAccept.Sub(firstThrottle) < 3*time.Second {
		t.Fatalf("%d accepts answered 429 (want the scripted 4), the last accept %s after the first 429 (want a back-off of seconds)",
			throttled, lastAccept.Sub(firstThrottle))
	}
	first := b.requests("POST /v1/api/accounts/locates/quote")[0].Time
	var prev time.Time
	for _, r := range b.requests("GET /v1/api/accounts/LV100001/locates/history") {
		if r.Time.Before(first) || r.Time.After(last) {
			continue
		}
		if !prev.IsZero() {
			if gap := r.Time.Sub(prev); gap > 2500*time.Millisecond {
				t.Errorf("history polls %s apart at %s while offers were live: the 429 back-off stalled polling", gap, r.Time.Format(time.TimeOnly))
			}
		}
		prev = r.Time
	}
}

// docs/design.md rule 4: with the broker's clock two days
// behind, or five minutes ahead of, this machine's, offers are measured on
// the broker's clock: locates fill, a refused offer is cancelled, and
// nothing is left open at the broker.
func TestBrokerClockSkew(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{-48 * time.Hour, 5 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpt{sim: []simtest.Option{simtest.WithSimOption(brokersim.WithClockSkew(skew))}})
			expect(t, b.locate(t, "HTBX", 300, auto("0.02")), states.Filled)
			expect(t, b.locate(t, "HTBY", 300, auto("0.02")), states.Declined)
			if off, ok := b.sim.Client(t, b.sim.Live).BrokerClockOffset(); ok {
				t.Errorf("a fresh client knows an offset %s before any answer", off)
			}
			rows, _, err := b.sim.Client(t, b.sim.Live).Locates.History(t.Context(), "LV100001")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.LocateStatus == brokercode.LocateStatusOffered || r.LocateStatus == brokercode.LocateStatusPending {
					t.Errorf("row %s left open at the broker (%s)", r.QuoteReqID, r.LocateStatus)
				}
			}
		})
	}
}

// Queued counts the locates waiting for their turn to quote: a second
// request of a symbol waits behind the first one's open quote.
func TestQueuedCountsLocatesWaitingToQuote(t *testing.T) {
	t.Parallel()
	b, symbols := setupSymbols(t, 1)
	p := workflow.Policy{AutoAccept: true}
	first, err := b.engine.Locate(t.Context(), engine.Request{Symbol: symbols[0], Quantity: 100, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.engine.Locate(t.Context(), engine.Request{Symbol: symbols[0], Quantity: 500, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if n := b.engine.Queued(); n != 1 {
		t.Errorf("queued behind the first quote: %d, want 1", n)
	}
	b.wait(t, first.ID)
	b.wait(t, second.ID)
	if n := b.engine.Queued(); n != 0 {
		t.Errorf("queued after both ended: %d", n)
	}
}

// TestSubscribeGoneBeforeTheLoop: a subscriber whose context ended before
// the loop took its subscription in (found by generated days, seed 1: a
// restart of the owner while its account API subscribed) gets a closed
// channel, and the loop closes it only once: before, Subscribe closed it
// and the loop closed it again when it stopped, a panic.
func TestSubscribeGoneBeforeTheLoop(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	for range 20 {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		ch := b.engine.Subscribe(ctx)
		for range ch { // closed, at once or when the loop has it
		}
	}
	b.engine.Close() // no second close of any channel
}
