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
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The order side of a desk's day: shorts through locator (the account
// API's Short, which ensures the locate first) and straight at the broker
// (brokerclient, bypassing locator), covers (Buy to close) through
// locator, and moves of the market price.
const (
	OpShort       Kind = "short"        // Short through locator, at the market price
	OpShortDirect Kind = "short-direct" // a Sell/Open sent straight at the broker
	OpCover       Kind = "cover"        // a Buy/Close through locator's PlaceOrder
	OpTick        Kind = "tick"         // the market price of a symbol moves
)

// Order is the order of an order operation: its type and time in force
// as the spec allows them for a stock (spec "Orders"), and where its
// limit (or stop) sits from the market price: Away > 0 puts a sell's
// limit that many cents above it (not marketable: the order works, and is
// cancelled at once), 0 at it. For OpTick, Away is the move in cents.
type Order struct {
	Type brokerclient.OrderType
	TIF  brokerclient.TimeInForce
	Away int64
}

func (o *Order) String() string {
	if o.Type == "" {
		return fmt.Sprintf("move %+d¢", o.Away)
	}
	s := fmt.Sprintf("%s/%s", o.Type, o.TIF)
	if o.Away != 0 {
		s += fmt.Sprintf(" +%d¢", o.Away)
	}
	return s
}

// orderShapes are the shapes the order operations draw from: the default
// (Limit, Day), extended hours, the time in force SMART refuses (IOC: an
// input error, nothing sent), good till cancel, Market (sized at the last
// fill locator saw: refused before any), Stop at the market price
// (triggered at once), and a limit away from the market (works, then
// cancelled).
var orderShapes = []Order{
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceDay, 0},
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceDay, 0},
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceDayPlus, 0},
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceIOC, 0},
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceGoodTillCancel, 0},
	{brokerclient.OrderTypeMarket, brokerclient.TimeInForceDay, 0},
	{brokerclient.OrderTypeStop, brokerclient.TimeInForceDay, 0},
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceDay, 50},
	{brokerclient.OrderTypeStop, brokerclient.TimeInForceDay, 50},
	{brokerclient.OrderTypeStopLimit, brokerclient.TimeInForceDay, 50},
}

// directShapes are the shapes of a short sale sent straight at the broker:
// at the market, and working (a limit above it, a stop and a stop-limit
// below it) until a tick reaches them.
var directShapes = []Order{
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceDay, 0},
	{brokerclient.OrderTypeLimit, brokerclient.TimeInForceDay, 50},
	{brokerclient.OrderTypeStop, brokerclient.TimeInForceDay, 50},
	{brokerclient.OrderTypeStopLimit, brokerclient.TimeInForceDay, 50},
}

// orderOp draws an operation of the order and money side, or reports
// false (about five draws in six) to leave the draw to op.
func orderOp(rng *rand.Rand) (Op, bool) {
	r := rng.IntN(200)
	if r >= 34 {
		return Op{}, false
	}
	qty := int64(100 * (1 + rng.IntN(5)))
	sym := symbols[rng.IntN(len(symbols))]
	shape := orderShapes[rng.IntN(len(orderShapes))]
	switch {
	case r < 10:
		return Op{Kind: OpShort, Symbols: []string{sym}, Quantity: qty, SingleUse: rng.IntN(2) == 0,
			MaxPrice: decimal.New(int64(3+rng.IntN(8)), -2), Order: &shape}, true
	case r < 15:
		shape = directShapes[rng.IntN(len(directShapes))]
		return Op{Kind: OpShortDirect, Symbols: []string{sym}, Quantity: qty, Order: &shape}, true
	case r < 21:
		return Op{Kind: OpCover, Symbols: []string{sym}, Quantity: qty}, true
	case r < 24:
		return Op{Kind: OpTick, Symbols: []string{sym}, Order: &Order{Away: int64(rng.IntN(61) - 30)}}, true
	case r < 28:
		return Op{Kind: OpFees}, true
	case r < 30:
		return Op{Kind: OpReport}, true
	case r < 32:
		return Op{Kind: OpAudit}, true
	default:
		return afterCloseOp(rng, sym, qty, decimal.New(int64(3+rng.IntN(8)), -2)), true
	}
}

// orderOps run the operations of this file and money.go (see runner.do).
var orderOps = map[Kind]func(*runner, context.Context, Op) (string, error){
	OpShort:       (*runner).short,
	OpShortDirect: (*runner).shortDirect,
	OpCover:       (*runner).cover,
	OpTick:        (*runner).tick,
	OpFees:        (*runner).fees,
	OpReport:      (*runner).report,
	OpAudit:       (*runner).audit,
	OpAfterClose:  (*runner).afterClose,
}

// desk is what the checker keeps of the order side as it drives it: the
// market price it set, and of every Sell/Open that reached the broker
// whether the account held located shares of its symbol when it was sent
// (the model of `audit`), and which orders went through locator.
type desk struct {
	prices  map[string]decimal.Decimal
	covered map[string]bool // clientOrderId of a short sale → covered when sent
	mine    map[string]bool // clientOrderIds sent through locator
}

func (r *runner) desk() *desk {
	if r.orders == nil {
		r.orders = &desk{prices: map[string]decimal.Decimal{}, covered: map[string]bool{}, mine: map[string]bool{}}
		for s, p := range r.day.Scenario.Prices {
			r.orders.prices[s] = p.Decimal
		}
	}
	return r.orders
}

// limits are the limit and stop prices of an order of shape on symbol,
// a sell when sell is true.
func (r *runner) limits(symbol string, shape Order, sell bool) (limit, stop decimal.Decimal) {
	p := r.desk().prices[symbol]
	away := decimal.New(shape.Away, -2)
	if !sell {
		away = away.Neg()
	}
	switch shape.Type {
	case brokerclient.OrderTypeLimit:
		limit = p.Add(away)
	case brokerclient.OrderTypeStop:
		stop = p.Sub(away) // a sell's below the market: it works until the price falls to it
	case brokerclient.OrderTypeStopLimit:
		stop = p.Sub(away)
		limit = stop
	}
	return limit, stop
}

// coveredNow is the spec's rule for a short sale sent now ("Short
// locates", "Locate inventory row": size shorts from available): it is
// covered when the account holds at least qty located shares of symbol
// available, of any type (a SingleUse share is not reusable once a short
// used it, so it is no longer available then; its lot's unused shares
// are).
func (r *runner) coveredNow(symbol string, qty int64) bool {
	var free int64
	for _, inv := range r.sim.Inventory() {
		if inv.Account == Account && inv.Symbol == symbol {
			free += inv.Available
		}
	}
	return free >= qty
}

// short sends a short through locator and checks it:
//   - short-covered: an order locator sends was covered when sent (it
//     ensures the locate first), and the broker never rejects it for want
//     of one;
//   - order-agrees: see orderAgrees;
//   - nothing-sent-on-refusal: a short locator refuses or declines
//     leaves no order at the broker;
//   - guard-held: see guardHeld.
func (r *runner) short(ctx context.Context, op Op) (string, error) {
	limit, stop := r.limits(op.Symbols[0], *op.Order, true)
	req := account.ShortRequest{Symbol: op.Symbols[0], Quantity: op.Quantity, Limit: limit, Stop: stop,
		OrderType: string(op.Order.Type), TimeInForce: string(op.Order.TIF),
		Policy:   workflow.Policy{AutoAccept: true, MaxPrice: op.MaxPrice, AllowSingleUse: op.SingleUse},
		LocateID: workflow.NewID(), ClientOrderID: uuid.NewString(),
		// The trader gives the price they see: the day's first short of a
		// symbol has no reference at the broker.
		Guard: workflow.Guard{RefPrice: r.desk().prices[op.Symbols[0]]}}
	a := r.as("short", nil)
	res, err := a.Short(ctx, req)
	// The order leaves after its locate, inside Short: whether the account
	// held its cover then is read from the broker as Short returns (before
	// the order's asynchronous fill reserves the shares), or, once it
	// filled, from the broker's reservation of them for the fill.
	coveredAtReturn := r.coveredNow(req.Symbol, req.Quantity)
	said, exit := ended(account.ShortOutcome(orEmpty(res)), err)
	words := fmt.Sprintf("%s (exit %d)", said, exit)
	if res != nil && res.Locate != nil {
		lo := account.OutcomeOf(res.Locate)
		words = fmt.Sprintf("locate %s (exit %d); ", lo.Words, console.Exit(lo.End)) + words
		if v := r.checkWorkflow(res.Locate, lo); v != nil {
			return words, v
		}
	}
	if res == nil || res.Order == nil {
		return words, r.nothingSent(req.ClientOrderID, words)
	}
	r.desk().mine[req.ClientOrderID] = true
	if v := r.guardHeld(req.Symbol, req.ClientOrderID, req.Limit, req.Stop); v != nil {
		return words, v
	}
	if v := r.orderAgrees(ctx, a, req.ClientOrderID, res.Order, exit); v != nil {
		return words, v
	}
	rec := r.simOrder(req.ClientOrderID)
	r.desk().covered[req.ClientOrderID] = rec.Executed > 0 || coveredAtReturn
	if rec.Status == "Rejected" && rec.Text != nil && strings.Contains(*rec.Text, "no locate") {
		return words, &Violation{Invariant: "short-covered", Detail: fmt.Sprintf("order %s (%s %d) sent by locator after locate %s (%s) was rejected by the broker: %s",
			req.ClientOrderID, req.Symbol, req.Quantity, res.Locate.ID, res.Locate.State, *rec.Text)}
	}
	if op.Order.Away != 0 {
		return r.cancelWorking(ctx, a, req.ClientOrderID, words)
	}
	return words, nil
}

// guardHeld is the fat-finger guard's invariant, guard-held: an order
// locator sent without force has its limit and stop price within the
// guard's default distance of the symbol's market price (the simulator's
// last price, which the broker shows as the position's price).
func (r *runner) guardHeld(symbol, id string, prices ...decimal.Decimal) error {
	market := r.desk().prices[symbol]
	for _, p := range prices {
		if p.IsZero() || market.IsZero() {
			continue
		}
		if off := p.Sub(market).Abs().Div(market); off.GreaterThan(workflow.DefaultMaxDistance) {
			return &Violation{Invariant: "guard-held", Detail: fmt.Sprintf("order %s (%s) sent at %s, %s%% from the market price %s, past the fat-finger guard without force",
				id, symbol, p, off.Shift(2).StringFixed(1), market)}
		}
	}
	return nil
}

// shortDirect sends a Sell/Open straight at the broker, as a desk's other
// tool would, and records whether the account held its cover then.
func (r *runner) shortDirect(ctx context.Context, op Op) (string, error) {
	limit, stop := r.limits(op.Symbols[0], *op.Order, true)
	id := uuid.NewString()
	r.desk().covered[id] = r.coveredNow(op.Symbols[0], op.Quantity)
	req := brokerclient.OrderRequest{ClientOrderID: id, Symbol: op.Symbols[0],
		Side: brokerclient.SideSell, OpenClose: brokerclient.OpenCloseOpen, OrderType: op.Order.Type, SecurityType: brokerclient.SecurityTypeStock,
		TimeInForce: op.Order.TIF, OrderQuantity: op.Quantity, Route: "SMART"}
	if !limit.IsZero() {
		req.LimitPrice = &limit
	}
	if !stop.IsZero() {
		req.StopPrice = &stop
	}
	got, _, err := r.client.Orders.Place(ctx, Account, req)
	if err != nil {
		return "refused: " + err.Error(), nil
	}
	if err := r.sleep(ctx, time.Second); err != nil {
		return "", err
	}
	words := fmt.Sprintf("order %s %s (covered when sent: %t)", got.ClientOrderID, got.OrderStatus, r.desk().covered[id])
	if rec := r.simOrder(id); rec != nil {
		words = fmt.Sprintf("order %s %s, %d executed (covered when sent: %t)", id, rec.Status, rec.Executed, r.desk().covered[id])
	}
	return words, nil
}

// cover buys to close some of the short position of a symbol through
// locator (the quantity asked for, or the position when it is smaller and
// not flat: a cover beyond the position is rejected by the broker), at
// the market price.
func (r *runner) cover(ctx context.Context, op Op) (string, error) {
	sym := op.Symbols[0]
	qty := op.Quantity
	if held := r.shortHeld(sym); held > 0 {
		qty = min(qty, held)
	}
	limit := r.desk().prices[sym]
	id := uuid.NewString()
	a := r.as("cover", nil)
	got, err := a.PlaceOrder(ctx, account.PlaceOrderRequest{Order: workflow.Order{ClientOrderID: id, Symbol: sym,
		Side: string(brokerclient.SideBuy), OpenClose: string(brokerclient.OpenCloseClose), OrderType: string(brokerclient.OrderTypeLimit),
		TimeInForce: string(brokerclient.TimeInForceDay), Quantity: qty, LimitPrice: limit}})
	said, exit := ended(account.ShortOutcome(&account.ShortResult{Order: got}), err)
	words := fmt.Sprintf("cover %d: %s (exit %d)", qty, said, exit)
	if got == nil {
		return words, r.nothingSent(id, words)
	}
	r.desk().mine[id] = true
	if v := r.guardHeld(sym, id, limit); v != nil {
		return words, v
	}
	return words, r.orderAgrees(ctx, a, id, got, exit)
}

// ended is how a command that got o or err would end: its words and its
// exit code (err's when there is one).
func ended(o account.Outcome, err error) (string, int) {
	if err != nil {
		return err.Error(), console.ExitOf(err)
	}
	return o.Words, console.Exit(o.End)
}

// tick moves the market price of a symbol; working orders it crosses fill.
func (r *runner) tick(ctx context.Context, op Op) (string, error) {
	sym := op.Symbols[0]
	p := r.desk().prices[sym].Add(decimal.New(op.Order.Away, -2))
	if !p.IsPositive() {
		p = decimal.New(1, -2)
	}
	r.desk().prices[sym] = p
	r.sim.SetPrice(sym, p)
	return sym + " at " + p.String(), r.sleep(ctx, time.Second)
}

// shortHeld is the account's open short shares of symbol at the broker:
// its short sales' executed shares less its covers'.
func (r *runner) shortHeld(symbol string) int64 {
	var n int64
	for _, o := range r.sim.Orders() {
		if o.Account != Account || o.Symbol != symbol {
			continue
		}
		switch {
		case o.Side == "Sell" && o.OpenClose == "Open":
			n += o.Executed
		case o.Side == "Buy" && o.OpenClose == "Close":
			n -= o.Executed
		}
	}
	return n
}

// brokerOrderState is the state locator gives an order the broker holds
// as rec.
func brokerOrderState(rec *brokersim.OrderRecord) states.State {
	return map[string]states.State{"Filled": states.Filled, "Rejected": states.Rejected, "Canceled": states.Canceled, "Expired": states.Expired,
		"Accepted": states.OrderWorking, "PartiallyFilled": states.OrderWorking, "New": states.OrderWorking}[rec.Status]
}

// orderIs reports whether locator's record o is the broker's rec: state,
// shares executed and their average price.
func orderIs(o *workflow.Order, rec *brokersim.OrderRecord) bool {
	return o.State == brokerOrderState(rec) && o.Executed == rec.Executed && (rec.Executed == 0 || o.PriceAvg.Equal(rec.PriceAvg.Decimal))
}

// simOrder is the broker's order of id now, or nil.
func (r *runner) simOrder(id string) *brokersim.OrderRecord {
	for _, o := range r.sim.Orders() {
		if o.Account == Account && o.ClientOrderID == id {
			return &o
		}
	}
	return nil
}

// nothingSent checks nothing-sent-on-refusal: no order of id reached the
// broker.
func (r *runner) nothingSent(id, words string) error {
	if rec := r.simOrder(id); rec != nil {
		return &Violation{Invariant: "nothing-sent-on-refusal", Detail: fmt.Sprintf("locator said %q, but the broker holds order %s (%s, %d executed)", words, id, rec.Status, rec.Executed)}
	}
	return nil
}

// orderAgrees lets an order locator sent settle (the broker's asynchronous
// outcome, a fill on the price), reads locator's record of it again
// through the account API (PlaceOrder of the same clientOrderId follows
// it, never sends it twice) and checks order-agrees: the state, executed
// shares and average price are the broker's, and the exit code the
// outcome gives (0 filled or working, 3 rejected, cancelled or expired)
// agrees with the broker's status.
func (r *runner) orderAgrees(ctx context.Context, a account.Account, id string, first *workflow.Order, exit int) error {
	settle := time.Second
	if r.day.PushLoss > 0 {
		// A lost push is made up by a read after a quiet spell of the
		// stream (engine/orders.go follow: 2 s, then the read).
		settle = 3 * time.Second
	}
	if err := r.sleep(ctx, settle); err != nil {
		return err
	}
	fctx, cancel := context.WithTimeout(ctx, followWait)
	defer cancel()
	// The broker may move the order while locator reads it (the virtual
	// clock runs during the call): locator's answer must be the broker's
	// order as it was before the call or as it is after it.
	before := r.simOrder(id)
	now, err := a.PlaceOrder(fctx, account.PlaceOrderRequest{Order: workflow.Order{ClientOrderID: id}})
	rec := r.simOrder(id)
	if err != nil && fctx.Err() != nil && ctx.Err() == nil {
		status := "none"
		if rec != nil {
			status = rec.Status
		}
		return &Violation{Invariant: "follower-ends", Detail: fmt.Sprintf("order %s (first answered %s): following it again still waits %s; the broker's is %s", id, first.State, followWait, status)}
	}
	if err != nil {
		return fmt.Errorf("following order %s: %w", id, err)
	}
	if rec == nil {
		return &Violation{Invariant: "order-agrees", Detail: fmt.Sprintf("locator says order %s is %s; the broker has no such order", id, now.State)}
	}
	want := brokerOrderState(rec)
	if !orderIs(now, rec) && (before == nil || !orderIs(now, before)) {
		return &Violation{Invariant: "order-agrees", Detail: fmt.Sprintf("locator says order %s is %s, %d executed at %s; the broker's is %s, %d executed at %s",
			id, now.State, now.Executed, now.PriceAvg, rec.Status, rec.Executed, rec.PriceAvg)}
	}
	// The exit code of the answer first given agrees with the broker's
	// status when that answer was already final.
	if first.Terminal() {
		wantExit := console.ExitOK
		if rec.Status != "Filled" {
			wantExit = console.ExitBroker
		}
		if exit != wantExit || first.State != want {
			return &Violation{Invariant: "order-agrees", Detail: fmt.Sprintf("order %s answered %s (exit %d); the broker's is %s", id, first.State, exit, rec.Status)}
		}
	}
	return nil
}

// cancelWorking cancels a working order locator placed and checks that
// the broker's record ends as locator says.
func (r *runner) cancelWorking(ctx context.Context, a account.Account, id, words string) (string, error) {
	got, err := a.CancelOrder(ctx, account.CancelOrderRequest{ClientOrderID: id})
	if err != nil {
		return words + "; cancel: " + err.Error(), nil
	}
	words += "; cancelled: " + string(got.State)
	o := account.ShortOutcome(&account.ShortResult{Order: got})
	return words, r.orderAgrees(ctx, a, id, got, console.Exit(o.End))
}

func orEmpty(res *account.ShortResult) *account.ShortResult {
	if res == nil {
		return &account.ShortResult{}
	}
	return res
}
