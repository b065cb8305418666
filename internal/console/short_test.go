package console

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/workflow"
)

// The confirmation says what the order does, for each type and
// side: a short or a cover, at market, a limit, a stop, a stop limit, and
// a time in force other than Day.
func TestOrderWords(t *testing.T) {
	t.Parallel()
	d := decimal.RequireFromString
	for _, tc := range []struct {
		o    workflow.Order
		want string
	}{
		{workflow.Order{Side: "Sell", Symbol: "HTBX", Quantity: 100, OrderType: "Limit", TimeInForce: "Day", LimitPrice: d("12")}, "Sell short 100 HTBX at 12.00"},
		{workflow.Order{Side: "Buy", Symbol: "HTBX", Quantity: 100, OrderType: "Market", TimeInForce: "Day"}, "Buy to cover 100 HTBX at market"},
		{workflow.Order{Side: "Buy", Symbol: "HTBX", Quantity: 100, OrderType: "Stop", TimeInForce: "GoodTillCancel", StopPrice: d("13")}, "Buy to cover 100 HTBX stop 13.00, GoodTillCancel"},
		{workflow.Order{Side: "Sell", Symbol: "HTBX", Quantity: 50, OrderType: "StopLimit", TimeInForce: "Day", StopPrice: d("11"), LimitPrice: d("10.9")}, "Sell short 50 HTBX stop 11.00 limit 10.90"},
		{workflow.Order{Side: "Sell", Symbol: "HTBX", Quantity: 50, OrderType: "Limit", TimeInForce: "GTC_Plus", LimitPrice: d("0.555")}, "Sell short 50 HTBX at 0.555, GTC_Plus"},
	} {
		if got := OrderWords(&tc.o); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
