package dashboard

import (
	"context"
	"regexp"
	"testing"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
)

// Spec "Short locates" rule 2: a Reg SHO pair declined
// at the prompt keeps the price and side it was offered there
// (workflow.Offered) in status's record, in the dashboard's row and in the
// report's forgone spend, never the other side's. RSHO is offered at
// 0.0900 PreBorrow (the quote's id) and 0.0400 SingleUse (id.SU): with
// --allow-single-use the prompt offers the SingleUse side, without it the
// PreBorrow side, and both are declined.
func TestDeclinedPairKeepsTheSideOffered(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	ctx := t.Context()
	prompt := wire.Dial(b.owner.Lease().Endpoint, account.Caller{Name: "terminal", Env: brokerclient.EnvLive,
		Ask: func(context.Context, account.Question) bool { return false }}, b.sim.Client(t, b.sim.Live), b.sim.URL)
	t.Cleanup(prompt.Close)
	var ids []string
	for _, tc := range []struct {
		allowSingleUse bool
		price, typ     string
	}{{true, "0.0400", "SingleUse"}, {false, "0.0900", "PreBorrow"}} {
		it := account.LocateItem{Symbol: "RSHO", Quantity: 1000}
		it.Policy.AllowSingleUse = tc.allowSingleUse
		res, err := prompt.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{it}, Ask: true})
		if err != nil {
			t.Fatal(err)
		}
		w, err := b.wait(ctx, res.Started[0].ID)
		if err != nil || w.State != states.Declined || w.Cause != "prompt" {
			t.Fatalf("allow SingleUse %v: %+v %v, want declined at the prompt", tc.allowSingleUse, w, err)
		}
		ids = append(ids, w.ID)
		if o := console.OutcomeRecordOf(w); o.PricePerShare != tc.price || o.LocateType != tc.typ || o.Total != "" {
			t.Errorf("allow SingleUse %v: status record %s %s total %q, want %s %s and no total", tc.allowSingleUse, o.PricePerShare, o.LocateType, o.Total, tc.price, tc.typ)
		}
		page := b.get(t, "/", nil).Body.String()
		row := regexp.MustCompile(`<tr id="` + w.ID + `".*</tr>`).FindString(page)
		if want := `<td class="num">` + tc.price + ` <small class="type">` + tc.typ + `</small></td>`; !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(row) {
			t.Errorf("allow SingleUse %v: dashboard row %q lacks %q", tc.allowSingleUse, row, want)
		}
	}
	now := b.sim.Clock.Now()
	day := ledger.TradeDate(now)
	rng := locator.DateRange{From: day, To: day}
	fees, _, err := ledger.Check(ctx, b.sim.Client(t, b.sim.Live), b.store, "LV100001", now, report.FeeWindow(rng), ledger.FeeGrace)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Run(ctx, b.store, "LV100001", fees, now, rng)
	if err != nil {
		t.Fatal(err)
	}
	var forgone string
	for _, rec := range report.Records(r) {
		if rec.Type == "symbol" && rec.Symbol == "RSHO" {
			forgone = rec.ForgoneSpend
		}
	}
	if forgone != "130.00" { // 1,000 × 0.0400 + 1,000 × 0.0900
		t.Errorf("report: RSHO forgoneSpend %q, want 130.00 (%v)", forgone, ids)
	}
}
