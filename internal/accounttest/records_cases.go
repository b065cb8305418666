// Cases of the owner's records and what is worked out of them: Records,
// Audit, Plan, Size (read cases, run against every reader) and Report.

package accounttest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// shortWorking locates 300 HTBX and sells 100 of them short by a stop
// under the market, which stays working: the locate's workflow and the
// order, as the owner recorded them once the broker took it.
func shortWorking(t *testing.T, e *Env, a account.Account) (*workflow.Workflow, *workflow.Order) {
	t.Helper()
	w, _ := follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false))
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", console.ExitOK)
	sold, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 100, OrderType: "Stop", Stop: decimal.RequireFromString("11.50"),
		Policy: capped("0.05"), Guard: workflow.Guard{RefPrice: decimal.RequireFromString("12.50")}})
	ok(t, err)
	shortSent(t, e, sold)
	// Placed again by its id, the order is followed to the broker's
	// answer (sending nothing new): working, as the owner records it.
	o, err := a.PlaceOrder(ctx(t), account.PlaceOrderRequest{Order: workflow.Order{ClientOrderID: sold.Order.ClientOrderID}})
	ok(t, err)
	if o.Terminal() || o.SentAt.IsZero() {
		t.Fatalf("the short's order %s (%s), want it sent and working", o.State, o.Reason)
	}
	return w, o
}

// readsSendNothing fails the case if the broker saw a write since it had
// seen before of them.
func readsSendNothing(t *testing.T, e *Env, before int) {
	t.Helper()
	if n := writes(e) - before; n != 0 {
		t.Errorf("the reads sent %d writes", n)
	}
}

// recordsAsRecorded: Records hands out the account's records as its owner
// recorded them: the newest workflows and orders with the owner's lease,
// one workflow by its id, a prefix of it or its quoteReqID, or one order,
// each with its log, the account's job runs (not another account's), and
// no budget where none is set. An id naming nothing is KindNotOpen; a
// request of no kind, or with a field its kind does not take, is refused
// as input. None of it sends the broker anything.
func recordsAsRecorded(t *testing.T, e *Env) {
	a := e.Open(caller("test records", nil))
	w, o := shortWorking(t, e, a)
	for _, run := range []struct{ job, account string }{{"premarket", "LV100001"}, {"eod", "LV100001"}, {"premarket", "LV100002"}} {
		_, err := e.Store.StartJobRun(ctx(t), run.job, "locate", run.account)
		ok(t, err)
	}
	rd, before := e.reader(a), writes(e)
	defer readsSendNothing(t, e, before)

	r, err := rd.Records(ctx(t), account.RecordsRequest{What: account.RecordsRecent, Limit: 10})
	ok(t, err)
	if len(r.Leases) != 1 || r.Leases[0].Account != "LV100001" || len(r.Workflows) < 1 || len(r.Orders) != 1 || r.Orders[0].ClientOrderID != o.ClientOrderID {
		t.Errorf("recent: leases %+v, %d workflows, orders %+v; want the owner's lease and the short's order", r.Leases, len(r.Workflows), r.Orders)
	}
	if i := len(r.Workflows) - 1; i >= 0 && r.Workflows[i].ID != w.ID {
		t.Errorf("recent workflows %s..%s, want the locate last (newest first)", r.Workflows[0].ID, r.Workflows[i].ID)
	}
	for _, ref := range []string{w.ID, w.ID[:7], w.QuoteReqID} {
		r, err := rd.Records(ctx(t), account.RecordsRequest{What: account.RecordsOne, ID: ref})
		ok(t, err)
		if r.Workflow == nil || r.Workflow.ID != w.ID || len(r.Log) == 0 || r.Log[len(r.Log)-1].To != states.Filled || r.Order != nil {
			t.Errorf("one %s: %+v, want the locate with its log to filled", ref, r)
		}
	}
	r, err = rd.Records(ctx(t), account.RecordsRequest{What: account.RecordsOne, ID: o.ClientOrderID})
	ok(t, err)
	if r.Order == nil || r.Order.ClientOrderID != o.ClientOrderID || len(r.Log) == 0 || r.Workflow != nil {
		t.Errorf("one %s: %+v, want the order with its log", o.ClientOrderID, r)
	}
	if _, err := rd.Records(ctx(t), account.RecordsRequest{What: account.RecordsOne, ID: "wf-nothing"}); account.KindOf(err) != account.KindNotOpen {
		t.Errorf("one wf-nothing: %v, want KindNotOpen", err)
	}
	r, err = rd.Records(ctx(t), account.RecordsRequest{What: account.RecordsJobRuns, Limit: 10})
	ok(t, err)
	if len(r.JobRuns) != 2 || r.JobRuns[0].Job != "eod" || r.JobRuns[1].Job != "premarket" {
		t.Errorf("job runs %+v, want LV100001's eod then premarket", r.JobRuns)
	}
	r, err = rd.Records(ctx(t), account.RecordsRequest{What: account.RecordsJobRuns, Job: "premarket"})
	ok(t, err)
	if len(r.JobRuns) != 1 || r.JobRuns[0].Account != "LV100001" {
		t.Errorf("premarket's runs %+v, want LV100001's one", r.JobRuns)
	}
	r, err = rd.Records(ctx(t), account.RecordsRequest{What: account.RecordsBudget})
	if err != nil || r.Budget != nil {
		t.Errorf("budget %+v, %v; want none set", r, err)
	}
	for _, bad := range []account.RecordsRequest{
		{What: "everything"},
		{What: account.RecordsOne},
		{What: account.RecordsRecent, ID: w.ID},
		{What: account.RecordsRecent, Limit: -1},
		{What: account.RecordsRecent, Job: "eod"},
		{What: account.RecordsBudget, Limit: 3},
	} {
		if _, err := rd.Records(ctx(t), bad); account.KindOf(err) != account.KindInput {
			t.Errorf("records %+v: %v, want a KindInput refusal", bad, err)
		}
	}
}

// auditPlanSize: after a locate of 300 and a short sale of 100 that stays
// working, Audit lists the short covered by the locate; Plan finds the
// locate's offer and no short filled; Size finds the 200 located shares
// the working sell leaves and prices the lots a target of 1000 needs at
// the locate's 0.0150 (spec "Short locates": size from available). Each
// reads the broker (GETs only); a bad request is refused as input before
// anything is sent.
func auditPlanSize(t *testing.T, e *Env) {
	a := e.Open(caller("test audit", nil))
	w, o := shortWorking(t, e, a)
	rd, before := e.reader(a), writes(e)
	defer readsSendNothing(t, e, before)

	books := count(e, "GET", "/orders")
	trail, err := rd.Audit(ctx(t), account.AuditRequest{})
	ok(t, err)
	if count(e, "GET", "/orders") == books {
		t.Error("Audit read no order book")
	}
	if trail.Account != "LV100001" || len(trail.Rows) != 1 || trail.Flagged() != 0 {
		t.Fatalf("trail %+v, want the short, covered", trail)
	}
	row := trail.Rows[0]
	if row.ClientOrderID != o.LookupID() || row.Source != locator.SourceLocator || !row.Covered || len(row.Covers) != 1 ||
		row.Covers[0].WorkflowID != w.ID || row.Covers[0].Kind != locator.CoverLocate || row.CoveredShares() != 100 {
		t.Errorf("row %+v, want %s covered by the locate %s", row, o.LookupID(), w.ID)
	}

	p, err := rd.Plan(ctx(t), account.PlanRequest{Symbols: []string{"HTBX"}, Days: 1})
	ok(t, err)
	price := decimal.RequireFromString("0.015")
	if len(p.Suggestions) != 1 || p.Suggestions[0].Symbol != "HTBX" || p.Suggestions[0].Offers != 1 || p.Suggestions[0].Suggested != 0 ||
		p.Suggestions[0].MinPrice == nil || !p.Suggestions[0].MinPrice.Equal(price) {
		t.Errorf("plan %+v, want HTBX: the locate's offer at 0.015, nothing filled short", p.Suggestions)
	}

	z, err := rd.Size(ctx(t), account.SizeRequest{Symbol: "HTBX", Price: decimal.RequireFromString("12.50"), Target: 1000})
	ok(t, err)
	if z.Located != 300 || z.WorkingSells != 100 || z.Shortable != 200 || z.Binding != locator.LimitInventory || z.LotsToLocate != 8 ||
		!z.LastOfferKnown || !z.LastOfferPrice.Equal(price) || !z.EstimatedCost.Equal(decimal.RequireFromString("12")) {
		t.Errorf("sizing %+v, want 200 of 300 located shortable, 8 lots at 0.015 to reach 1000", z)
	}

	sent := len(e.Sim.Sim.Requests())
	if _, err := rd.Audit(ctx(t), account.AuditRequest{Range: locator.DateRange{To: e.Sim.Clock.Now()}}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("audit to a date without a first: %v, want an input refusal", err)
	}
	if _, err := rd.Plan(ctx(t), account.PlanRequest{Symbols: []string{"HTBX"}}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("plan of no days: %v, want an input refusal", err)
	}
	if _, err := rd.Plan(ctx(t), account.PlanRequest{Symbols: []string{"no symbol"}, Days: 1}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("plan of a bad symbol: %v, want an input refusal", err)
	}
	if _, err := rd.Size(ctx(t), account.SizeRequest{Symbol: "HTBX"}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("size at no price: %v, want an input refusal", err)
	}
	for _, r := range e.Sim.Sim.Requests()[sent:] {
		// The owner's poller reads history and inventory on its own.
		if !strings.HasSuffix(r.Path, "/locates/history") && !strings.HasSuffix(r.Path, "/locates/inventory") {
			t.Errorf("%s %s sent for refused reads", r.Method, r.Path)
		}
	}
}

// reportOfTheDay: Report syncs the ledger and reports the day's locate
// (spec "Cash ledger": its fee lands FeeDelay after the fill): 300 shares
// located for 4.50, matched; a range with a last date and no first is
// refused as input before anything is read.
func reportOfTheDay(t *testing.T, e *Env) {
	a := e.Open(caller("test report", nil))
	sent := len(e.Sim.Sim.Requests())
	if _, err := a.Report(ctx(t), account.ReportRequest{Range: locator.DateRange{To: e.Sim.Clock.Now()}}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("report to a date without a first: %v, want an input refusal", err)
	}
	for _, r := range e.Sim.Sim.Requests()[sent:] {
		if !strings.HasSuffix(r.Path, "/locates/history") && !strings.HasSuffix(r.Path, "/locates/inventory") {
			t.Errorf("%s %s sent for a refused report", r.Method, r.Path)
		}
	}
	w, _ := follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false))
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", console.ExitOK)
	e.Sim.Clock.Advance(10 * time.Second)
	ledgerReads := count(e, "GET", "/cash-transactions/")
	r, err := a.Report(ctx(t), account.ReportRequest{})
	ok(t, err)
	if count(e, "GET", "/cash-transactions/") == ledgerReads {
		t.Error("Report synced no ledger")
	}
	tot := r.Total
	if r.Account != "LV100001" || r.Range.From.IsZero() || r.Range.To.Before(r.Range.From) || tot.Located != 300 ||
		!tot.Spend.Equal(decimal.RequireFromString("4.50")) || tot.FeeStatus != "matched" || len(r.Symbols) != 1 || r.Symbols[0].Symbol != "HTBX" {
		t.Errorf("report %s %s: total %+v, symbols %+v; want HTBX's 300 for 4.50, matched", r.Account, r.Range, tot, r.Symbols)
	}
}

// feesStored: a stored fee check (Fees, Stored: the dashboard's) reconciles
// the ledger the last sync left, as the synced check did, and reads nothing
// of the broker; a window of no dates is refused as input.
func feesStored(t *testing.T, e *Env) {
	a := e.Open(caller("test fees stored", nil))
	w, _ := follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false))
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", console.ExitOK)
	e.Sim.Clock.Advance(10 * time.Second)
	synced, err := a.Fees(ctx(t), account.FeesRequest{Window: locator.FeeWindow{Days: 1}, Grace: time.Hour})
	ok(t, err)
	sent := len(e.Sim.Sim.Requests())
	res, err := a.Fees(ctx(t), account.FeesRequest{Window: locator.FeeWindow{Days: 1}, Grace: time.Hour, Stored: true})
	ok(t, err)
	if _, err := a.Fees(ctx(t), account.FeesRequest{Stored: true}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("a stored check of no window: %v, want an input refusal", err)
	}
	for _, r := range e.Sim.Sim.Requests()[sent:] {
		if !strings.HasSuffix(r.Path, "/locates/history") && !strings.HasSuffix(r.Path, "/locates/inventory") {
			t.Errorf("%s %s sent for a stored fee check", r.Method, r.Path)
		}
	}
	lines := func(r *locator.FeeReport) []locator.FeeLine {
		var mine []locator.FeeLine
		for _, l := range r.Lines {
			if l.WorkflowID == w.ID {
				mine = append(mine, l)
			}
		}
		return mine
	}
	got, want := lines(res.Report), lines(synced.Report)
	if res.Synced != (locator.SyncResult{}) || len(got) != 1 || len(want) != 1 || got[0].Status != locator.FeeMatched || !got[0].Charged.Equal(want[0].Charged) {
		t.Errorf("stored check: synced %+v, the locate's lines %+v; want none synced and %+v", res.Synced, got, want)
	}
}
