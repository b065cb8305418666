package engine_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// Issue 17 item 7 and spec "Orders": an order takes the workflows'
// pipeline. A short's sell (HTBX located first) and a working order that
// is then cancelled each leave one transition row per change of state in
// the order's log, in the order the updates announced them.
func TestOrdersAreLoggedLikeWorkflows(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	res, err := b.engine.Short(t.Context(), engine.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.NewFromInt(12), Policy: auto("0.02")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Order == nil || res.Order.State != states.Filled {
		t.Fatalf("short: %+v", res)
	}
	// A sell far above the market stays working until cancelled.
	working, err := b.engine.PlaceOrder(t.Context(), &engine.Order{ClientOrderID: uuid.NewString(), Account: "LV100001", Symbol: "AAPL",
		Side: "Sell", OpenClose: "Open", OrderType: "Limit", TimeInForce: "Day", Quantity: 10,
		LimitPrice: decimal.NewFromInt(250), Route: "SMART"})
	if err != nil {
		t.Fatal(err)
	}
	if working.State != states.OrderWorking {
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
