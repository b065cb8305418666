package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/workflow"
)

// shortCommand is the locate-then-short helper: flags, the prompts and the
// report around the account's Short, which ensures the locate, checks sizing, and
// places one Sell/Open limit order under a write-ahead clientOrderId.
type shortCommand struct {
	conn     connFlags
	limit    string
	route    string
	maxPrice string
	yes      bool
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

// parse reads the command line into the request (the account API checks
// it before anything is sent).
func (c *shortCommand) parse(args []string) (account.ShortRequest, error) {
	var r account.ShortRequest
	if len(args) != 2 {
		return r, usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	var err error
	if r.Symbol, err = brokercode.Symbol(args[0]); err != nil {
		return r, err
	}
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
	r.Policy, err = parsePolicy(c.maxPrice, "", false, c.yes)
	return r, err
}

// parseCount reads a whole number of shares, refusing what does not parse.
func parseCount(field, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, brokercode.Invalid(field, "%q: want a whole number of shares from 1 to %d", s, workflow.MaxOrderQuantity)
	}
	return n, nil
}

func (c *shortCommand) run(ctx context.Context, args []string) error {
	req, err := c.parse(args)
	if err != nil {
		return err
	}
	m := c.conn.m
	// A person at the terminal confirms the order and answers an offer
	// the policy leaves open; without one, --yes must let the policy
	// decide both.
	var ask func(context.Context, account.Question) bool
	if m.interactive(c.conn.format) {
		ask = m.asker(ctx)
	}
	req.Ask, req.Confirm = ask != nil && !req.Policy.AutoAccept, !c.yes
	if req.Confirm && ask == nil {
		return usagef("the order needs a confirmation and nobody can give one here (no terminal, or not -o table): pass --yes; nothing was sent")
	}
	m.warnClosed()
	sess, err := c.conn.open(ctx, "short", ask, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	res, err := account.ShortShowing(ctx, sess, req, console.Progress(console.Printer{W: m.Stderr}, m.display()))
	if res != nil && res.Locate != nil {
		fmt.Fprintf(m.Stderr, "locate %s %s: %s\n", res.Locate.Symbol, res.Locate.ID, account.OutcomeOf(res.Locate).Words)
	}
	if err != nil {
		if res != nil && (res.Locate != nil || res.Order != nil) {
			console.Short(c.conn.out(), sess.settings.Account, req, res)
		}
		return err
	}
	console.Short(c.conn.out(), sess.settings.Account, req, res)
	return exitOf(account.ShortOutcome(res))
}
