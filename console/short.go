package console

import (
	"strings"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/workflow"
)

// ShortOutcome is the JSON the command ends with: the order, and the locate
// that covers it.
type ShortOutcome struct {
	ClientOrderID string   `json:"clientOrderId,omitempty"`
	Account       string   `json:"account"`
	Symbol        string   `json:"symbol"`
	Side          string   `json:"side"`
	OpenClose     string   `json:"openClose"`
	Quantity      int64    `json:"quantity"`
	LimitPrice    string   `json:"limitPrice"`
	Route         string   `json:"route"`
	State         string   `json:"state"` // the order workflow's state, or not_sent
	OrderStatus   string   `json:"orderStatus,omitempty"`
	Executed      int64    `json:"executed"`
	PriceAvg      string   `json:"priceAvg,omitempty"`
	Code          string   `json:"code,omitempty"`
	Text          string   `json:"text,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	Locate        *Outcome `json:"locate,omitempty"`
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
		OpenClose: string(brokerclient.OpenCloseOpen), Quantity: req.Quantity, LimitPrice: PriceShown(req.Limit),
		Route: req.Route, State: NotSent}
	if res != nil {
		r.Reason = res.Reason
		if res.Locate != nil {
			lo := OutcomeOf(res.Locate)
			r.Locate = &lo
		}
		if res.Order != nil {
			r.fill(res.Order)
		}
	}
	reason := r.Text
	if r.Code != "" && !strings.HasPrefix(reason, r.Code) {
		reason = strings.TrimSpace(r.Code + " " + reason)
	}
	if reason == "" {
		reason = r.Reason
	}
	out.Table(
		[]string{"CLIENT ORDER ID", "SYMBOL", "SIDE", "QTY", "LIMIT", "ROUTE", "STATE", "STATUS", "EXECUTED", "AVG PRICE", "REASON"},
		[][]string{{r.ClientOrderID, r.Symbol, "Sell short", Int(r.Quantity), r.LimitPrice, r.Route, r.State, r.OrderStatus, Int(r.Executed), r.PriceAvg, reason}},
		[]any{r})
}
