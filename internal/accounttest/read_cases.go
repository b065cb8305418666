// Read and job cases: jobs run through the account, status and
// subscriptions, following a workflow, quotes, shortability, fees and
// today's positions, orders and locates.

package accounttest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

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
	if res.Run == nil || res.Run.Outcome != locator.JobFailed || res.Failure == nil || console.Exit(res.Failure.End()) != console.ExitDeclined {
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
	ok(t, e.Store.LeaveStandby(ctx(t), sb))
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
		if w.Kind != states.PriceCheck || w.State != want[i].st || account.OutcomeOf(w).End != account.EndDone {
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
		if _, err := a.Quote(ctx(t), req); account.KindOf(err) != account.KindInput || console.ExitOf(err) != console.ExitUsage {
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
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", console.ExitOK)
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
	wantOutcome(t, w, states.Filled, "filled — 300 shares at 0.0150", console.ExitOK)
	s, err := a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 100, Type: brokercode.LocateTypeLocate})
	ok(t, err)
	cb, _ := follow(t, a, s.Started[0].ID)
	wantOutcome(t, cb, states.Credited, "credited — 100 Locate shares credited back", console.ExitOK)
	// Far under the market, past the fat-finger guard on purpose: it stays working.
	o, err := a.PlaceOrder(ctx(t), account.PlaceOrderRequest{Order: workflow.Order{Symbol: "MSFT", Side: "Buy", OpenClose: "Open",
		OrderType: "Limit", TimeInForce: "Day", Quantity: 10, LimitPrice: decimal.RequireFromString("1.00"), Route: "SMART"}, Guard: workflow.Guard{Force: true}})
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
