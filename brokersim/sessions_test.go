package brokersim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/simtest"
)

// The session tests place short sales of AAPL (easy to borrow: no locate
// needed), 10 shares at a limit of 185, marketable at the scenario's last
// price of 190: outside their session they must not fill all the same.

// nyAt is d November 2026, h:m New York time.
func nyAt(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, market.NewYork) }

// sessSim starts a simulator at start, rate limits off.
func sessSim(t *testing.T, start time.Time) *simtest.Bundle {
	t.Helper()
	return ordSim(t, simtest.WithStart(start))
}

// sessShort places a marketable limit short of AAPL as id, with time in
// force tif, and lets its asynchronous checks pass.
func sessShort(t *testing.T, b *simtest.Bundle, id, tif string) {
	t.Helper()
	o := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": id, "side": "Sell", "limitPrice": 185, "timeInForce": tif}))
	if o.OrderStatus != "PendingNew" {
		t.Fatalf("%s (%s) placed at %s: %s %q, want PendingNew", id, tif, market.DateTime(b.Sim.Now()), o.OrderStatus, o.text())
	}
	b.Advance(time.Second)
}

// advanceTo moves the shared clock to at.
func advanceTo(t *testing.T, b *simtest.Bundle, at time.Time) {
	t.Helper()
	d := at.Sub(b.Sim.Now())
	if d < 0 {
		t.Fatalf("the clock is at %s, past %s", market.DateTime(b.Sim.Now()), market.DateTime(at))
	}
	b.Advance(d)
}

// sessOrder is the simulator's record of order id (found after the
// rollover too, unlike the single-order GET).
func sessOrder(t *testing.T, b *simtest.Bundle, id string) brokersim.OrderRecord {
	t.Helper()
	for _, o := range b.Sim.Orders() {
		if o.ClientOrderID == id {
			return o
		}
	}
	t.Fatalf("no order %s", id)
	return brokersim.OrderRecord{}
}

// wantWorking fails unless order id is still working, nothing executed.
func wantWorking(t *testing.T, b *simtest.Bundle, id string) {
	t.Helper()
	if o := sessOrder(t, b, id); o.Status != "Accepted" || o.Executed != 0 {
		t.Errorf("%s at %s: %s, %d executed; want working (Accepted), none executed", id, market.DateTime(b.Sim.Now()), o.Status, o.Executed)
	}
}

// wantFilledAt fails unless order id filled whole, at exactly at.
func wantFilledAt(t *testing.T, b *simtest.Bundle, id string, at time.Time) {
	t.Helper()
	var fills []brokersim.FillRecord
	for _, f := range b.Sim.Fills() {
		if f.ClientOrderID == id {
			fills = append(fills, f)
		}
	}
	if o := sessOrder(t, b, id); o.Status != "Filled" || len(fills) != 1 || !fills[0].At.Equal(at) {
		t.Errorf("%s: %s with fills %+v; want one fill at %s", id, o.Status, fills, market.DateTime(at))
	}
}

// wantExpiredAt fails unless order id expired at exactly at, nothing
// executed.
func wantExpiredAt(t *testing.T, b *simtest.Bundle, id string, at time.Time) {
	t.Helper()
	if o := sessOrder(t, b, id); o.Status != "Expired" || o.Executed != 0 || !o.Updated.Equal(at) {
		t.Errorf("%s: %s at %s, %d executed; want Expired at %s, none executed", id, o.Status, market.DateTime(o.Updated), o.Executed, market.DateTime(at))
	}
}

// Spec "Orders" (rule 2, time in force), "Order statuses" (Expired) and
// "Cross-cutting conventions" (session hours are Eastern), on the
// exchange's calendar: the day after Thanksgiving 2026 closes at 13:00.
// A Day short placed at noon fills; one placed at 12:59 that becomes
// marketable only after the close never fills and expires at 13:00; one
// placed at 13:30, marketable, does not fill then nor on a later tick,
// works, and expires when its day ends at the 8 PM rollover; a Day_Plus
// placed at 17:00 fills in the extended session.
func TestDayOrderAfterEarlyClose(t *testing.T) {
	t.Parallel()
	b := sessSim(t, nyAt(27, 12, 0))
	sessShort(t, b, "noon", "Day")
	wantFilledAt(t, b, "noon", nyAt(27, 12, 0).Add(50*time.Millisecond))

	advanceTo(t, b, nyAt(27, 12, 59))
	o := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "before-close", "side": "Sell", "limitPrice": 195}))
	b.Advance(time.Second)
	wantWorking(t, b, o.ClientOrderID)
	advanceTo(t, b, nyAt(27, 13, 0).Add(30*time.Second))
	b.Sim.SetPrice("AAPL", decimal.NewFromInt(196))
	wantExpiredAt(t, b, "before-close", nyAt(27, 13, 0))
	b.Sim.SetPrice("AAPL", decimal.NewFromInt(190))

	advanceTo(t, b, nyAt(27, 13, 30))
	sessShort(t, b, "after-close", "Day")
	wantWorking(t, b, "after-close")
	b.Sim.SetPrice("AAPL", decimal.NewFromInt(191)) // a tick: still no session
	wantWorking(t, b, "after-close")
	advanceTo(t, b, nyAt(27, 17, 0))
	sessShort(t, b, "extended", "Day_Plus")
	wantFilledAt(t, b, "extended", nyAt(27, 17, 0).Add(50*time.Millisecond))
	advanceTo(t, b, nyAt(27, 19, 59))
	wantWorking(t, b, "after-close")
	advanceTo(t, b, nyAt(27, 20, 0))
	wantExpiredAt(t, b, "after-close", nyAt(27, 20, 0))
}

// Spec R78 ("Order rejection codes": market orders outside the regular
// session, synchronous) on the calendar: on the day after Thanksgiving a
// market short at 12:59 fills; at 13:30, after the early close, it is
// rejected at once with R78, as on Thanksgiving itself.
func TestMarketOrderR78AfterEarlyClose(t *testing.T) {
	t.Parallel()
	placeMarket := func(b *simtest.Bundle, id string) ordRow {
		return ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": id, "side": "Sell", "orderType": "Market", "limitPrice": nil}))
	}
	b := sessSim(t, nyAt(27, 12, 59))
	placeMarket(b, "in-session")
	b.Advance(time.Second)
	if o := sessOrder(t, b, "in-session"); o.Status != "Filled" {
		t.Errorf("market short at 12:59: %s, want Filled", o.Status)
	}
	advanceTo(t, b, nyAt(27, 13, 30))
	if o := placeMarket(b, "after-close"); o.OrderStatus != "Rejected" || !strings.HasPrefix(o.text(), "R78: ") || o.StartTime != o.LastUpdated {
		t.Errorf("market short at 13:30 on an early close: %s %q, want a synchronous R78", o.OrderStatus, o.text())
	}
	h := sessSim(t, nyAt(26, 11, 0))
	if o := placeMarket(h, "holiday"); o.OrderStatus != "Rejected" || !strings.HasPrefix(o.text(), "R78: ") {
		t.Errorf("market short on Thanksgiving: %s %q, want R78", o.OrderStatus, o.text())
	}
}

// Spec "Orders" rule 2 and "Order statuses" on an ordinary day,
// Wednesday 2026-11-25: a Day short at 15:59 fills, and leaves the book at
// the 8 PM rollover; one at 16:01 works, unfilled, and expires then; a
// GoodTillCancel one placed at 16:01 works across Thanksgiving, fills at
// Friday's 9:30 open and is in Friday's book then.
func TestOrderAtTheClose(t *testing.T) {
	t.Parallel()
	b := sessSim(t, nyAt(25, 15, 59))
	sessShort(t, b, "before", "Day")
	wantFilledAt(t, b, "before", nyAt(25, 15, 59).Add(50*time.Millisecond))
	advanceTo(t, b, nyAt(25, 16, 1))
	sessShort(t, b, "after", "Day")
	sessShort(t, b, "gtc", "GoodTillCancel")
	wantWorking(t, b, "after")
	wantWorking(t, b, "gtc")
	advanceTo(t, b, nyAt(25, 20, 0))
	wantExpiredAt(t, b, "after", nyAt(25, 20, 0))
	// The rollover ended Wednesday's book, on its calendar date too.
	if _, ok := ordGet(t, b, b.Live, "LV100001", "before"); ok {
		t.Error("Wednesday's filled order is still found by id after its 8 PM rollover")
	}
	advanceTo(t, b, nyAt(27, 9, 29))
	wantWorking(t, b, "gtc")
	advanceTo(t, b, nyAt(27, 9, 31))
	wantFilledAt(t, b, "gtc", nyAt(27, 9, 30))
	// Filled in Friday's session, it is of Friday's book, where a client
	// learns of the fill.
	if o, ok := ordGet(t, b, b.Live, "LV100001", "gtc"); !ok || o.OrderStatus != "Filled" {
		t.Errorf("Friday's single-order GET of Wednesday's GoodTillCancel order filled at the open: %v %s, want it Filled", ok, o.OrderStatus)
	}
	// The admin read of the executions names each one's order.
	var fills []brokersim.FillRecord
	b.Do(t, simtest.Key{}, "GET", "/_sim/fills", nil).JSON(t, &fills)
	if len(fills) != 2 || fills[0].ClientOrderID != "before" || fills[1].ClientOrderID != "gtc" || fills[1].TimeInForce != "GoodTillCancel" || !fills[1].Placed.Equal(nyAt(25, 16, 1).Add(time.Second)) {
		t.Errorf("GET /_sim/fills: %+v, want the fills of before and gtc", fills)
	}
}

// Spec "Orders" rule 2 on a holiday, Thanksgiving 2026: the exchange is
// closed all day, and an order placed then belongs to Friday's trading
// day (the broker's day ends at its 8 PM rollover; rollover.go). A Day
// short and a Day_Plus one placed at 11:00 do not fill that day, not even
// at 17:00 after a tick; Friday the Day_Plus fills as the extended session
// opens at 4:00 and the Day at the 9:30 open.
func TestOrderOnAHoliday(t *testing.T) {
	t.Parallel()
	b := sessSim(t, nyAt(26, 11, 0))
	sessShort(t, b, "day", "Day")
	sessShort(t, b, "plus", "Day_Plus")
	advanceTo(t, b, nyAt(26, 17, 0))
	b.Sim.SetPrice("AAPL", decimal.NewFromInt(191))
	wantWorking(t, b, "day")
	wantWorking(t, b, "plus")
	advanceTo(t, b, nyAt(27, 4, 1))
	wantFilledAt(t, b, "plus", nyAt(27, 4, 0))
	wantWorking(t, b, "day")
	advanceTo(t, b, nyAt(27, 9, 31))
	wantFilledAt(t, b, "day", nyAt(27, 9, 30))
}

// Spec "Orders" rule 2 (extended hours are Day_Plus and GTC_Plus limit
// orders): at 17:00 on an ordinary day both fill in the extended session,
// where a Day order placed with them works; a Day_Plus placed at 20:30,
// after the rollover, is Friday's (Thanksgiving between): it fills as
// Friday's extended session opens and is in Friday's book.
func TestExtendedHoursOrders(t *testing.T) {
	t.Parallel()
	b := sessSim(t, nyAt(25, 17, 0))
	sessShort(t, b, "day-plus", "Day_Plus")
	sessShort(t, b, "gtc-plus", "GTC_Plus")
	sessShort(t, b, "day", "Day")
	wantFilledAt(t, b, "day-plus", nyAt(25, 17, 0).Add(50*time.Millisecond))
	wantFilledAt(t, b, "gtc-plus", nyAt(25, 17, 0).Add(time.Second+50*time.Millisecond))
	wantWorking(t, b, "day")
	advanceTo(t, b, nyAt(25, 20, 30))
	sessShort(t, b, "night", "Day_Plus")
	wantWorking(t, b, "night")
	advanceTo(t, b, nyAt(27, 4, 1))
	wantFilledAt(t, b, "night", nyAt(27, 4, 0))
	// Placed in Friday's trading day, it is in Friday's book and found by
	// id there ("Orders": today's orders), though its calendar date was
	// Wednesday's.
	if o, ok := ordGet(t, b, b.Live, "LV100001", "night"); !ok || o.OrderStatus != "Filled" {
		t.Errorf("Friday's single-order GET of the order placed at 20:30 Wednesday: %v %s, want it Filled", ok, o.OrderStatus)
	}
}
