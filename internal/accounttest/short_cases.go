// Short cases: a short sale confirmed, and one declined at confirmation.

package accounttest

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/workflow"
)

// Spec "Orders": a short's order is confirmed by the asker, then placed
// once under its clientOrderId.
func shortConfirmed(t *testing.T, e *Env) {
	k := newAsker(yes())
	a := e.Open(caller("test short", k))
	res, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.RequireFromString("12.50"), Policy: capped("0.05"), Confirm: true,
		Guard: workflow.Guard{RefPrice: decimal.RequireFromString("12.50")}})
	ok(t, err)
	if q := k.question(t); q.Order == nil || q.Order.Quantity != 100 {
		t.Errorf("question %+v, want the order to confirm", q)
	}
	if res.Locate == nil || !res.Locate.Located() || res.Order == nil || res.Declined {
		t.Fatalf("short %+v, want a located short with its order", res)
	}
	// Short gives the order as it stands after a while of following it
	// (still on its way when virtual time ran fast): placing it again by
	// its id follows it to the broker's answer and sends nothing new.
	_, err = a.PlaceOrder(ctx(t), account.PlaceOrderRequest{Order: workflow.Order{ClientOrderID: res.Order.ClientOrderID}})
	ok(t, err)
	if n := count(e, "POST", "/order"); n != 1 {
		t.Errorf("%d orders sent, want 1; the short's order: %+v", n, res.Order)
	}
}

// A short refused at its confirmation sends no order: the person's
// choice.
func shortDeclined(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test short", k))
	res, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 100, Limit: decimal.RequireFromString("12.50"), Policy: capped("0.05"), Confirm: true,
		Guard: workflow.Guard{RefPrice: decimal.RequireFromString("12.50")}})
	ok(t, err)
	if !res.Declined || res.Order != nil {
		t.Errorf("short %+v, want declined at its confirmation, no order", res)
	}
	if n := count(e, "POST", "/order"); n != 0 {
		t.Errorf("%d orders sent, want 0", n)
	}
}
