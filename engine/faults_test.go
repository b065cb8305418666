package engine_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// docs/design.md rule 1, under the simulator's fault
// injection on the locate routes (5xx, resets before and after the broker
// processed the request, delays; brokersim.Faults): a quote lost on the
// way is sent again under a new quoteReqID (up to workflow.MaxResends
// times), so no locate ends failed because a quote was lost, and judged
// from the simulator's own history no symbol has two quotes that reached
// the broker nor a second fill.
func TestLostQuotesAreSentAgainUnderFaults(t *testing.T) {
	t.Parallel()
	const n = 64
	b, symbols := setupSymbols(t, n)
	if err := b.sim.Sim.SetFaults(brokersim.Faults{
		Match:   "/locates/",
		Rate500: 0.04, Rate503: 0.03, RateReset: 0.04, RateResetAfter: 0.03, RateDelay: 0.03,
		Delay: brokersim.Duration(50 * time.Millisecond),
	}); err != nil {
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
	ended := map[states.State]int{}
	requoted, lostTwice := 0, 0 // lostTwice: locates whose quote was sent again more than once
	for _, h := range handles {
		w := b.wait(t, h.ID)
		ended[w.State]++
		if w.State == states.Failed {
			t.Errorf("%s %s failed: %s", w.ID, w.Symbol, w.Reason)
		}
		if w.Resends > 1 {
			lostTwice++
		}
		log, err := b.store.Transitions(t.Context(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range log {
			if tr.Event == states.Requote {
				requoted++
			}
		}
	}
	lost := 0
	for _, r := range b.requests("POST /v1/api/accounts/locates/quote") {
		if r.Status == 0 || r.Status >= 500 {
			lost++
		}
	}
	rows, _, err := b.sim.Client(t, b.sim.Live).Locates.History(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	quotes, fills := map[string]map[string]bool{}, map[string]int{}
	for _, r := range rows {
		if quotes[r.Symbol] == nil {
			quotes[r.Symbol] = map[string]bool{}
		}
		quotes[r.Symbol][r.BaseID()] = true
		if r.LocateStatus == 50 {
			fills[r.Symbol]++
		}
	}
	duplicates := 0
	for _, sym := range symbols {
		if len(quotes[sym]) > 1 {
			duplicates++
			t.Errorf("%s: %d quotes reached the broker, want 1", sym, len(quotes[sym]))
		}
		if fills[sym] > 1 {
			t.Errorf("%s: %d fills, want at most 1", sym, fills[sym])
		}
	}
	t.Logf("%d locates under faults: ended %v; %d quotes answered 5xx or reset, %d lost and sent again, %d lost more than once; %d duplicate quotes at the broker",
		n, ended, lost, requoted, lostTwice, duplicates)
	if ended[states.Filled] != n {
		t.Errorf("%d of %d locates filled (%v), want all", ended[states.Filled], n, ended)
	}
}

// Spec "Locate limits" (one open quote per symbol): a
// quote thought lost that turns up before its replacement leaves is taken
// as the workflow's quote, and the replacement is never sent. The first
// quote's connection is reset before the simulator takes it; once the
// engine has given it up, the test delivers it late under its own id.
func TestLateLostQuoteIsTakenBeforeItsReplacementLeaves(t *testing.T) {
	t.Parallel()
	var held atomic.Bool
	var lost atomic.Value
	requoted := make(chan struct{})
	b := setup(t, setupOpt{
		clockRuns: func() bool { return !held.Load() },
		onUpdate: func(u engine.Update) {
			if u.Event == states.Requote {
				held.Store(true) // before the replacement's turn comes
				lost.Store(u.Workflow.LostQuoteReqID)
				close(requoted)
			}
		},
	})
	quoteRoute := "POST /v1/api/accounts/locates/quote"
	if err := b.sim.Sim.SetFaults(brokersim.Faults{Script: []brokersim.FaultStep{{Match: quoteRoute, Kind: "reset", Count: 1}}}); err != nil {
		t.Fatal(err)
	}
	h, err := b.engine.Locate(t.Context(), engine.Request{Symbol: "HTBX", Quantity: 300, Policy: auto("0.02")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-requoted:
	case <-time.After(20 * time.Second): // a bound on a signal, not a window
		t.Fatal("the lost quote was not given up")
	}
	id := lost.Load().(string)
	if _, _, err := b.sim.Client(t, b.sim.Live).Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 300, QuoteReqID: id}); err != nil {
		t.Fatal(err)
	}
	b.sim.Advance(5 * time.Second) // offered before the engine looks again
	held.Store(false)
	w := b.wait(t, h.ID)
	expect(t, w, states.Filled)
	if w.QuoteReqID != id || w.LostQuoteReqID != "" {
		t.Errorf("filled under %s (lost %q), want the late quote %s taken", w.QuoteReqID, w.LostQuoteReqID, id)
	}
	if n := len(b.requests(quoteRoute)); n != 2 {
		t.Errorf("%d quotes reached the simulator, want 2 (the reset one and its late delivery): the replacement is never sent", n)
	}
	if n := len(b.requests("POST /v1/api/accounts/locates/accept")); n != 1 {
		t.Errorf("%d accepts, want 1", n)
	}
}
