package tradingday

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/market"
)

// nyAt is d November 2026, h:m New York time.
func nyAt(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, market.NewYork) }

// no-fill-outside-session judges each execution by the spec's session
// hours ("Cross-cutting conventions", R78; "Orders" rule 2 for extended
// hours) on the exchange's calendar: the day after Thanksgiving 2026
// closes at 13:00, Thanksgiving is a holiday, and a day order trades only
// in the broker's trading day it was placed in.
func TestOutsideSession(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		tif        string
		placed, at time.Time
		outside    bool
	}{
		{"Day at noon of the early close", "Day", nyAt(27, 12, 0), nyAt(27, 12, 0), false},
		{"Day at 13:30 after the early close", "Day", nyAt(27, 13, 30), nyAt(27, 13, 30), true},
		{"Day at 15:59 of an ordinary day", "Day", nyAt(25, 15, 59), nyAt(25, 15, 59), false},
		{"Day at 16:01 of an ordinary day", "Day", nyAt(25, 16, 1), nyAt(25, 16, 1), true},
		{"Day_Plus at 17:00", "Day_Plus", nyAt(25, 17, 0), nyAt(25, 17, 0), false},
		{"Day_Plus at 17:00 of the early close", "Day_Plus", nyAt(27, 17, 0), nyAt(27, 17, 0), false},
		{"Day_Plus at 20:30", "Day_Plus", nyAt(25, 20, 30), nyAt(25, 20, 30), true},
		{"GTC_Plus at 4:00", "GTC_Plus", nyAt(25, 20, 30), nyAt(27, 4, 0), false},
		{"Day on Thanksgiving", "Day", nyAt(26, 11, 0), nyAt(26, 11, 0), true},
		{"GoodTillCancel at the next open", "GoodTillCancel", nyAt(25, 16, 1), nyAt(27, 9, 30), false},
		{"Day placed after the rollover, at the next open", "Day", nyAt(25, 20, 30), nyAt(27, 9, 30), false},
		{"Day placed at 16:01, at the next open", "Day", nyAt(25, 16, 1), nyAt(27, 9, 30), true},
	} {
		f := brokersim.FillRecord{ClientOrderID: "x", TimeInForce: c.tif, Placed: c.placed, At: c.at}
		if why := outsideSession(f); (why != "") != c.outside {
			t.Errorf("%s: outside %q, want outside %t", c.name, why, c.outside)
		}
	}
}

// dayOf is seed 1's scenario with ops, its broker's clock the desk's and
// every push delivered.
func dayOf(ops ...Op) Day {
	d := Generate(1, 0)
	d.Skew, d.PushLoss, d.Ops = 0, 0, ops
	return d
}

// runDay runs day and fails the test on an error or a broken invariant.
func runDay(t *testing.T, day Day) *Result {
	t.Helper()
	res, err := Run(t.Context(), day, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if res.Violation != nil {
		t.Fatalf("%s", Describe(res, len(day.Ops)))
	}
	return res
}

// OpAfterClose on the day after Thanksgiving (the first early close from
// Start): 30 minutes after its 13:00 close locator refuses a market short
// with that day's hours and sends nothing, its Day limit short at the
// market works without filling, and its Day_Plus one fills in the
// extended session; every execution lies in its session.
func TestAfterCloseDay(t *testing.T) {
	t.Parallel()
	res := runDay(t, dayOf(Op{Kind: OpAfterClose, Symbols: []string{"HTBX"}, Quantity: 100, MaxPrice: decimal.RequireFromString("0.10"), Wait: 30 * time.Minute}))
	trace := res.Trace[0]
	for _, want := range []string{"at 2026-11-27 13:30:00 ET", "market refused (exit 2)", "Day: locate filled", "working (exit 0); Day_Plus"} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace %q lacks %q", trace, want)
		}
	}
	if !strings.HasSuffix(trace, "filled (exit 0)") {
		t.Errorf("trace %q: want the Day_Plus short filled", trace)
	}
}

// A short locator places after the 8 PM rollover is the next trading
// day's and works until that day's session opens, where the broker fills
// it while the desk's owner is down overnight: `report` then counts its
// shares shorted, the owner having brought its working orders up to the
// broker's book first (report-figures; seed 770007 of 40 from 770001 broke
// it with report counting 0).
func TestReportCountsAFillAtTheOpen(t *testing.T) {
	t.Parallel()
	res := runDay(t, dayOf(
		Op{Kind: OpEvening, Symbols: []string{"HTBX"}, Quantity: 500, Wait: 30 * time.Second},
		Op{Kind: OpShort, Symbols: []string{"HTBX"}, Quantity: 100, MaxPrice: decimal.RequireFromString("0.10"),
			Order: &Order{Type: brokerclient.OrderTypeLimit, TIF: brokerclient.TimeInForceDay}},
		Op{Kind: OpNextDay},
		Op{Kind: OpReport},
	))
	if !strings.Contains(res.Trace[1], "working") || !strings.Contains(res.Trace[3], "shorted 100") {
		t.Errorf("trace %q: want the short working after 8 PM and reported shorted the next day", res.Trace)
	}
}
