package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// decided is o once the broker has decided it (working too, with
// working): spec "Orders" makes the outcome asynchronous, and a placement
// answers with what it knows when its follow window ends, which on a loaded
// machine can be before the broker's fill reached the engine; a wait on the
// order is what ends with the outcome.
func decided(t *testing.T, b *testBundle, o *engine.Order, working bool) *engine.Order {
	t.Helper()
	if o.Terminal() || working && o.State == states.OrderWorking {
		return o
	}
	got, err := b.engine.WaitOrder(t.Context(), o.ClientOrderID, working)
	if err != nil {
		t.Fatalf("waiting on order %s: %v", o.ClientOrderID, err)
	}
	return got
}

// Spec "Orders": an order takes the workflows'
// pipeline. A short's sell (HTBX located first) and a working order that
// is then cancelled each leave one transition row per change of state in
// the order's log, in the order the updates announced them.
func TestOrdersAreLoggedLikeWorkflows(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	res, err := b.engine.Short(t.Context(), account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.NewFromInt(12), Policy: auto("0.02"),
		Guard: workflow.Guard{RefPrice: decimal.RequireFromString("12.50")}}, engine.ShortAnswers{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Order == nil {
		t.Fatalf("short: %+v", res)
	}
	if res.Order = decided(t, b, res.Order, false); res.Order.State != states.Filled {
		t.Fatalf("short: %+v", res.Order)
	}
	// A sell far above the market (past the fat-finger guard, on purpose)
	// stays working until cancelled.
	working, err := b.engine.PlaceOrder(t.Context(), &engine.Order{ClientOrderID: uuid.NewString(), Account: "LV100001", Symbol: "AAPL",
		Side: "Sell", OpenClose: "Open", OrderType: "Limit", TimeInForce: "Day", Quantity: 10,
		LimitPrice: decimal.NewFromInt(250), Route: "SMART"}, workflow.Guard{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if working = decided(t, b, working, true); working.State != states.OrderWorking {
		t.Fatalf("order far above the market is %s, want working", working.State)
	}
	canceled, err := b.engine.CancelOrder(t.Context(), working.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	if canceled.State != states.Canceled {
		t.Fatalf("cancelled order is %s", canceled.State)
	}
	for _, o := range []*engine.Order{res.Order, canceled} {
		log, err := b.store.OrderTransitions(t.Context(), o.ClientOrderID)
		if err != nil {
			t.Fatal(err)
		}
		path := []string{}
		for _, tr := range log {
			path = append(path, string(tr.To))
		}
		var announced []string
		b.mu.Lock()
		for _, u := range b.updates {
			if u.Order != nil && u.Order.ClientOrderID == o.ClientOrderID {
				announced = append(announced, string(u.Order.State))
			}
		}
		b.mu.Unlock()
		got, want := strings.Join(path, ">"), "intent>"+strings.Join(announced, ">")
		if got != want || !strings.HasPrefix(got, "intent>sent>") || !strings.HasSuffix(got, string(o.State)) {
			t.Errorf("order %s log %s, want %s (intent, then each announced change, ending %s)", o.ClientOrderID, got, want, o.State)
		}
	}
}

// Spec "Orders" and R78: a market order places in the regular
// session (10:00 ET) and fills (a market short once a fill of its symbol
// gives the price it is sized at); at 17:00 ET, on Thanksgiving at 11:00
// ET, and the day after before its open and after its 13:00 early close,
// one is refused before it is sent (the broker would reject it), and a
// limit order with extended hours (Day_Plus) is what the refusal points to
// and places.
func TestMarketOrderOnlyInSession(t *testing.T) {
	t.Parallel()
	order := func(typ, tif string, limit decimal.Decimal) *engine.Order {
		return &engine.Order{ClientOrderID: uuid.NewString(), Account: "LV100001", Symbol: "AAPL",
			Side: "Buy", OpenClose: "Open", OrderType: typ, TimeInForce: tif, Quantity: 10, LimitPrice: limit}
	}
	b := setup(t, setupOpt{})
	got, err := b.engine.PlaceOrder(t.Context(), order("Market", "Day", decimal.Zero), workflow.Guard{})
	if err == nil {
		got = decided(t, b, got, false)
	}
	if err != nil || got.State != states.Filled || got.Route != "SMART" {
		t.Fatalf("market order at 10:00 ET: %+v, %v; want filled on SMART", got, err)
	}
	// A market short is sized at the symbol's reference price: refused
	// while the broker shows none for HTBX (no position, no fill today, no
	// close), placed once a short of it filled.
	mkt := account.ShortRequest{Symbol: "HTBX", Quantity: 100, OrderType: "Market", Policy: auto("0.02")}
	if _, err := b.engine.Short(t.Context(), mkt, engine.ShortAnswers{}); !errors.Is(err, brokercode.ErrInput) || !strings.Contains(err.Error(), "--ref-price") {
		t.Fatalf("market short with no fill today: %v, want refused", err)
	}
	limit := account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.NewFromInt(12), Policy: auto("0.02"), Guard: workflow.Guard{RefPrice: decimal.RequireFromString("12.50")}}
	if res, err := b.engine.Short(t.Context(), limit, engine.ShortAnswers{}); err != nil || res.Order == nil || decided(t, b, res.Order, false).State != states.Filled {
		t.Fatalf("limit short: %+v, %v", res, err)
	}
	if res, err := b.engine.Short(t.Context(), mkt, engine.ShortAnswers{}); err != nil || res.Order == nil || decided(t, b, res.Order, false).State != states.Filled || res.Order.OrderType != "Market" {
		t.Fatalf("market short after a fill: %+v, %v; want filled", res, err)
	}
	// The refusal gives the calendar's hours: the
	// exchange closed on Thanksgiving, and at 13:00 the day after, which
	// it says before that day's open too.
	for at, hours := range map[time.Time]string{
		time.Date(2026, 11, 25, 17, 0, 0, 0, market.NewYork):  "today's session ran 09:30 to 16:00 ET; the next opens Fri 2026-11-27 09:30 ET",
		time.Date(2026, 11, 26, 11, 0, 0, 0, market.NewYork):  "the exchange is closed today (Thanksgiving Day); the next session opens Fri 2026-11-27 09:30 ET",
		time.Date(2026, 11, 27, 8, 0, 0, 0, market.NewYork):   "today's session opens at 09:30 ET and closes at 13:00 ET (an early close)",
		time.Date(2026, 11, 27, 13, 30, 0, 0, market.NewYork): "today's session ran 09:30 to 13:00 ET (an early close); the next opens Mon 2026-11-30 09:30 ET",
	} {
		t.Run(at.Format(time.DateTime), func(t *testing.T) {
			b := setup(t, setupOpt{sim: []simtest.Option{simtest.WithStart(at)}})
			before := len(b.sim.Sim.Requests())
			_, err := b.engine.PlaceOrder(t.Context(), order("Market", "Day", decimal.Zero), workflow.Guard{})
			if !errors.Is(err, brokercode.ErrInput) || !strings.Contains(err.Error(), "regular session") || !strings.Contains(err.Error(), hours) {
				t.Fatalf("market order at %s: %v; want refused for the session, saying %q", at, err, hours)
			}
			for _, r := range b.sim.Sim.Requests()[before:] {
				if r.Method == "POST" {
					t.Errorf("sent %s %s", r.Method, r.Path)
				}
			}
			got, err := b.engine.PlaceOrder(t.Context(), order("Limit", "Day_Plus", decimal.NewFromInt(150)), workflow.Guard{RefPrice: decimal.NewFromInt(150)})
			if err != nil || got.Terminal() && got.State != states.Filled {
				t.Errorf("extended-hours limit at %s: %+v, %v", at, got, err)
			}
		})
	}
}

// Found by the generated trading days (tradingday, seeds 1, 10, 18, 20 and
// 27 of the order side): an order the broker leaves PendingNew past the
// engine's follow window (spec "Orders": the outcome is asynchronous) was
// no longer looked up, and a later wait on it (a short or an order placed
// again under its clientOrderId follows it) waited forever, though the
// broker had long decided. A wait on such an order follows it again and
// ends with the broker's outcome.
func TestWaitFollowsAnOrderLeftPendingAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{scenario: func(sc *brokersim.Scenario) {
		sc.Timing.OrderAsync = brokersim.Duration(time.Minute)
	}})
	o := &engine.Order{ClientOrderID: uuid.NewString(), Account: "LV100001", Symbol: "AAPL",
		Side: "Buy", OpenClose: "Open", OrderType: "Limit", TimeInForce: "Day", Quantity: 10,
		LimitPrice: decimal.NewFromInt(200), Route: "SMART"}
	first, err := b.engine.PlaceOrder(t.Context(), o, workflow.Guard{RefPrice: decimal.NewFromInt(190)})
	if err != nil {
		t.Fatal(err)
	}
	if first.Terminal() || first.State == states.OrderWorking {
		t.Fatalf("an order the broker decides in a minute is %s after the follow window; want it still undecided", first.State)
	}
	// The broker decides after a minute; nobody follows the order then.
	if err := clock.Sleep(t.Context(), b.sim.Clock, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got, err := b.engine.WaitOrder(ctx, o.ClientOrderID, false)
	if err != nil {
		t.Fatalf("waiting on the order left pending: %v", err)
	}
	if got.State != states.Filled {
		t.Errorf("order is %s after the wait; the broker filled it", got.State)
	}
}

// Spec "Route record", "Rate limits" (routes: 1 a second,
// burst 1): the account's routes are read once a trading day, not before
// every order. Three orders on one day read them once; a route the list
// lacks reads them again before it is refused, with nothing placed; the
// next day's order reads them again.
func TestRoutesReadOnceATradingDay(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	reads := func() int {
		n := 0
		for _, r := range b.sim.Sim.Requests() {
			if r.Method == "GET" && strings.HasSuffix(r.Path, "/routes") {
				n++
			}
		}
		return n
	}
	place := func(id, route, tif string) (*engine.Order, error) {
		return b.engine.PlaceOrder(t.Context(), &engine.Order{ClientOrderID: id, Account: "LV100001", Symbol: "AAPL",
			Side: "Buy", OpenClose: "Open", OrderType: "Limit", TimeInForce: tif, Quantity: 10, LimitPrice: decimal.NewFromInt(150), Route: route}, workflow.Guard{RefPrice: decimal.NewFromInt(150)})
	}
	for _, route := range []string{"", "SMART", "ARCA"} {
		if _, err := place(uuid.NewString(), route, "Day"); err != nil {
			t.Fatalf("order on route %q: %v", route, err)
		}
	}
	if n := reads(); n != 1 {
		t.Errorf("three orders read the routes %d times, want 1", n)
	}
	refused := uuid.NewString()
	if _, err := place(refused, "NOPE", "Day"); !errors.Is(err, brokercode.ErrInput) || !strings.Contains(err.Error(), "not available") {
		t.Errorf("order on a route the account lacks: %v, want refused", err)
	}
	if n := reads(); n != 2 {
		t.Errorf("a route the list lacks: routes read %d times in all, want 2 (read again before refusing)", n)
	}
	// By its id, not by a count: an earlier order's placement may still be
	// on its way (PlaceOrder returns once the order is followed for
	// followFor, sent or not).
	for _, r := range b.sim.Sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/order") && strings.Contains(r.Body, refused) {
			t.Errorf("the refused order was sent: %s", r.Body)
		}
	}
	b.sim.Advance(24 * time.Hour)
	if _, err := place(uuid.NewString(), "", "Day_Plus"); err != nil {
		t.Fatalf("next day's order: %v", err)
	}
	if n := reads(); n != 3 {
		t.Errorf("the next trading day: routes read %d times in all, want 3", n)
	}
}

// Spec "Portfolio stream" promises no delivery: with every push lost
// (brokersim Faults.RatePushLoss 1) and the connection up, an order's fate
// is read once the stream stays quiet, so marketable orders placed end
// Filled, not left pending or working (the generated days, seeds 4, 7 and
// 23 of the faults branch: locator said working, the broker had filled).
func TestOrderFateReadWhenPushesAreLost(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{sim: []simtest.Option{simtest.WithSimOption(brokersim.WithFaults(brokersim.Faults{RatePushLoss: 1}))}})
	for i := range 3 {
		o := &engine.Order{ClientOrderID: uuid.NewString(), Account: "LV100001", Symbol: "AAPL",
			Side: "Buy", OpenClose: "Open", OrderType: "Limit", TimeInForce: "Day", Quantity: 10,
			LimitPrice: decimal.NewFromInt(200), Route: "SMART"}
		if _, err := b.engine.PlaceOrder(t.Context(), o, workflow.Guard{RefPrice: decimal.NewFromInt(190)}); err != nil {
			t.Fatal(err)
		}
		// Whatever the placement saw in its follow window, waiting on
		// the order ends with the broker's fill.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		got, err := b.engine.WaitOrder(ctx, o.ClientOrderID, false)
		cancel()
		if err != nil {
			t.Fatalf("order %d: waiting for its fate with every push lost: %v", i, err)
		}
		if got.State != states.Filled {
			t.Errorf("order %d is %s (%s); the broker filled it", i, got.State, got.OrderStatus)
		}
	}
}

// Spec "Orders" (time in force, the order book) on the exchange's
// calendar: a GoodTillCancel buy placed at 16:30, after the close, works,
// and locator lets it rest once followed for its follow window. It fills
// at Friday's 9:30 opening, across Thanksgiving, which locator's record
// learns only when RefreshOrders reads the book: then it is Filled with
// the broker's shares and price (generated days of 40 from seed 770001:
// `report` counted 0 shares shorted of a short filled so, seed 770007).
func TestRefreshOrdersLearnsALaterFill(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{sim: []simtest.Option{simtest.WithStart(time.Date(2026, 11, 25, 16, 30, 0, 0, market.NewYork))}})
	o := &engine.Order{ClientOrderID: uuid.NewString(), Account: "LV100001", Symbol: "AAPL", Side: "Buy", OpenClose: "Open",
		OrderType: "Limit", TimeInForce: "GoodTillCancel", Quantity: 10, LimitPrice: decimal.NewFromInt(200), Route: "SMART"}
	got, err := b.engine.PlaceOrder(t.Context(), o, workflow.Guard{RefPrice: decimal.NewFromInt(190)})
	if err != nil || got.State != states.OrderWorking {
		t.Fatalf("a marketable limit after the close: %+v, %v; want it working", got, err)
	}
	if err := clock.Sleep(t.Context(), b.sim.Clock, time.Minute); err != nil { // past the follow window
		t.Fatal(err)
	}
	b.sim.Advance(time.Date(2026, 11, 27, 9, 31, 0, 0, market.NewYork).Sub(b.sim.Clock.Now()))
	if rec, err := b.store.GetOrder(t.Context(), o.ClientOrderID); err != nil || rec.State != states.OrderWorking {
		t.Fatalf("before the refresh: %+v, %v; want the record still working (the order rests)", rec, err)
	}
	if err := b.engine.RefreshOrders(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec, err := b.store.GetOrder(t.Context(), o.ClientOrderID)
	if err != nil || rec.State != states.Filled || rec.Executed != 10 || !rec.PriceAvg.Equal(decimal.NewFromInt(190)) {
		t.Errorf("after the refresh: %+v, %v; want Filled, 10 at 190 as the broker's book says", rec, err)
	}
}

// TestStartLearnsAFillWhileNoOwnerRan (spec "Orders": the book holds
// today's orders, and "Order record": lastUpdated): an order left working
// fills at the opening while no engine runs, so no stream pushes it to
// anyone. The next engine's Start reads the book once because it holds a
// working order, and records the fill with the broker's time of it, so
// that `report` dates it on the trading day the broker made it (generated
// day seed 18 of 60 operations: an evening restart, then a report that
// counted 0 shares shorted of a short filled at 4:00).
func TestStartLearnsAFillWhileNoOwnerRan(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{sim: []simtest.Option{simtest.WithStart(time.Date(2026, 11, 25, 16, 30, 0, 0, market.NewYork))}})
	o := &engine.Order{ClientOrderID: uuid.NewString(), Account: "LV100001", Symbol: "AAPL", Side: "Buy", OpenClose: "Open",
		OrderType: "Limit", TimeInForce: "GoodTillCancel", Quantity: 10, LimitPrice: decimal.NewFromInt(200), Route: "SMART"}
	if got, err := b.engine.PlaceOrder(t.Context(), o, workflow.Guard{RefPrice: decimal.NewFromInt(190)}); err != nil || got.State != states.OrderWorking {
		t.Fatalf("a marketable limit after the close: %+v, %v; want it working", got, err)
	}
	b.engine.Close()
	opening := time.Date(2026, 11, 27, 9, 30, 0, 0, market.NewYork)
	b.sim.Advance(opening.Add(time.Hour).Sub(b.sim.Clock.Now()))
	b.start(t, nil)
	rec, err := b.store.GetOrder(t.Context(), o.ClientOrderID)
	if err != nil || rec.State != states.Filled || rec.Executed != 10 || !rec.PriceAvg.Equal(decimal.NewFromInt(190)) {
		t.Fatalf("after Start: %+v, %v; want Filled, 10 at 190 as the broker's book says", rec, err)
	}
	if !rec.ExecutedAt.Equal(opening) {
		t.Errorf("executed at %s; want the broker's time of the fill, %s (recorded at %s)", rec.ExecutedAt, opening, rec.UpdatedAt)
	}
}
