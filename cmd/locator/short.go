package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
)

// shortCommand is the locate-then-short helper: it makes sure the shares are
// located (through the engine, quoting only the shortfall), checks that
// sizing allows the short, asks, then places one Sell/Open limit order under
// a fresh clientOrderId recorded before it is sent, and follows it until it
// is final or working.
type shortCommand struct {
	conn     connFlags
	limit    string
	route    string
	maxPrice string
	yes      bool
}

func (c *shortCommand) synopsis() string {
	return "SYMBOL QTY --limit P: ensure the locate, then sell short QTY at a limit (asks unless --yes)"
}

func (c *shortCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.limit, "limit", "", "limit price of the sell (required; up to 4 decimals, whole cents from $1.00)")
	fs.StringVar(&c.route, "route", "", "order route (see 'locator routes'); live accounts default to SMART")
	fs.StringVar(&c.maxPrice, "max-price", "", "highest locate price per share to accept")
	fs.BoolVarP(&c.yes, "yes", "y", false, "take a locate offer within policy and place the order without asking")
}

// Order bounds the reference documents for placement (public-reference
// notes: orderQuantity 1 to 1,000,000, prices at most 9999.99).
const (
	maxShortQuantity = 1_000_000
	defaultLiveRoute = "SMART"
	// followFor is how long the order is followed for a final or working
	// status; the spec's asynchronous checks take milliseconds.
	followFor = 15 * time.Second
	// followEvery spaces the order lookups (the single-order GET allows 2/s).
	followEvery = 500 * time.Millisecond
	// leftoverAge is how old an unsettled order record must be before this
	// command settles it: younger ones may belong to a run still sending.
	leftoverAge = time.Minute
)

var (
	maxLimitPrice = decimal.RequireFromString("9999.99")
	oneDollar     = decimal.NewFromInt(1)
)

// shortArgs are the checked inputs.
type shortArgs struct {
	symbol   string
	qty      int64
	limit    decimal.Decimal
	maxPrice decimal.Decimal
}

// parse checks every input before anything is sent (DESIGN.md rule 6).
func (c *shortCommand) parse(args []string) (shortArgs, error) {
	var a shortArgs
	if len(args) != 2 {
		return a, usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	a.symbol = args[0]
	if err := brokerclient.ValidateSymbol(a.symbol); err != nil {
		var ie *brokerclient.InputError
		if errors.As(err, &ie) {
			return a, usagef("symbol: %s", ie.Message)
		}
		return a, usagef("%v", err)
	}
	qty, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil || qty <= 0 || qty > maxShortQuantity {
		return a, usagef("quantity %q: want a whole number of shares from 1 to %d", args[1], maxShortQuantity)
	}
	a.qty = qty
	if c.limit == "" {
		return a, usagef("--limit is required: the short is a limit order")
	}
	if a.limit, err = decimal.NewFromString(c.limit); err != nil || !a.limit.IsPositive() {
		return a, usagef("--limit %q: want a positive price", c.limit)
	}
	switch {
	case !a.limit.Equal(a.limit.Truncate(4)):
		return a, usagef("--limit %s: at most 4 decimal places", c.limit)
	case a.limit.GreaterThan(maxLimitPrice):
		return a, usagef("--limit %s: at most %s", c.limit, maxLimitPrice)
	case a.limit.GreaterThanOrEqual(oneDollar) && !a.limit.Equal(a.limit.Truncate(2)):
		// Spec "Cross-cutting conventions": the tick is $0.01 at or above $1.00.
		return a, usagef("--limit %s: prices from $1.00 trade in whole cents", c.limit)
	}
	if strings.ContainsAny(c.route, "/?#% \t\r\n") {
		return a, usagef("--route %q is not a route name", c.route)
	}
	if a.maxPrice, err = parseMoney("max-price", c.maxPrice); err != nil {
		return a, err
	}
	return a, nil
}

// shortOutcome is the JSON the command ends with: the order, and the locate
// that covers it.
type shortOutcome struct {
	ClientOrderID string   `json:"clientOrderId,omitempty"`
	Account       string   `json:"account"`
	Symbol        string   `json:"symbol"`
	Side          string   `json:"side"`
	OpenClose     string   `json:"openClose"`
	Quantity      int64    `json:"quantity"`
	LimitPrice    string   `json:"limitPrice"`
	Route         string   `json:"route"`
	State         string   `json:"state"` // store.OrderState, or not_sent
	OrderStatus   string   `json:"orderStatus,omitempty"`
	Executed      int64    `json:"executed"`
	PriceAvg      string   `json:"priceAvg,omitempty"`
	Code          string   `json:"code,omitempty"`
	Text          string   `json:"text,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	Locate        *outcome `json:"locate,omitempty"`
}

// notSent is the state reported when the command stopped before the order.
const notSent = "not_sent"

func (c *shortCommand) run(ctx context.Context, args []string) error {
	a, err := c.parse(args)
	if err != nil {
		return err
	}
	m := c.conn.m
	interactive := isTerminal(os.Stdin) && !c.conn.json
	// The locate's cost policy is exactly locate's: --yes or a cap decides,
	// otherwise a person at the terminal is asked about the offer.
	policy := store.Policy{MaxPrice: a.maxPrice, AutoAccept: c.yes || c.maxPrice != ""}
	cfg := engine.Config{OnUpdate: progress(printer{w: m.Stderr}, m, time.Now)}
	if !policy.AutoAccept && interactive {
		cfg.Ask = prompt(m)
	}
	// open checks the environment and that the account is Active (exit 2).
	sess, err := c.conn.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer sess.close()
	if !c.yes && !interactive {
		return &exitError{code: exitDeclined, msg: "declined: the order needs a confirmation and nobody can give one here; pass --yes. Nothing was sent"}
	}
	account := sess.settings.account
	if err := c.settleLeftovers(ctx, sess); err != nil {
		return err
	}
	route, err := c.checkRoute(ctx, sess)
	if err != nil {
		return err
	}
	res := shortOutcome{Account: account, Symbol: a.symbol, Side: string(brokerclient.SideSell), OpenClose: string(brokerclient.OpenCloseOpen),
		Quantity: a.qty, LimitPrice: priceShown(a.limit), Route: route, State: notSent}

	// Buying power and account status first: a locate the account could not
	// use would be paid for nothing.
	z, err := c.size(ctx, sess, a)
	if err != nil {
		return err
	}
	if bp := limitOf(z, ledger.LimitBuyingPower); bp.Shares < a.qty {
		return usagef("sizing: buying power allows %d shares of %s at %s, not %d (%s). Nothing was sent",
			bp.Shares, a.symbol, priceShown(a.limit), a.qty, bp.Detail)
	}

	// Ensure the locate: the engine quotes only the shortfall, in lots of
	// 100. Working sells on the symbol will take located shares that still
	// show as available, so they are counted in.
	need := a.qty + z.WorkingSells
	h, err := sess.engine.Locate(ctx, engine.Request{Symbol: a.symbol, Quantity: (need + 99) / 100 * 100, Policy: policy})
	if errors.Is(err, engine.ErrInput) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	w, err := h.Wait(ctx)
	if err != nil {
		return err
	}
	lo := outcomeOf(w)
	res.Locate = &lo
	fmt.Fprintln(m.Stderr, locateLine(w))
	if w.State != states.Filled && w.State != states.Covered && w.State != states.NotNeeded {
		res.Reason = "the locate ended " + string(w.State)
		c.report(res)
		return exitFor(w)
	}

	// Sizing with the locate in place: inventory, buying power, working sells.
	if z, err = c.size(ctx, sess, a); err != nil {
		return err
	}
	if z.Shortable < a.qty {
		res.Reason = fmt.Sprintf("sizing: %d shortable, bound by %s", z.Shortable, z.Binding)
		c.report(res)
		return usagef("sizing says %d of %s cannot be shorted now: %s No order was sent", a.qty, a.symbol, z.Explanation)
	}

	if !c.yes {
		where := route
		if where == "" {
			where = "assigned by the broker"
		}
		if !confirm(ctx, m, fmt.Sprintf("Sell short %d %s at %s (route %s)? [y/N] ", a.qty, a.symbol, priceShown(a.limit), where)) {
			res.Reason = "declined at the confirmation"
			c.report(res)
			return &exitError{code: exitDeclined, msg: "declined: no order was sent"}
		}
	}

	rec, err := c.place(ctx, sess, a, route, w.ID)
	if rec != nil {
		res.fill(rec)
	}
	if err != nil {
		if rec != nil {
			c.report(res)
		}
		return err
	}
	c.report(res)
	switch rec.State {
	case store.OrderFilled, store.OrderWorking:
		return nil
	case store.OrderRejected, store.OrderCanceled, store.OrderExpired:
		msg := fmt.Sprintf("order %s %s", rec.ClientOrderID, rec.State)
		if rec.Code != "" {
			msg += " " + rec.Code
		}
		if rec.Text != "" {
			msg += ": " + rec.Text
		}
		return &exitError{code: exitBroker, msg: msg}
	}
	status := rec.OrderStatus
	if status == "" {
		status = string(rec.State)
	}
	return &exitError{code: exitFailure, msg: fmt.Sprintf("order %s is still %s after %s: see 'locator orders'", rec.ClientOrderID, status, followFor)}
}

// size runs the short sizing at the limit price for the quantity wanted.
func (c *shortCommand) size(ctx context.Context, sess *session, a shortArgs) (*ledger.Sizing, error) {
	z, err := ledger.Size(ctx, sess.client, sess.store, sess.settings.account, a.symbol, a.limit, a.qty)
	if errors.Is(err, brokerclient.ErrInvalidInput) {
		return nil, usagef("%v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("sizing: %w", err)
	}
	return z, nil
}

func limitOf(z *ledger.Sizing, name ledger.LimitName) ledger.Limit {
	for _, l := range z.Limits {
		if l.Name == name {
			return l
		}
	}
	return ledger.Limit{Name: name, Unlimited: true}
}

// checkRoute returns the route to send: the one asked for, else SMART on a
// live account (spec: live requires an explicit route, R54) and none on
// paper (assigned there). A named route must be one of the account's and take
// Day limit orders for stock; otherwise nothing is sent.
func (c *shortCommand) checkRoute(ctx context.Context, sess *session) (string, error) {
	route := c.route
	if route == "" {
		if sess.settings.env == brokerclient.EnvPaper {
			return "", nil
		}
		route = defaultLiveRoute
	}
	routes, _, err := sess.client.Orders.Routes(ctx, sess.settings.account)
	if err != nil {
		return "", fmt.Errorf("routes: %w", err)
	}
	var names []string
	for _, r := range routes {
		if r.RouteName == route {
			if !r.Allows(brokerclient.SecurityTypeStock, brokerclient.OrderTypeLimit, brokerclient.TimeInForceDay) {
				return "", usagef("route %s does not take Day limit orders for stock (it takes %s; %s; %s); nothing was sent",
					route, joinNames(r.SecurityTypes), joinNames(r.OrderTypes), joinNames(r.TimesInForce))
			}
			return route, nil
		}
		names = append(names, r.RouteName)
	}
	return "", usagef("route %q is not available to %s (its routes: %s); nothing was sent", route, sess.settings.account, strings.Join(names, ", "))
}

// place records the intent, sends the order once, and follows it. An answer
// lost on the way is settled by the clientOrderId, never by sending again.
func (c *shortCommand) place(ctx context.Context, sess *session, a shortArgs, route, locateID string) (*store.Order, error) {
	account := sess.settings.account
	limit := a.limit
	req := brokerclient.OrderRequest{
		ClientOrderID: uuid.NewString(), Symbol: a.symbol, Side: brokerclient.SideSell, OpenClose: brokerclient.OpenCloseOpen,
		OrderType: brokerclient.OrderTypeLimit, SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay,
		OrderQuantity: a.qty, LimitPrice: &limit, Route: route,
	}
	if err := req.Validate(); err != nil {
		return nil, usagef("%v; nothing was sent", err)
	}
	rec := &store.Order{
		ClientOrderID: req.ClientOrderID, Account: account, Symbol: a.symbol, Side: string(req.Side), OpenClose: string(req.OpenClose),
		OrderType: string(req.OrderType), TimeInForce: string(req.TimeInForce), Quantity: a.qty, LimitPrice: limit, Route: route,
		LocateWorkflowID: locateID,
	}
	// Write-ahead (DESIGN.md rule 1): the intent is on disk before the POST.
	if err := sess.store.CreateOrder(ctx, rec); err != nil {
		return nil, err
	}
	sentAt := time.Now()
	o, _, err := sess.client.Orders.Place(ctx, account, req)
	switch {
	case err == nil:
	case refused(err):
		reason := "the broker refused the placement: " + err.Error()
		rec, rerr := record(ctx, sess.store, rec, store.OrderFailed, nil, reason, sentAt)
		if rerr != nil {
			return nil, rerr
		}
		return rec, &exitError{code: exitBroker, msg: reason}
	default:
		// The request may have been processed: settle it by its id.
		if rec, err = record(ctx, sess.store, rec, store.OrderUnknown, nil, "the answer to the placement was lost: "+err.Error(), sentAt); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return rec, ctx.Err() // the next run settles it
		}
		fmt.Fprintf(c.conn.m.Stderr, "order %s: the answer was lost; looking it up by its id\n", rec.ClientOrderID)
		return c.follow(ctx, sess, rec, nil)
	}
	if rec, err = record(ctx, sess.store, rec, orderState(o), o, "", sentAt); err != nil {
		return nil, err
	}
	fmt.Fprintf(c.conn.m.Stderr, "order %s: %s\n", rec.ClientOrderID, o.OrderStatus)
	return c.follow(ctx, sess, rec, o)
}

// refused reports whether a placement error is an answer that says the
// order was not taken (an error status other than 5xx, a 429, or input the
// client refused to send). Anything else (a lost answer, a 5xx, a
// cancellation mid-request) leaves the outcome unknown.
func refused(err error) bool {
	if errors.Is(err, brokerclient.ErrOutcomeUnknown) {
		return false
	}
	var er *brokerclient.ErrorResponse
	var pd *brokerclient.ProblemDetails
	var rl *brokerclient.RateLimitError
	return errors.As(err, &er) || errors.As(err, &pd) || errors.As(err, &rl) || errors.Is(err, brokerclient.ErrInvalidInput)
}

// follow looks the order up (by the id the broker answered with) until it is
// final or working, or followFor has passed. ResolveOrder absorbs the 404s
// of an order not yet registered and falls back to the order book for a
// rejected order the single-order endpoint does not show (spec "Order
// rejection codes" rule 2).
func (c *shortCommand) follow(ctx context.Context, sess *session, rec *store.Order, last *brokerclient.Order) (*store.Order, error) {
	clk := clock.Real{}
	deadline := clk.Now().Add(followFor)
	id := rec.ClientOrderID
	if rec.BrokerOrderID != "" {
		id = rec.BrokerOrderID
	}
	for rec.State == store.OrderUnknown || rec.State == store.OrderPending {
		if last != nil { // a fresh answer is already in hand the first time round
			if !clk.Now().Before(deadline) {
				return rec, nil
			}
			if err := clock.Sleep(ctx, clk, followEvery); err != nil {
				return rec, err
			}
		}
		o, _, err := sess.client.Orders.ResolveOrder(ctx, sess.settings.account, id)
		if errors.Is(err, brokerclient.ErrNeverRegistered) && rec.State == store.OrderUnknown {
			// Settled: the placement never reached the broker.
			r, rerr := record(ctx, sess.store, rec, store.OrderUnregistered, nil, "it never reached the broker", time.Time{})
			if rerr != nil {
				return rec, rerr
			}
			return r, &exitError{code: exitFailure, msg: fmt.Sprintf("order %s never reached the broker; nothing is working under it. Run the command again to place a new one", id)}
		}
		if err != nil {
			return rec, fmt.Errorf("following order %s: %w", id, err)
		}
		last = o
		if st := orderState(o); st != rec.State || o.OrderStatus != brokerclient.OrderStatus(rec.OrderStatus) {
			if rec, err = record(ctx, sess.store, rec, st, o, "", time.Time{}); err != nil {
				return nil, err
			}
			fmt.Fprintf(c.conn.m.Stderr, "order %s: %s\n", rec.ClientOrderID, o.OrderStatus)
		}
	}
	return rec, nil
}

// settleLeftovers settles the orders an earlier run recorded and could not
// finish (a crash between the intent and the answer): each is looked up at
// the broker by its id, never sent again.
func (c *shortCommand) settleLeftovers(ctx context.Context, sess *session) error {
	left, err := sess.store.Orders(ctx, store.OrderFilter{Account: sess.settings.account, Unsettled: true})
	if err != nil {
		return err
	}
	for _, rec := range left {
		if time.Since(rec.CreatedAt) < leftoverAge {
			continue
		}
		if rec.State == store.OrderIntent {
			// It may or may not have left: from here it is an unknown outcome.
			if rec, err = record(ctx, sess.store, rec, store.OrderUnknown, nil, "left unanswered by an earlier run", time.Time{}); err != nil {
				return err
			}
		}
		rec, err = c.follow(ctx, sess, rec, nil)
		var ee *exitError
		if errors.As(err, &ee) { // never registered: recorded, nothing to do
			err = nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.conn.m.Stderr, "order %s (%s %d %s, left by an earlier run): %s\n", rec.ClientOrderID, rec.Side, rec.Quantity, rec.Symbol, rec.State)
	}
	return nil
}

// record moves the order's record to state with what the broker said; the
// move is compare-and-set on the state it was read in.
func record(ctx context.Context, st *store.Store, rec *store.Order, to store.OrderState, o *brokerclient.Order, reason string, sentAt time.Time) (*store.Order, error) {
	return st.UpdateOrder(ctx, rec.ClientOrderID, store.OrderChange{From: rec.State, To: to, Apply: func(r *store.Order) {
		if !sentAt.IsZero() {
			r.SentAt = sentAt
		}
		switch {
		case reason == "":
		case r.Reason == "":
			r.Reason = reason
		default:
			r.Reason += "; " + reason // the story so far stays readable
		}
		if o == nil {
			return
		}
		if o.ClientOrderID != "" && o.ClientOrderID != r.ClientOrderID {
			r.BrokerOrderID = o.ClientOrderID // spec rule 1: use the id answered
		}
		r.OrderStatus, r.Executed, r.PriceAvg = string(o.OrderStatus), o.Executed, o.PriceAvg
		if r.Route == "" {
			r.Route = string(o.Route) // paper assigns one when none was sent
		}
		if rej := o.Rejection(); rej != nil {
			r.Code = rej.Code
			if rej.Text != nil {
				r.Text = *rej.Text
			}
		} else if o.Text != nil {
			r.Text = *o.Text
		}
	}})
}

// orderState maps the broker's orderStatus to the record's state.
func orderState(o *brokerclient.Order) store.OrderState {
	switch o.OrderStatus {
	case brokerclient.OrderStatusFilled:
		return store.OrderFilled
	case brokerclient.OrderStatusCanceled:
		return store.OrderCanceled
	case brokerclient.OrderStatusExpired:
		return store.OrderExpired
	case brokerclient.OrderStatusRejected:
		return store.OrderRejected
	case brokerclient.OrderStatusNew, brokerclient.OrderStatusAccepted, brokerclient.OrderStatusPartiallyFilled, brokerclient.OrderStatusDoneForDay:
		return store.OrderWorking
	}
	return store.OrderPending
}

func (r *shortOutcome) fill(rec *store.Order) {
	r.ClientOrderID, r.State, r.OrderStatus, r.Executed = rec.ClientOrderID, string(rec.State), rec.OrderStatus, rec.Executed
	r.Route = rec.Route
	if rec.BrokerOrderID != "" {
		r.ClientOrderID = rec.BrokerOrderID
	}
	if rec.Executed > 0 {
		r.PriceAvg = priceShown(rec.PriceAvg)
	}
	r.Code, r.Text, r.Reason = rec.Code, rec.Text, rec.Reason
}

// report prints the outcome: one table line, or one JSON object.
func (c *shortCommand) report(r shortOutcome) {
	reason := r.Text
	if r.Code != "" && !strings.HasPrefix(reason, r.Code) {
		reason = strings.TrimSpace(r.Code + " " + reason)
	}
	if reason == "" {
		reason = r.Reason
	}
	c.conn.out().table(
		[]string{"CLIENT ORDER ID", "SYMBOL", "SIDE", "QTY", "LIMIT", "ROUTE", "STATE", "STATUS", "EXECUTED", "AVG PRICE", "REASON"},
		[][]string{{r.ClientOrderID, r.Symbol, "Sell short", i64(r.Quantity), r.LimitPrice, r.Route, r.State, r.OrderStatus, i64(r.Executed), r.PriceAvg, reason}},
		[]any{r})
}

// locateLine says how the locate step ended, for the person watching.
func locateLine(w *store.Workflow) string {
	s := fmt.Sprintf("locate %s %s: %s", w.Symbol, w.ID, w.State)
	switch {
	case w.State == states.Filled:
		s += fmt.Sprintf(" — %d shares at %s (%s)", w.Quantity, price4(w.Price), w.LocateType)
	case w.Reason != "":
		s += " — " + w.Reason
	}
	return s
}

// confirm asks a yes/no question at the terminal; anything but y or yes,
// or no answer before ctx ends, is a no.
func confirm(ctx context.Context, m *Main, question string) bool {
	fmt.Fprint(m.Stderr, question)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		answer <- strings.TrimSpace(strings.ToLower(line))
	}()
	select {
	case a := <-answer:
		return a == "y" || a == "yes"
	case <-ctx.Done():
		fmt.Fprintln(m.Stderr)
		return false
	}
}
