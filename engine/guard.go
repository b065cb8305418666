package engine

// The fat-finger guard every order passes before anything is sent, and
// the reference price it measures an order against.

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/workflow"
)

// guard is the fat-finger guard (workflow.Guard): unless g.Force, an order
// whose limit or stop price lies further than g's distance from the
// symbol's reference price, or whose notional is over g.MaxNotional, is
// refused with the numbers, the reference and where it came from, before
// anything is sent. With no reference known, a priced order (limit or
// stop) or one under a notional bound is refused too, saying how to go
// on: a guard that checks nothing on the day's first order guards
// nothing. It returns the reference it used (none when forced).
func (e *Engine) guard(ctx context.Context, o *Order, g workflow.Guard, positions func() ([]brokerclient.Position, error)) (reference, error) {
	if err := g.Validate(); err != nil {
		return reference{}, err
	}
	if g.Force {
		return reference{}, nil
	}
	ref, err := e.reference(ctx, o.Symbol, g.RefPrice, positions)
	if err != nil {
		return ref, err
	}
	priced := !o.LimitPrice.IsZero() || !o.StopPrice.IsZero()
	if !ref.known() {
		if priced || g.MaxNotional.IsPositive() {
			return ref, brokercode.Invalid("reference price", "the fat-finger guard knows no price of %s to check the order against "+
				"(no position held, no fill today, no close on the last trading day): pass --ref-price P with its market price, or --force to send it unchecked", o.Symbol)
		}
		return ref, nil
	}
	for _, p := range []struct {
		name string
		d    decimal.Decimal
	}{{"limit price", o.LimitPrice}, {"stop price", o.StopPrice}} {
		if p.d.IsZero() {
			continue
		}
		off := p.d.Sub(ref.price).Abs().Div(ref.price)
		if off.GreaterThan(g.Distance()) {
			return ref, brokercode.Invalid(p.name, "%s is %s%% from %s, more than the %s%% the fat-finger guard allows: check it; only a forced order goes past the guard (a person's locator short or cover --force)",
				workflow.PriceShown(p.d), off.Shift(2).StringFixed(1), ref, g.Distance().Shift(2).String())
		}
	}
	price := o.LimitPrice
	if price.IsZero() {
		price = o.StopPrice
	}
	if price.IsZero() {
		price = ref.price // a market order: at the reference price
	}
	if notional := price.Mul(decimal.NewFromInt(o.Quantity)); g.MaxNotional.IsPositive() && notional.GreaterThan(g.MaxNotional) {
		return ref, brokercode.Invalid("notional", "%d %s at %s is %s, over the %s the fat-finger guard allows (%s): check it; only a forced order goes past the guard (a person's locator short or cover --force)",
			o.Quantity, o.Symbol, workflow.PriceShown(price), notional.StringFixed(2), g.MaxNotional.StringFixed(2), ref)
	}
	return ref, nil
}

// A reference is the price of a symbol the fat-finger guard measures an
// order against, and a market short is sized at, with where it came from:
// every refusal shows both.
type reference struct {
	symbol string
	price  decimal.Decimal // zero: none known
	source string
}

func (r reference) known() bool { return r.price.IsPositive() }

func (r reference) String() string {
	return fmt.Sprintf("%s's reference price %s (%s)", r.symbol, workflow.PriceShown(r.price), r.source)
}

// reference is the best price of symbol locator can know now (the spec
// has no quote endpoint), read from the broker in this order: the
// account's open position's price (priceClose, repriced as the P&L
// stream ticks); else the symbol's latest fill today in the account's
// order book, whoever placed it; else its closing price on the last
// trading day in the positions history; else given, a price the person
// gives (--ref-price), which never overrides one the broker shows. Its
// price is zero when none is known. A read that fails refuses the order:
// the guard does not pass what it could not check.
func (e *Engine) reference(ctx context.Context, symbol string, given decimal.Decimal, openPositions func() ([]brokerclient.Position, error)) (reference, error) {
	ref := reference{symbol: symbol}
	fail := func(what string, err error) (reference, error) {
		return ref, fmt.Errorf("the fat-finger guard reading %s's %s: %w", symbol, what, err)
	}
	positions, err := openPositions()
	if err != nil {
		return fail("open position", err)
	}
	for _, p := range positions {
		if p.Symbol == symbol && p.PriceClose.IsPositive() {
			ref.price, ref.source = p.PriceClose, "its open position's price now"
			return ref, nil
		}
	}
	book, _, err := e.client.Orders.Book(ctx, e.cfg.Account)
	if err != nil {
		return fail("fills today", err)
	}
	now := e.brokerNow()
	day := market.SessionStart(now)
	var last time.Time
	for _, o := range book {
		if o.Symbol == symbol && o.Executed > 0 && o.PriceAvg.IsPositive() && !o.LastUpdated.Before(day) && !o.LastUpdated.Before(last) {
			last = o.LastUpdated.Time
			ref.price, ref.source = o.PriceAvg, "its last fill today, order "+o.ClientOrderID
		}
	}
	if ref.known() {
		return ref, nil
	}
	closeDay := market.On(day).Date // the last trading day: today's session began at its rollover
	rows, _, err := e.client.Positions.Historical(ctx, e.cfg.Account, closeDay)
	if err != nil {
		return fail("last close", err)
	}
	for _, r := range rows {
		if r.Symbol == symbol && r.ClosingPrice.IsPositive() {
			ref.price, ref.source = r.ClosingPrice, "its close on "+closeDay.Format(time.DateOnly)
			return ref, nil
		}
	}
	if given.IsPositive() {
		ref.price, ref.source = given, "the reference price given"
	}
	return ref, nil
}
