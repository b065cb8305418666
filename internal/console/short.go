package console

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/workflow"
)

// ShortOutcome is the JSON short and cover end with: the order, and (for a
// short) the locate that covers it.
type ShortOutcome struct {
	ClientOrderID string         `json:"clientOrderId,omitempty"`
	Account       string         `json:"account"`
	Symbol        string         `json:"symbol"`
	Side          string         `json:"side"`
	OpenClose     string         `json:"openClose"`
	Quantity      int64          `json:"quantity"`
	OrderType     string         `json:"orderType"`
	TimeInForce   string         `json:"timeInForce"`
	LimitPrice    string         `json:"limitPrice"`
	StopPrice     string         `json:"stopPrice,omitempty"`
	Route         string         `json:"route"`
	State         string         `json:"state"` // the order workflow's state, or not_sent
	OrderStatus   string         `json:"orderStatus,omitempty"`
	Executed      int64          `json:"executed"`
	PriceAvg      string         `json:"priceAvg,omitempty"`
	Code          string         `json:"code,omitempty"`
	Text          string         `json:"text,omitempty"`
	Reason        string         `json:"reason,omitempty"`
	Locate        *OutcomeRecord `json:"locate,omitempty"`
}

// NotSent is the state a short reports when it stopped before the order.
const NotSent = "not_sent"

func (r *ShortOutcome) fill(o *workflow.Order) {
	r.ClientOrderID, r.State, r.OrderStatus, r.Executed = o.LookupID(), string(o.State), o.OrderStatus, o.Executed
	r.Route = o.Route
	if o.Executed > 0 {
		r.PriceAvg = PriceShown(o.PriceAvg)
	}
	r.Code, r.Text, r.Reason = o.Code, o.Text, o.Reason
}

// Short prints how a short ended (its locate and its order, res nil when
// nothing came back): one table line, or one JSON object.
func Short(out Printer, acct string, req account.ShortRequest, res *account.ShortResult) {
	r := ShortOutcome{Account: acct, Symbol: req.Symbol, Side: string(brokerclient.SideSell),
		OpenClose: string(brokerclient.OpenCloseOpen), Quantity: req.Quantity, OrderType: orDefault(req.OrderType, string(brokerclient.OrderTypeLimit)),
		TimeInForce: orDefault(req.TimeInForce, string(brokerclient.TimeInForceDay)), LimitPrice: shownIf(req.Limit), StopPrice: shownIf(req.Stop),
		Route: req.Route, State: NotSent}
	if res != nil {
		r.Reason = res.Reason
		if res.Locate != nil {
			lo := OutcomeRecordOf(res.Locate)
			r.Locate = &lo
		}
		if res.Order != nil {
			r.fill(res.Order)
		}
	}
	r.print(out, "Sell short")
}

// Cover prints how a buy to cover ended (got nil when it was not sent, with
// reason saying why): one table line, or one JSON object.
func Cover(out Printer, o workflow.Order, got *workflow.Order, reason string) {
	r := ShortOutcome{Account: o.Account, Symbol: o.Symbol, Side: o.Side, OpenClose: o.OpenClose, Quantity: o.Quantity,
		OrderType: o.OrderType, TimeInForce: o.TimeInForce, LimitPrice: shownIf(o.LimitPrice), StopPrice: shownIf(o.StopPrice),
		Route: o.Route, State: NotSent, Reason: reason}
	if got != nil {
		r.fill(got)
	}
	r.print(out, "Buy to cover")
}

// shownIf is a price as shown, or "" when there is none.
func shownIf(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return PriceShown(d)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (r ShortOutcome) print(out Printer, side string) {
	reason := r.Text
	if r.Code != "" && !strings.HasPrefix(reason, r.Code) {
		reason = strings.TrimSpace(r.Code + " " + reason)
	}
	if reason == "" {
		reason = r.Reason
	}
	typ := r.OrderType
	if r.TimeInForce != string(brokerclient.TimeInForceDay) {
		typ += " " + r.TimeInForce
	}
	out.Table(
		[]string{"CLIENT ORDER ID", "SYMBOL", "SIDE", "QTY", "TYPE", "LIMIT", "STOP", "ROUTE", "STATE", "STATUS", "EXECUTED", "AVG PRICE", "REASON"},
		[][]string{{r.ClientOrderID, r.Symbol, side, Int(r.Quantity), typ, r.LimitPrice, r.StopPrice, r.Route, r.State, r.OrderStatus, Int(r.Executed), r.PriceAvg, reason}},
		[]any{r})
}

// OrderWords says what an order does, as a person reads it: "Sell short
// 100 HTBX at 12.00", "Buy to cover 100 HTBX at market", "... stop 13.00
// limit 13.10, GTC_Plus".
func OrderWords(o *workflow.Order) string {
	side := "Sell short"
	if o.Side == string(brokerclient.SideBuy) {
		side = "Buy to cover"
	}
	var price string
	switch brokerclient.OrderType(o.OrderType) {
	case brokerclient.OrderTypeMarket:
		price = "at market"
	case brokerclient.OrderTypeStop:
		price = "stop " + PriceShown(o.StopPrice)
	case brokerclient.OrderTypeStopLimit:
		price = "stop " + PriceShown(o.StopPrice) + " limit " + PriceShown(o.LimitPrice)
	default:
		price = "at " + PriceShown(o.LimitPrice)
	}
	w := fmt.Sprintf("%s %d %s %s", side, o.Quantity, o.Symbol, price)
	if o.TimeInForce != "" && o.TimeInForce != string(brokerclient.TimeInForceDay) {
		w += ", " + o.TimeInForce
	}
	return w
}
