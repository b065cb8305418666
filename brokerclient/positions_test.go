package brokerclient_test

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
)

// TestPositionsOpen: spec "Position records" and P&L rule 5: open lots as
// a bare array, joined to the P&L rows on positionId.
func TestPositionsOpen(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	ctx := t.Context()
	pos, _, err := b.live.Positions.Open(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if len(pos) != 1 {
		t.Fatalf("positions %+v, want the carried MSFT lot", pos)
	}
	p := pos[0]
	if p.Symbol != "MSFT" || p.Shares != 100 || p.Side != brokerclient.PositionLong || p.IsShort() || p.DayOvernight != "Overnight" ||
		!p.PriceAvg.Equal(dec("400")) || !p.PriceClose.Equal(dec("420")) || !p.CreatedDate.DateOnly || p.TradedSymbol != "MSFT" {
		t.Errorf("position %+v", p)
	}
	if len(p.PositionID) < 16 {
		t.Errorf("positionId %q, want the exact digits of an id above 2^53", p.PositionID)
	}
	pnl, _, err := b.live.Accounts.PnL(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	var joined bool
	for _, r := range pnl.Lots {
		if r.PositionID == p.PositionID {
			joined = true
			if !r.UnrealizedPnL.Equal(p.Unrealized()) {
				t.Errorf("P&L row unrealized %s, position Unrealized() %s", r.UnrealizedPnL, p.Unrealized())
			}
		}
	}
	if !joined {
		t.Errorf("no P&L row joins position %s", p.PositionID)
	}

	paper, _, err := b.paper.Positions.Open(ctx, "PP200001")
	if err != nil || paper == nil || len(paper) != 0 {
		t.Errorf("paper: %v %v, want an empty list", paper, err)
	}
	if _, _, err := b.live.Positions.Open(ctx, "PP200001"); !errors.Is(err, brokerclient.ErrNotFound) {
		t.Errorf("foreign account: %v, want 404", err)
	}
}

// TestPositionsClosed: spec "Position records": closedPositions rows with
// positionId as a JSON number, held as the exact digits above 2^53.
func TestPositionsClosed(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	ctx := t.Context()
	rows, _, err := b.live.Positions.Closed(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	want := []brokerclient.ClosedPosition{
		{
			PositionID: "9007199254740993", AccountID: "LV100001", Symbol: "AAPL", SecurityType: "Stock",
			SharesIn: 200, SharesOut: 200, PriceOpen: dec("185.10"), PriceClose: dec("188.35"), Realized: dec("650"),
		},
		{
			PositionID: "4815162342", AccountID: "LV100001", Symbol: "SPY", SecurityType: "Stock",
			SharesIn: 50, SharesOut: 50, PriceOpen: dec("515"), PriceClose: dec("512.50"), Realized: dec("-125"),
		},
	}
	ignoreDates := cmp.FilterPath(func(p cmp.Path) bool {
		n := p.Last().String()
		return n == ".OpenedDate" || n == ".ClosedDate"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, rows, decEqual, ignoreDates); diff != "" {
		t.Errorf("closed positions (-want +got):\n%s", diff)
	}
	if !rows[0].OpenedDate.DateOnly || rows[0].ClosedDate.Format(time.DateOnly) != "2026-11-19" {
		t.Errorf("dates %+v %+v", rows[0].OpenedDate, rows[0].ClosedDate)
	}

	// A lot closed in this session appears too, its id above 2^53 intact.
	for _, oc := range []brokerclient.OpenClose{brokerclient.OpenCloseOpen, brokerclient.OpenCloseClose} {
		side := brokerclient.SideBuy
		if oc == brokerclient.OpenCloseClose {
			side = brokerclient.SideSell
		}
		o, _, err := b.live.Orders.Place(ctx, "LV100001", stockOrder(side, oc, brokerclient.OrderTypeMarket, "SPY", 5))
		if err != nil {
			t.Fatal(err)
		}
		b.Advance(50 * time.Millisecond)
		if got := b.order(t, b.live, "LV100001", o.ClientOrderID); got.OrderStatus != brokercode.OrderStatusFilled {
			t.Fatalf("setup %s: %s %v", oc, got.OrderStatus, got.Text)
		}
	}
	rows, _, err = b.live.Positions.Closed(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[2].Symbol != "SPY" || rows[2].SharesOut != 5 || len(rows[2].PositionID) < 16 || !rows[2].Realized.IsZero() {
		t.Errorf("session-closed row %+v", rows[len(rows)-1])
	}
}

// TestPositionsHistorical: spec GET .../positions/historical with query
// date=YYYY-MM-DD: rows under historicalPositions, per lot held that day.
func TestPositionsHistorical(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		date      time.Time
		wantQuery string
		want      []brokerclient.HistoricalPosition
	}{
		{
			name: "the AAPL lot closed later was held on 18 November", date: time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC),
			wantQuery: "date=2026-11-18",
			want: []brokerclient.HistoricalPosition{{
				PositionID: "9007199254740993", AccountID: "LV100001", Symbol: "AAPL", SecurityType: "Stock", Quantity: 200,
				MarketValue: dec("37020"), AverageCost: dec("185.1"), ClosingPrice: dec("185.1"), UnrealizedPnL: dec("0"),
			}},
		},
		{
			name: "the carried MSFT lot at its prior close; the date is read in its own zone", date: time.Date(2026, 11, 24, 23, 0, 0, 0, ny),
			wantQuery: "date=2026-11-24",
			want: []brokerclient.HistoricalPosition{{
				AccountID: "LV100001", Symbol: "MSFT", SecurityType: "Stock", Quantity: 100,
				MarketValue: dec("41500"), AverageCost: dec("400"), ClosingPrice: dec("415"), UnrealizedPnL: dec("1500"),
			}},
		},
		{
			name: "nothing held", date: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), wantQuery: "date=2026-10-01",
			want: []brokerclient.HistoricalPosition{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := b.live.Positions.Historical(t.Context(), "LV100001", tt.date)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if !got[i].Date.DateOnly || got[i].Date.Format(time.DateOnly) != tt.wantQuery[len("date="):] {
					t.Errorf("row date %+v", got[i].Date)
				}
				if i < len(tt.want) && tt.want[i].PositionID == "" {
					got[i].PositionID = ""
				}
			}
			ignore := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Date" }, cmp.Ignore())
			if diff := cmp.Diff(tt.want, got, decEqual, ignore); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			var found bool
			for _, r := range b.sent("GET", "/positions/historical") {
				q, _ := url.ParseQuery(r.Query)
				found = found || r.Query == tt.wantQuery && q.Get("date") != ""
			}
			if !found {
				t.Errorf("no request with query %q", tt.wantQuery)
			}
		})
	}
	t.Run("a zero date is refused", func(t *testing.T) {
		t.Parallel()
		if _, _, err := b.live.Positions.Historical(t.Context(), "LV100001", time.Time{}); !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("err %v", err)
		}
	})
}
