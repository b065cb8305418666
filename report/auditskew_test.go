package report_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/report"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// Issue 26 (generated days, seed 134: audit-flags-uncovered): a short sale
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
	start := time.Date(2026, 10, 1, 10, 0, 0, 0, market.NewYork)
	sim := simtest.New(t, simtest.WithStart(start), simtest.WithSimOption(brokersim.WithClockSkew(skew)))
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "locator.db"), sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sim.RunClockWhen(t, 2)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := sim.Client(t, sim.Live, brokerclient.WithStreamURL("ws"+strings.TrimPrefix(sim.URL, "http")+"/no-stream"))
	e, err := engine.New(engine.Config{Client: client, Store: st, Clock: sim.Clock, Account: accountID,
		Env: brokerclient.EnvLive, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close()

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
		if _, _, err := client.Orders.Place(ctx, accountID, brokerclient.OrderRequest{ClientOrderID: o.id, Symbol: o.symbol,
			Side: brokerclient.SideSell, OpenClose: brokerclient.OpenCloseOpen, OrderType: brokerclient.OrderTypeMarket,
			SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: o.qty,
			Route: "SMART"}); err != nil {
			t.Fatal(err)
		}
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

	book, _, err := client.Orders.Book(ctx, accountID)
	if err != nil {
		t.Fatal(err)
	}
	today := ledger.TradeDate(sim.Sim.Now())
	trail, err := report.AuditBook(ctx, st, accountID, book, client.ClockSkew(), sim.Clock.Now(), report.Range{From: today, To: today}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]report.AuditRow{}
	for _, r := range trail.Rows {
		rows[r.ClientOrderID] = r
	}
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
