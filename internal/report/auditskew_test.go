package report_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Found by the generated days (seed 134, audit-flags-uncovered): a short sale
// sent straight at the broker right after a locate of its symbol filled is
// covered (the broker held the located shares when it was sent; spec
// "Short locates" and "Locate inventory row"), whatever the broker's clock
// skew. The broker runs 1.1 s ahead of this machine: the Date header's
// whole seconds make the client's estimate of it off by up to half a
// second, and audit used to put the fill at locator's sight of it shifted
// by that estimate, against the order's startTime on the broker's clock:
// the short, sent within the error, looked earlier than the fill and was
// flagged. The audit now takes both times from the broker (the history
// row's updatedDate, spec "Locate history row"; the order's startTime,
// spec "Order record"), and still flags the short sent with no cover.
func TestAuditShortRightAfterFillUnderSkew(t *testing.T) {
	t.Parallel()
	const skew = 1100 * time.Millisecond
	ctx, sim, st, client, e := auditWorld(t, skew)

	h, err := e.Locate(ctx, engine.Request{Symbol: "HTBY", Quantity: 300, Policy: workflow.Policy{AutoAccept: true}})
	if err != nil {
		t.Fatal(err)
	}
	wf, err := h.Wait(ctx)
	if err != nil || wf.State != states.Filled {
		t.Fatalf("locate HTBY 300: %v %+v", err, wf)
	}
	// At once, as a desk's other tool would: one short within the located
	// shares, one of a symbol with neither a locate nor a check.
	for _, o := range []struct {
		id, symbol string
		qty        int64
	}{{"direct-HTBY", "HTBY", 300}, {"direct-HTBX", "HTBX", 100}} {
		sendShort(t, ctx, client, o.id, o.symbol, o.qty)
	}
	var filledAt time.Time // the fill on the broker's clock, from the simulator alone
	for _, r := range sim.Sim.Locates() {
		if r.QuoteReqID == wf.AcceptedID && r.Status == 50 {
			filledAt = r.Updated
		}
	}
	if filledAt.IsZero() {
		t.Fatalf("the simulator has no Filled row of %s", wf.AcceptedID)
	}
	est, _ := client.BrokerClockOffset()
	t.Logf("broker's clock %s ahead, estimated %s (ClockSkew %s)", skew, est, client.ClockSkew())

	trail, rows := auditToday(t, ctx, sim, st, client)
	covered := rows["direct-HTBY"]
	if !covered.Covered || len(covered.Covers) != 1 || covered.Covers[0].WorkflowID != wf.ID || covered.CoveredShares() != 300 {
		t.Errorf("the short sent after the fill: covered=%t by %+v (%s), want covered by locate %s", covered.Covered, covered.Covers, covered.Flag, wf.ID)
	} else if !covered.Covers[0].At.Equal(filledAt) {
		t.Errorf("its cover is timed %s, want the broker's fill %s", covered.Covers[0].At, filledAt)
	}
	if bare, ok := rows["direct-HTBX"]; !ok || bare.Covered {
		t.Errorf("the short with no cover: %+v, want it flagged", bare)
	}
	if len(trail.Rows) != 2 || trail.Flagged() != 1 {
		t.Errorf("audit: %d rows, %d flagged; want 2 rows, 1 flagged", len(trail.Rows), trail.Flagged())
	}
}

// auditWorld is an engine on a fresh store, against the simulator over
// HTTP on its fake clock run as virtual time, the broker's clock skew
// ahead; its client follows orders by REST lookups (no portfolio stream,
// as in generate).
func auditWorld(t *testing.T, skew time.Duration, opts ...simtest.Option) (context.Context, *simtest.Bundle, *store.Store, *brokerclient.Client, *engine.Engine) {
	t.Helper()
	start := time.Date(2026, 10, 1, 10, 0, 0, 0, market.NewYork)
	sim := simtest.New(t, append([]simtest.Option{simtest.WithStart(start), simtest.WithSimOption(brokersim.WithClockSkew(skew))}, opts...)...)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "locator.db"), sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var loops simtest.Loops // the engine's, once it runs: time waits on the events it holds
	sim.RunClockWhile(t, 2, loops.Idle)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	client := sim.Client(t, sim.Live, brokerclient.WithStreamURL("ws"+strings.TrimPrefix(sim.URL, "http")+"/no-stream"))
	e, err := engine.New(engine.Config{Client: client, Store: st, Clock: sim.Clock, Account: accountID,
		Env: brokerclient.EnvLive, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	loops.Add(e)
	return ctx, sim, st, client, e
}

// sendShort sends a market short sale of qty symbol under id straight at
// the broker, as a desk's other tool would: locator sees it only in the
// order book.
func sendShort(t *testing.T, ctx context.Context, client *brokerclient.Client, id, symbol string, qty int64) {
	t.Helper()
	if _, _, err := client.Orders.Place(ctx, accountID, brokerclient.OrderRequest{ClientOrderID: id, Symbol: symbol,
		Side: brokerclient.SideSell, OpenClose: brokerclient.OpenCloseOpen, OrderType: brokerclient.OrderTypeMarket,
		SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: qty,
		Route: "SMART"}); err != nil {
		t.Fatal(err)
	}
}

// auditToday is the audit of the broker's order book on its trade date,
// and its rows by clientOrderId.
func auditToday(t *testing.T, ctx context.Context, sim *simtest.Bundle, st *store.Store, client *brokerclient.Client) (*locator.AuditTrail, map[string]locator.AuditRow) {
	t.Helper()
	book, _, err := client.Orders.Book(ctx, accountID)
	if err != nil {
		t.Fatal(err)
	}
	today := ledger.TradeDate(sim.Sim.Now())
	trail, err := report.AuditBook(ctx, st, accountID, book, client.ClockSkew(), sim.Clock.Now(), locator.DateRange{From: today, To: today}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]locator.AuditRow{}
	for _, r := range trail.Rows {
		rows[r.ClientOrderID] = r
	}
	return trail, rows
}

// A SingleUse share used to open a short is used for the day, even once
// the short is covered (spec "Locate types": SingleUse is not reusable in
// a day; "Locate inventory row": size shorts from available): a short sent
// straight at the broker after locator's short of the whole SingleUse lot
// was covered has no locate, and the audit flags it; it used to give the
// lot's shares back on the cover, as a Locate's, and call it covered.
func TestAuditSingleUseNotReusedAfterCover(t *testing.T) {
	t.Parallel()
	ctx, sim, st, client, e := auditWorld(t, 0)
	h, err := e.Locate(ctx, engine.Request{Symbol: "RSHO", Quantity: 500, Policy: workflow.Policy{AutoAccept: true, AllowSingleUse: true}})
	if err != nil {
		t.Fatal(err)
	}
	wf, err := h.Wait(ctx)
	if err != nil || wf.State != states.Filled || wf.LocateType != string(brokercode.LocateTypeSingleUse) {
		t.Fatalf("locate RSHO 500 --allow-single-use: %v %+v, want a SingleUse fill", err, wf)
	}
	p := decimal.RequireFromString("5.00")
	sim.Sim.SetPrice("RSHO", p)
	res, err := e.Short(ctx, account.ShortRequest{Symbol: "RSHO", Quantity: 500, Limit: p, Policy: workflow.Policy{AutoAccept: true, AllowSingleUse: true},
		Guard: workflow.Guard{RefPrice: p}}, engine.ShortAnswers{})
	if err != nil || res.Order == nil {
		t.Fatalf("short RSHO 500: %v %+v", err, res)
	}
	short := settle(t, e, res.Order)
	cover, err := e.PlaceOrder(ctx, &engine.Order{ClientOrderID: uuid.NewString(), Account: accountID, Symbol: "RSHO", Side: "Buy", OpenClose: "Close",
		OrderType: "Limit", TimeInForce: "Day", Quantity: 500, LimitPrice: p, Route: "SMART"}, workflow.Guard{})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, e, cover)
	var available int64 // what the broker holds now, from the simulator alone
	for _, r := range sim.Sim.Inventory() {
		if r.Account == accountID && r.Symbol == "RSHO" {
			available += r.Available
		}
	}
	if available != 0 {
		t.Fatalf("the broker holds %d RSHO shares after the SingleUse lot was used; want 0", available)
	}
	sendShort(t, ctx, client, "direct-RSHO", "RSHO", 100)
	_, rows := auditToday(t, ctx, sim, st, client)
	if r := rows[short.ClientOrderID]; !r.Covered || len(r.Covers) != 1 || r.Covers[0].WorkflowID != wf.ID {
		t.Errorf("locator's short: %+v, want covered by the SingleUse locate %s", r, wf.ID)
	}
	if r, ok := rows["direct-RSHO"]; !ok || r.Covered {
		t.Errorf("the short after the SingleUse lot was used: %+v, want it flagged", r)
	}
}

// Located shares cover the broker's trading day, which ends at the 8 PM
// New York rollover (market.SessionStart; the simulator's rollover.go): a
// short sent straight at the broker after it, on the same calendar date as
// the morning's fill, has no locate (the broker's inventory is the next
// trading day's, empty) and the audit flags it; it used to count the
// morning's lot, by calendar date (generated days, seed 38:
// audit-flags-uncovered after the evening operation).
func TestAuditLocateEndsAtRollover(t *testing.T) {
	t.Parallel()
	ctx, sim, st, client, e := auditWorld(t, 0)
	h, err := e.Locate(ctx, engine.Request{Symbol: "HTBY", Quantity: 300, Policy: workflow.Policy{AutoAccept: true}})
	if err != nil {
		t.Fatal(err)
	}
	if wf, err := h.Wait(ctx); err != nil || wf.State != states.Filled {
		t.Fatalf("locate HTBY 300: %v %+v", err, wf)
	}
	now := sim.Clock.Now()
	y, m, d := now.In(market.NewYork).Date()
	sim.Advance(time.Date(y, m, d, market.RolloverHour, 0, 30, 0, market.NewYork).Sub(now))
	for _, r := range sim.Sim.Inventory() {
		if r.Account == accountID && r.Symbol == "HTBY" && r.Available != 0 {
			t.Fatalf("the broker still holds %d HTBY shares after its rollover", r.Available)
		}
	}
	limit := decimal.RequireFromString("8.00")
	if _, _, err := client.Orders.Place(ctx, accountID, brokerclient.OrderRequest{ClientOrderID: "direct-evening", Symbol: "HTBY",
		Side: brokerclient.SideSell, OpenClose: brokerclient.OpenCloseOpen, OrderType: brokerclient.OrderTypeLimit,
		LimitPrice: &limit, SecurityType: brokerclient.SecurityTypeStock,
		TimeInForce: brokerclient.TimeInForceDayPlus, OrderQuantity: 100, Route: "SMART"}); err != nil {
		t.Fatal(err)
	}
	if _, rows := auditToday(t, ctx, sim, st, client); rows["direct-evening"].ClientOrderID == "" || rows["direct-evening"].Covered {
		t.Errorf("the short sent after the rollover: %+v, want it flagged", rows["direct-evening"])
	}
}

// A short sale is judged at its execution too, not only at its sending
// (spec "Short locates" rule 5, "Locate inventory row": located shares tied
// to no open short can be credited back): with 300 HTBX located, a limit
// short of 100 above the market works, covered when sent; the 300 are
// credited back (forced past the guard that keeps them for it); then the
// market reaches the limit and, at a broker that fills a short sale
// whatever its inventory, it executes with no located share left. The
// audit flags it, naming the execution; it used to call it covered.
func TestAuditShortExecutedAfterCreditBack(t *testing.T) {
	t.Parallel()
	ctx, sim, st, client, e := auditWorld(t, 0, simtest.WithScenario(func(sc *brokersim.Scenario) { sc.ShortsWithoutLocate = true }))
	h, err := e.Locate(ctx, engine.Request{Symbol: "HTBX", Quantity: 300, Policy: workflow.Policy{AutoAccept: true}})
	if err != nil {
		t.Fatal(err)
	}
	if wf, err := h.Wait(ctx); err != nil || wf.State != states.Filled {
		t.Fatalf("locate HTBX 300: %v %+v", err, wf)
	}
	market, limit := decimal.RequireFromString("12.50"), decimal.RequireFromString("13.00")
	sim.Sim.SetPrice("HTBX", market)
	short, err := e.PlaceOrder(ctx, &engine.Order{ClientOrderID: uuid.NewString(), Account: accountID, Symbol: "HTBX", Side: "Sell", OpenClose: "Open",
		OrderType: "Limit", TimeInForce: "Day", Quantity: 100, LimitPrice: limit, Route: "SMART"}, workflow.Guard{RefPrice: market})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.WaitOrder(ctx, short.ClientOrderID, true); err != nil || got.State != states.OrderWorking {
		t.Fatalf("the limit short above the market: %v %+v, want it working", err, got)
	}
	cb, err := e.CreditBack(ctx, engine.CreditBackRequest{Symbol: "HTBX", Shares: 300, Type: brokercode.LocateTypeLocate, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if w, err := cb.Wait(ctx); err != nil || w.State != states.Credited {
		t.Fatalf("credit-back HTBX 300 --force: %v %+v", err, w)
	}
	sim.Sim.SetPrice("HTBX", limit) // the simulator fills it at once
	if o := simOrder(sim, short.LookupID()); o == nil || o.Executed != 100 {
		t.Fatalf("the short at its limit: %+v, want it filled", o)
	}
	_, rows := auditToday(t, ctx, sim, st, client)
	r := rows[short.LookupID()]
	if r.ClientOrderID == "" || r.Covered || r.Executed != 100 || !strings.Contains(r.Flag, "100 of 100 executed shares had no located shares free when they executed") {
		t.Errorf("the short executed after its locate was credited back: %+v, want it flagged at its execution", r)
	}
	if len(r.Covers) != 1 || r.Covers[0].Shares != 100 {
		t.Errorf("its cover when sent: %+v, want the 300 located (100 of them)", r.Covers)
	}
}

// simOrder is the simulator's record of order id, nil when it has none.
func simOrder(sim *simtest.Bundle, id string) *brokersim.OrderRecord {
	for _, o := range sim.Sim.Orders() {
		if o.ClientOrderID == id {
			return &o
		}
	}
	return nil
}
