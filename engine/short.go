package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/workflow"
)

// ErrSizing: sizing says the short cannot be placed now (buying power,
// located shares, account status); nothing was sent.
var ErrSizing = errors.New("sizing refuses the short")

// ShortAnswers are who answers a short's questions in the process that
// asked for it; the request itself is the account API's
// (account.ShortRequest).
type ShortAnswers struct {
	// Confirm, when set, is asked before the order leaves; false sends
	// nothing.
	Confirm func(ctx context.Context, o Order) bool
	// Ask and Asker are the locate's (see Request).
	Ask   func(ctx context.Context, o Offer) bool
	Asker string
}

// validShort checks a short's request before anything is sent: the one
// check of it, made by Short.
func validShort(r account.ShortRequest) error {
	if err := workflow.ValidateID(r.LocateID); err != nil {
		return err
	}
	if err := workflow.ValidateID(r.ClientOrderID); err != nil {
		return err
	}
	if err := brokercode.ValidateSymbol(r.Symbol); err != nil {
		return err
	}
	if err := workflow.ValidateOrderQuantity(r.Quantity); err != nil {
		return err
	}
	for _, p := range []struct {
		field string
		d     decimal.Decimal
	}{{"limit", r.Limit}, {"stop", r.Stop}} {
		if p.d.IsZero() {
			continue // orderRules says whether the type needs it
		}
		if err := orderPrice(p.field, p.d); err != nil {
			return err
		}
	}
	if strings.ContainsAny(r.Route, "/?#% \t\r\n") {
		return brokercode.Invalid("route", "%q is not a route name", r.Route)
	}
	return workflow.ValidatePolicy(r.Policy)
}

// Short ensures the locate, checks sizing, places one Sell/Open Day limit
// order under a clientOrderId recorded before it is sent, and follows it to
// a final or working state. The order is never sent twice: an answer lost
// on the way is settled by looking its id up.
func (e *Engine) Short(ctx context.Context, req account.ShortRequest, by ShortAnswers) (*account.ShortResult, error) {
	if err := validShort(req); err != nil {
		return nil, err
	}
	o, ref, err := e.shortOrder(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.ClientOrderID != "" {
		if _, err := e.store.GetOrder(ctx, req.ClientOrderID); err == nil {
			return e.shortSent(ctx, req.ClientOrderID)
		}
	}
	sizeAt, sizing, err := e.sizeShort(ctx, req, ref)
	if sizing == nil {
		return nil, err
	}
	res := &account.ShortResult{}
	if err != nil {
		return res, err
	}
	h, err := e.Locate(ctx, Request{ID: req.LocateID, Symbol: req.Symbol, Quantity: workflow.RoundUpLot(req.Quantity), Policy: req.Policy, Ask: by.Ask, Asker: by.Asker})
	if err != nil {
		return res, err
	}
	if res.Locate, err = h.Wait(ctx); err != nil {
		return res, err
	}
	if !res.Locate.Located() {
		res.Reason = "the locate ended " + string(res.Locate.State)
		return res, nil
	}
	if sizing, err = ledger.Size(ctx, e.client, e.store, e.cfg.Account, req.Symbol, sizeAt, req.Quantity); err != nil {
		return res, fmt.Errorf("sizing: %w", err)
	}
	if sizing.Shortable < req.Quantity {
		res.Reason = fmt.Sprintf("sizing: %d shortable, bound by %s", sizing.Shortable, sizing.Binding)
		return res, fmt.Errorf("%w: %s; no order was sent", ErrSizing, sizing.Explanation)
	}
	o.ClientOrderID, o.LocateWorkflowID = req.ClientOrderID, res.Locate.ID
	if o.ClientOrderID == "" {
		o.ClientOrderID = workflow.NewOrderID()
	}
	if err := validOrder(o); err != nil {
		return res, err
	}
	// Orders an earlier run left unanswered are settled by their ids
	// before anything new is sent.
	if err := e.OrdersSettled(ctx); err != nil {
		return res, err
	}
	if by.Confirm != nil && !by.Confirm(ctx, *o) {
		res.Reason, res.Declined = "declined at the confirmation", true
		return res, nil
	}
	res.Order, err = e.send(ctx, o)
	return res, err
}

// shortOrder is the short's Sell/Open order but for its clientOrderId and
// its locate: its type and time in force (Limit and Day unless asked),
// checked against the order rules, the fat-finger guard and the route
// before the locate is paid for; with the guard's reference price.
func (e *Engine) shortOrder(ctx context.Context, req account.ShortRequest) (*Order, reference, error) {
	typ, tif := brokerclient.OrderType(req.OrderType), brokerclient.TimeInForce(req.TimeInForce)
	if typ == "" {
		typ = brokerclient.OrderTypeLimit
	}
	if tif == "" {
		tif = brokerclient.TimeInForceDay
	}
	o := &Order{OrderType: string(typ), TimeInForce: string(tif), LimitPrice: req.Limit, StopPrice: req.Stop}
	if err := orderRules(o, e.brokerNow()); err != nil {
		return nil, reference{}, err
	}
	o.Symbol, o.Quantity = req.Symbol, req.Quantity
	ref, err := e.guard(ctx, o, req.Guard, e.openPositions(ctx))
	if err != nil {
		return nil, ref, err
	}
	route, err := e.route(ctx, req.Route, typ, tif)
	if err != nil {
		return nil, ref, err
	}
	o.Account, o.Route = e.cfg.Account, route
	o.Side, o.OpenClose = string(brokerclient.SideSell), string(brokerclient.OpenCloseOpen)
	return o, ref, nil
}

// shortSent is a short sent before under clientOrderID: its order followed
// to a working or final state, and its locate.
func (e *Engine) shortSent(ctx context.Context, clientOrderID string) (*account.ShortResult, error) {
	res := &account.ShortResult{}
	var err error
	if res.Order, err = e.WaitOrder(ctx, clientOrderID, true); err != nil {
		return res, err
	}
	res.Locate, err = e.store.Get(ctx, res.Order.LocateWorkflowID)
	return res, err
}

// sizeShort checks buying power and the account's status before the
// locate (a locate the account could not use would be paid for nothing)
// and returns the price the short is sized at and the sizing (nil when it
// could not be read). A market short is sized at ref, the guard's
// reference price (read here when the guard was forced past). A limit of
// the account's short of the quantity is ErrSizing, with the sizing.
func (e *Engine) sizeShort(ctx context.Context, req account.ShortRequest, ref reference) (decimal.Decimal, *locator.Sizing, error) {
	sizeAt := sizingPrice(req)
	if sizeAt.IsZero() {
		if !ref.known() {
			var err error
			if ref, err = e.reference(ctx, req.Symbol, req.Guard.RefPrice, e.openPositions(ctx)); err != nil {
				return sizeAt, nil, err
			}
		}
		if !ref.known() {
			return sizeAt, nil, brokercode.Invalid("order type", "a market short is sized at %s's reference price, and locator knows none "+
				"(no position held, no fill today, no close on the last trading day): pass --ref-price P, or use a limit order (--type limit --limit-price P)", req.Symbol)
		}
		sizeAt = ref.price
	}
	sizing, err := ledger.Size(ctx, e.client, e.store, e.cfg.Account, req.Symbol, sizeAt, req.Quantity)
	if err != nil {
		return sizeAt, nil, fmt.Errorf("sizing: %w", err)
	}
	for _, l := range sizing.Limits {
		if l.Name != locator.LimitInventory && !l.Unlimited && l.Shares < req.Quantity {
			return sizeAt, sizing, fmt.Errorf("%w: %s allows %d shares of %s at %s, not %d (%s); no order was sent",
				ErrSizing, l.Name, l.Shares, req.Symbol, sizeAt, req.Quantity, l.Detail)
		}
	}
	return sizeAt, sizing, nil
}

// sizingPrice is the price the short is sized at: its limit, else its
// stop; zero for a market short (Short sizes it at the last price).
func sizingPrice(r account.ShortRequest) decimal.Decimal {
	if r.Limit.IsPositive() {
		return r.Limit
	}
	return r.Stop
}
