package dashboard

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The page shows what the owner's locate budget leaves of today,
// in all and of each symbol with a budget of its own, whether the
// dashboard runs in the owner's process or follows it over its socket
// (the owner keeps the budget; Status carries what it leaves). A $10
// locate of DASH (500 at 0.02) under a budget of 20 in all and 15 for
// DASH leaves 10.00 and 5.00.
func TestPageShowsTheBudgetLeft(t *testing.T) {
	t.Parallel()
	budget, err := workflow.ParseBudget("20,DASH=15")
	if err != nil {
		t.Fatal(err)
	}
	for _, follower := range []bool{false, true} {
		t.Run(fmt.Sprintf("follower=%v", follower), func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpt{follower: follower, budget: budget})
			if body := b.get(t, "/", nil).Body.String(); !strings.Contains(body, `data-left="20.00"`) {
				t.Errorf("before any locate, the page does not show the 20.00 left:\n%s", body)
			}
			if rec := b.act(t, "/locate", url.Values{"symbols": {testSymbol}, "quantity": {"500"}, "cap": {"0.05"}}); rec.Code != 200 {
				t.Fatalf("locate: %d %s", rec.Code, rec.Body.String())
			}
			ws, err := b.store.List(t.Context(), store.Filter{Account: "LV100001", Symbol: testSymbol, Kind: states.Locate})
			if err != nil || len(ws) != 1 {
				t.Fatalf("locates: %d %v", len(ws), err)
			}
			if w, err := b.wait(t.Context(), ws[0].ID); err != nil || w.State != states.Filled {
				t.Fatalf("locate: %+v %v, want filled", w, err)
			}
			body := b.get(t, "/", nil).Body.String()
			for _, want := range []string{`data-left="10.00"`, "<b>10.00</b> left of 20.00, 10.00 spent", "DASH <b>5.00</b> left of 15.00"} {
				if !strings.Contains(body, want) {
					t.Errorf("after a 10.00 locate the page lacks %q", want)
				}
			}
		})
	}
}
