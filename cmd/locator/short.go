package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// shortCommand is the locate-then-short helper: flags, the prompts and the
// report around engine.Short, which ensures the locate, checks sizing, and
// places one Sell/Open limit order under a write-ahead clientOrderId.
type shortCommand struct {
	conn     connFlags
	limit    string
	route    string
	maxPrice string
	yes      bool
}

func (c *shortCommand) synopsis() string {
	return "ensure the locate, then sell short QTY at --limit-price (asks unless --yes)"
}

func (c *shortCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.limit, "limit-price", "", "limit price of the sell (required; up to 4 decimals, whole cents from $1.00)")
	// --limit was this flag's first name; elsewhere (status, jobs) it
	// counts rows, so the price got its own name and the old one stays.
	fs.StringVar(&c.limit, "limit", "", "limit price of the sell")
	fs.MarkDeprecated("limit", "use --limit-price")
	fs.StringVar(&c.route, "route", "", "order route (see 'locator routes'); live accounts default to SMART")
	fs.StringVar(&c.maxPrice, "max-price", "", "highest locate price per share to accept")
	fs.BoolVarP(&c.yes, "yes", "y", false, "take a locate offer within policy and place the order without asking")
}

// parse checks every input before anything is sent.
func (c *shortCommand) parse(args []string) (engine.ShortRequest, error) {
	var r engine.ShortRequest
	if len(args) != 2 {
		return r, usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	r.Symbol = args[0]
	qty, err := parseCount("quantity", args[1])
	if err != nil {
		return r, err
	}
	r.Quantity = qty
	if c.limit == "" {
		return r, usagef("--limit-price is required: the short is a limit order")
	}
	if r.Limit, err = workflow.ParsePrice("--limit-price", c.limit); err != nil {
		return r, err
	}
	r.Route = c.route
	if r.Policy, err = parsePolicy(c.maxPrice, "", false, c.yes); err != nil {
		return r, err
	}
	return r, r.Validate()
}

// parseCount reads a whole number of shares, refusing what does not parse.
func parseCount(field, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &workflow.InputError{Field: field, Message: fmt.Sprintf("%q: want a whole number of shares from 1 to %d", s, workflow.MaxOrderQuantity)}
	}
	return n, nil
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
	State         string   `json:"state"` // the order workflow's state, or not_sent
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
	req, err := c.parse(args)
	if err != nil {
		return err
	}
	m := c.conn.m
	interactive := m.interactive(c.conn.format)
	if !c.yes && !interactive {
		return usagef("the order needs a confirmation and nobody can give one here (no terminal, or not -o table): pass --yes; nothing was sent")
	}
	var ask func(context.Context, engine.Offer) bool
	if !req.Policy.AutoAccept {
		ask = prompt(m)
	}
	if !c.yes {
		req.Confirm = func(ctx context.Context, o engine.Order) bool {
			where := o.Route
			if where == "" {
				where = "assigned by the broker"
			}
			return m.ask(ctx, fmt.Sprintf("Sell short %d %s at %s (route %s)? [y/N] ", o.Quantity, o.Symbol, priceShown(o.LimitPrice), where))
		}
	}
	// The account's owner (this process, or another) places it; owning, the
	// checks of the account (environment, Active) come first (exit 2).
	acct, err := c.conn.attach(ctx, "short", ask, progress(printer{w: m.Stderr}, m.display()))
	if err != nil {
		return err
	}
	defer acct.close()
	res, err := c.place(ctx, acct, req, ask)
	out := shortOutcome{Account: acct.settings.account, Symbol: req.Symbol, Side: string(brokerclient.SideSell),
		OpenClose: string(brokerclient.OpenCloseOpen), Quantity: req.Quantity, LimitPrice: priceShown(req.Limit),
		Route: req.Route, State: notSent}
	if res != nil {
		out.Reason = res.Reason
		if res.Locate != nil {
			lo := outcomeOf(res.Locate)
			out.Locate = &lo
			fmt.Fprintln(m.Stderr, locateLine(res.Locate))
		}
		if res.Order != nil {
			out.fill(res.Order)
		}
	}
	if err != nil {
		if res != nil && (res.Locate != nil || res.Order != nil) {
			c.report(out)
		}
		return err
	}
	c.report(out)
	return shortExit(res)
}

// place runs the short in this process when it owns the account, or hands
// it to the owner, which can then neither ask about the offer nor confirm
// the order here: the policy must decide both (--yes).
func (c *shortCommand) place(ctx context.Context, acct *account, req engine.ShortRequest, ask func(context.Context, engine.Offer) bool) (*engine.ShortResult, error) {
	if eng, owned := acct.Engine(); owned {
		req.Ask, req.Asker = ask, acct.asker
		return eng.Short(ctx, req)
	}
	if req.Confirm != nil || !req.Policy.Decides() {
		return nil, usagef("%s, which places the short: pass --yes to let the policy decide the offer and the order; nothing was sent", acct.followed())
	}
	r, err := acct.remote.Short(ctx, service.ShortRequest{Symbol: req.Symbol, Quantity: req.Quantity, Limit: req.Limit,
		Route: req.Route, Policy: req.Policy, Asker: acct.asker})
	if err != nil {
		return nil, err
	}
	return &engine.ShortResult{Locate: r.Locate, Order: r.Order, Reason: r.Reason}, nil
}

// shortExit maps how the short ended to the exit-code contract.
func shortExit(res *engine.ShortResult) error {
	if res.Order == nil {
		if res.Locate != nil && !res.Locate.Located() {
			return exitFor(res.Locate)
		}
		return &exitError{code: exitDeclined, msg: "declined: no order was sent (" + res.Reason + ")"}
	}
	o := res.Order
	switch o.State {
	case states.Filled, states.OrderWorking:
		return nil
	case states.Rejected, states.Canceled, states.Expired, states.Failed:
		msg := fmt.Sprintf("order %s %s", o.LookupID(), o.State)
		if o.Code != "" {
			msg += " " + o.Code
		}
		if o.Text != "" {
			msg += ": " + o.Text
		} else if o.Reason != "" {
			msg += ": " + o.Reason
		}
		return &exitError{code: exitBroker, msg: msg}
	case states.OrderUnregistered:
		return &exitError{code: exitFailure, msg: fmt.Sprintf("order %s never reached the broker; nothing is working under it. Run the command again to place a new one", o.ClientOrderID)}
	}
	status := o.OrderStatus
	if status == "" {
		status = string(o.State)
	}
	return &exitError{code: exitFailure, msg: fmt.Sprintf("order %s is still %s: see 'locator orders'", o.LookupID(), status)}
}

func (r *shortOutcome) fill(o *workflow.Order) {
	r.ClientOrderID, r.State, r.OrderStatus, r.Executed = o.LookupID(), string(o.State), o.OrderStatus, o.Executed
	r.Route = o.Route
	if o.Executed > 0 {
		r.PriceAvg = priceShown(o.PriceAvg)
	}
	r.Code, r.Text, r.Reason = o.Code, o.Text, o.Reason
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
func locateLine(w *workflow.Workflow) string {
	s := fmt.Sprintf("locate %s %s: %s", w.Symbol, w.ID, w.State)
	switch {
	case w.State == states.Filled:
		s += fmt.Sprintf(" — %d shares at %s (%s)", w.Quantity, price4(w.Price), w.LocateType)
	case w.Reason != "":
		s += " — " + w.Reason
	}
	return s
}
