package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// A price check quotes, records the offer and cancels it at once: a plain
// symbol and both sides of a Reg SHO pair end priced with their prices and
// types, an easy-to-borrow symbol is not quoted, nothing is accepted or
// located, and every quote's history rows show 52 Canceled. A locate of a
// symbol just priced waits its 30 s turn behind the price check's quote
// (spec "Locate limits"), so the broker never sees a 14 or a 429.
func TestPriceCheck(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	hs, err := b.engine.PriceCheckAll(t.Context(), []engine.Request{
		{Symbol: "HTBX", Quantity: 300}, {Symbol: "RSHO", Quantity: 200}, {Symbol: "AAPL", Quantity: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	htbx, rsho, aapl := b.wait(t, hs[0].ID), b.wait(t, hs[1].ID), b.wait(t, hs[2].ID)
	expect(t, htbx, states.Priced)
	expect(t, rsho, states.Priced)
	expect(t, aapl, states.NotNeeded)
	if p := workflow.Prices(htbx); len(p) != 1 || p[0].Price.String() != "0.015" || p[0].LocateType != brokercode.TypeCodeLocate || p[0].Total.String() != "4.5" {
		t.Errorf("HTBX prices %+v, want one Locate offer of 0.015 × 300", p)
	}
	if p := workflow.Prices(rsho); len(p) != 2 || p[0].LocateType != brokercode.TypeCodePreBorrow || p[0].Price.String() != "0.09" ||
		p[1].LocateType != brokercode.TypeCodeSingleUse || p[1].Price.String() != "0.04" || !strings.HasSuffix(p[1].QuoteReqID, ".SU") {
		t.Errorf("RSHO prices %+v, want PreBorrow 0.09 and SingleUse 0.04", p)
	}
	if n := len(b.requests("locates/accept")); n != 0 {
		t.Errorf("%d accepts sent, want 0", n)
	}
	rows, _, err := b.sim.Client(t, b.sim.Live).Locates.History(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Errorf("%d history rows, want 3 (HTBX, RSHO and RSHO.SU)", len(rows))
	}
	for _, r := range rows {
		if r.LocateStatus != 52 {
			t.Errorf("%s %s: status %d, want 52 Canceled", r.Symbol, r.QuoteReqID, r.LocateStatus)
		}
	}
	if inv := b.engine.Inventory(); len(inv) != 0 {
		t.Errorf("inventory %+v after price checks, want none", inv)
	}

	w := b.locate(t, "HTBX", 300, auto("0.02"))
	expect(t, w, states.Filled)
	quotes := b.requests("locates/quote")
	if len(quotes) != 3 {
		t.Fatalf("%d quotes, want 3", len(quotes))
	}
	if gap := quotes[2].Time.Sub(quotes[0].Time); gap < 30e9 {
		t.Errorf("the locate of HTBX left %s after its price check, want at least 30 s", gap)
	}
	b.no429(t)
}

// A price check takes no policy and asks nobody: refused before anything
// is recorded or sent.
func TestPriceCheckRefusesAPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	for _, r := range []engine.Request{
		{Symbol: "HTBX", Quantity: 300, Policy: auto("0.02")},
		{Symbol: "HTBX", Quantity: 250},
		{Symbol: "htbx", Quantity: 300},
	} {
		if _, err := b.engine.PriceCheckAll(t.Context(), []engine.Request{r}); !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("%+v: %v, want an input error", r, err)
		}
	}
	if n := len(b.requests("locates/quote")) + len(b.requests("is-easy-to-borrow")); n != 0 {
		t.Errorf("%d quotes or easy-to-borrow checks sent, want 0", n)
	}
}

// Recovery (docs/design.md rules 1 and 8): an engine stopped after a price
// check's quote left is replaced by one that reconciles from history, finds
// the offer (both sides of the Reg SHO pair) that appeared while no engine
// ran, and cancels it: priced, one quote, no accept, both rows 52.
func TestPriceCheckRecoveredAfterStop(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{noStart: true})
	first := b.start(t, nil)
	hs, err := first.PriceCheckAll(t.Context(), []engine.Request{{Symbol: "RSHO", Quantity: 200}})
	if err != nil {
		t.Fatal(err)
	}
	for len(b.requests("locates/quote")) == 0 {
		time.Sleep(time.Millisecond) // wait for the dispatcher to send (wall clock, not a window)
	}
	first.Close()
	b.sim.Advance(5 * time.Second) // the offer appears while no engine runs
	b.engine = b.start(t, nil)
	w := b.wait(t, hs[0].ID)
	expect(t, w, states.Priced)
	if p := workflow.Prices(w); len(p) != 2 {
		t.Errorf("prices %+v, want both sides", p)
	}
	if q, a := len(b.requests("locates/quote")), len(b.requests("locates/accept")); q != 1 || a != 0 {
		t.Errorf("%d quotes and %d accepts across the restart, want 1 and 0", q, a)
	}
	rows, _, err := b.sim.Client(t, b.sim.Live).Locates.History(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.LocateStatus != 52 {
			t.Errorf("%s: status %d, want 52", r.QuoteReqID, r.LocateStatus)
		}
	}
}

// A price check of a symbol whose located inventory already covers its
// quantity waits its turn behind the same-symbol spacing like any quote
// (spec "Locate limits"): before, the step that ends queued locates the
// inventory covers sent it at once, and the broker rejected it for coming
// sooner than 30 s after the locate's quote (found by generated days,
// seed 4, invariant spacing-kept).
func TestPriceCheckOfCoveredSymbolKeepsSpacing(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	expect(t, b.locate(t, "HTBX", 300, auto("0.02")), states.Filled)
	hs, err := b.engine.PriceCheckAll(t.Context(), []engine.Request{{Symbol: "HTBX", Quantity: 300}})
	if err != nil {
		t.Fatal(err)
	}
	w := b.wait(t, hs[0].ID)
	expect(t, w, states.Priced)
	quotes := b.requests("locates/quote")
	if len(quotes) != 2 || quotes[1].Time.Sub(quotes[0].Time) < 30*time.Second {
		t.Errorf("quotes %+v, want the price check's 30 s after the locate's", quotes)
	}
}
