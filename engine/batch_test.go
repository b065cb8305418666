package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// batchSymbols adds n locatable pools to the scenario and returns their
// symbols.
func batchSymbols(n int, out *[]string) func(*brokersim.Scenario) {
	return func(sc *brokersim.Scenario) {
		for i := range n {
			sym := fmt.Sprintf("BAT%02d", i)
			*out = append(*out, sym)
			sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: sym, LocateType: 1, Shares: 10000, Price: brokersim.Dec(decimal.RequireFromString("0.01"))})
		}
	}
}

// One bad request refuses the whole batch before anything is sent.
func TestLocateAllValidatesEveryRequestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	before := len(b.sim.Sim.Requests()) - len(b.requests("/locates/history")) - len(b.requests("/locates/inventory"))
	hs, err := b.engine.LocateAll(t.Context(), []engine.Request{
		{Symbol: "HTBX", Quantity: 100, Policy: auto("0.02")}, {Symbol: "HTBY", Quantity: 150, Policy: auto("0.05")},
	})
	if !errors.Is(err, brokercode.ErrInput) || hs != nil {
		t.Fatalf("LocateAll with a bad quantity: %v, %v; want ErrInput and no handles", hs, err)
	}
	if after := len(b.sim.Sim.Requests()) - len(b.requests("/locates/history")) - len(b.requests("/locates/inventory")); after != before {
		t.Errorf("%d requests sent for a batch with bad input", after-before)
	}
}

// A batch keeps the quote route at its pace: quotes leave about a second
// apart (the client's pacer, never closer), one order-book read serves every
// coverage check, inventory is read at most once per locate, every offer is
// accepted and nothing meets a 429.
func TestLocateAllQuotesAtTheRoutePace(t *testing.T) {
	t.Parallel()
	var symbols []string
	b := setup(t, setupOpt{scenario: batchSymbols(12, &symbols)})
	reqs := make([]engine.Request, len(symbols))
	for i, sym := range symbols {
		reqs[i] = engine.Request{Symbol: sym, Quantity: 500, Policy: auto("0.02")}
	}
	hs, err := b.engine.LocateAll(t.Context(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.requests("/orders")); n != 1 {
		t.Errorf("%d order-book reads for the batch, want 1", n)
	}
	for _, h := range hs {
		expect(t, b.wait(t, h.ID), states.Filled)
	}
	b.no429(t)
	if n := len(b.requests("/locates/inventory")); n > len(symbols) {
		t.Errorf("%d inventory reads (the poller's and the coverage checks') for %d locates, want at most one each", n, len(symbols))
	}
	quotes := b.requests("POST /v1/api/accounts/locates/quote")
	if len(quotes) != len(symbols) {
		t.Fatalf("%d quotes for %d symbols", len(quotes), len(symbols))
	}
	var gaps []time.Duration
	for i := 1; i < len(quotes); i++ {
		gaps = append(gaps, quotes[i].Time.Sub(quotes[i-1].Time))
	}
	slices.Sort(gaps)
	if gaps[0] < 950*time.Millisecond {
		t.Errorf("quotes %s apart: the quote route allows 1 per second", gaps[0])
	}
	if med := gaps[len(gaps)/2]; med > 1100*time.Millisecond {
		t.Errorf("median quote gap %s, want the route's pace (about 1 s)", med)
	}
}
