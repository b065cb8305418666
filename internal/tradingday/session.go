package tradingday

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/workflow"
)

// OpAfterClose takes the desk to Wait after the next early close of the
// exchange's calendar (market.Day.EarlyClose: 13:00 on the day after
// Thanksgiving, the trading day after Start's), by the broker's clock,
// its owner stopped and started again around the jump (none when the desk
// is there already), and shorts the symbol through locator there, where
// the broker took 13:00 to 16:00 for the regular session before:
//   - a market order: refused before anything is sent, naming that day's
//     early close (market-refused-with-hours, nothing-sent-on-refusal);
//   - a Day limit at the market price: it works and never fills (the
//     day's regular session is over; the simulator expires it at 8 PM);
//   - a Day_Plus limit at the market price: the extended session takes
//     it.
//
// The shorts are checked as OpShort's are, and every execution at the
// broker so far as no-fill-outside-session says.
const OpAfterClose Kind = "after-close"

// afterCloseOp draws an OpAfterClose of qty sym, up to four hours after
// the close.
func afterCloseOp(rng *rand.Rand, sym string, qty int64, maxPrice decimal.Decimal) Op {
	return Op{Kind: OpAfterClose, Symbols: []string{sym}, Quantity: qty, MaxPrice: maxPrice, SingleUse: rng.IntN(2) == 0,
		Wait: time.Duration(1+rng.IntN(240)) * time.Minute}
}

// afterClose runs op (see OpAfterClose).
func (r *runner) afterClose(ctx context.Context, op Op) (string, error) {
	now := r.sim.Now()
	day := nextEarlyClose(now)
	at := day.Close.Add(op.Wait)
	if d := at.Sub(now); d > 0 {
		r.stopOwner()
		r.sim.Advance(d)
		if err := r.startOwner(ctx, false); err != nil {
			return "", err
		}
	}
	words := "at " + market.DateTime(r.sim.Now()) + ": "
	said, err := r.marketRefused(ctx, op, day)
	words += said
	if err != nil {
		return words, err
	}
	for _, tif := range []brokerclient.TimeInForce{brokerclient.TimeInForceDay, brokerclient.TimeInForceDayPlus} {
		short := op
		short.Kind, short.Order = OpShort, &Order{Type: brokerclient.OrderTypeLimit, TIF: tif}
		said, err := r.short(ctx, short)
		words += fmt.Sprintf("; %s: %s", tif, said)
		if err != nil {
			return words, err
		}
	}
	if v := r.fillsInSession(); v != nil {
		return words, v
	}
	return words, nil
}

// nextEarlyClose is the first trading day, from the broker's trading day
// of t on, whose session closes early and whose day has not ended by t.
func nextEarlyClose(t time.Time) market.Day {
	day := market.SessionDay(t)
	for !day.EarlyClose {
		day = market.Next(day.Date)
	}
	return day
}

// marketRefused sends a market short of op's symbol through locator after
// day's early close and checks market-refused-with-hours: locator refuses
// it (exit 2) saying the day's regular session ran to its early close, at
// the calendar's hour; and nothing-sent-on-refusal: the broker received
// nothing, neither the order nor a quote for its locate.
func (r *runner) marketRefused(ctx context.Context, op Op, day market.Day) (string, error) {
	posts := r.posts()
	id := uuid.NewString()
	_, err := r.as("after-close", nil).Short(ctx, account.ShortRequest{Symbol: op.Symbols[0], Quantity: op.Quantity,
		OrderType: string(brokerclient.OrderTypeMarket), Policy: workflow.Policy{AutoAccept: true, MaxPrice: op.MaxPrice},
		LocateID: workflow.NewID(), ClientOrderID: id, Guard: workflow.Guard{RefPrice: r.desk().prices[op.Symbols[0]]}})
	hours := "to " + day.Close.In(market.NewYork).Format("15:04") + " ET (an early close)"
	if err == nil || console.ExitOf(err) != console.ExitUsage || !strings.Contains(err.Error(), hours) {
		return fmt.Sprintf("market: %v", err), &Violation{Invariant: "market-refused-with-hours",
			Detail: fmt.Sprintf("a market short at %s, after the early close of %s: %v; want refused (exit 2) saying the session ran %q",
				market.DateTime(r.sim.Now()), day.Date.Format(time.DateOnly), err, hours)}
	}
	words := fmt.Sprintf("market refused (exit %d)", console.ExitOf(err))
	if n := r.posts(); n != posts {
		return words, &Violation{Invariant: "nothing-sent-on-refusal", Detail: fmt.Sprintf("market short %s refused (%v), but %d writes reached the broker", id, err, n-posts)}
	}
	return words, nil
}

// posts counts the writes the broker received (quotes, orders, ...).
func (r *runner) posts() int {
	n := 0
	for _, q := range r.sim.Requests() {
		if q.Method == "POST" {
			n++
		}
	}
	return n
}

// fillsInSession checks no-fill-outside-session against the broker's
// record of executions (Sim.Fills): by the spec's session hours on the
// exchange's calendar (holidays and early closes included), an order
// executes in the regular session, an extended-hours one (Day_Plus,
// GTC_Plus; spec "Orders" rule 2) in the extended session of a trading
// day, and a day order (Day, Day_Plus, AtTheOpening) within the broker's
// trading day it was placed in.
func (r *runner) fillsInSession() *Violation {
	for _, f := range r.sim.Fills() {
		if f.Account != Account {
			continue
		}
		if why := outsideSession(f); why != "" {
			return &Violation{Invariant: "no-fill-outside-session", Detail: fmt.Sprintf("order %s (%s %s %s %s, placed %s) executed %d at %s: %s",
				f.ClientOrderID, f.Side, f.Symbol, f.OrderType, f.TimeInForce, market.DateTime(f.Placed), f.Quantity, market.DateTime(f.At), why)}
		}
	}
	return nil
}

// outsideSession says why fill f lies outside its order's session, or "".
func outsideSession(f brokersim.FillRecord) string {
	day := market.On(f.At)
	extended := f.TimeInForce == string(brokerclient.TimeInForceDayPlus) || f.TimeInForce == string(brokerclient.TimeInForceGTCPlus)
	switch {
	case !day.Trading():
		return "the exchange is closed that day (" + day.Closed() + ")"
	case extended && !day.InExtended(f.At):
		return "outside the extended session"
	case !extended && !day.InRegular(f.At):
		return fmt.Sprintf("outside the regular session (%s to %s ET)", day.Open.In(market.NewYork).Format("15:04"), day.Close.In(market.NewYork).Format("15:04"))
	}
	switch f.TimeInForce {
	case string(brokerclient.TimeInForceDay), string(brokerclient.TimeInForceDayPlus), string(brokerclient.TimeInForceAtTheOpening):
		if placed := market.SessionDay(f.Placed).Date; !placed.Equal(market.SessionDay(f.At).Date) {
			return "a day order of the trading day of " + placed.Format(time.DateOnly)
		}
	}
	return ""
}
