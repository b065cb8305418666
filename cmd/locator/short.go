package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
)

// shortCommand is the locate-then-short helper: flags, the prompts and the
// report around the account's Short, which ensures the locate, checks sizing, and
// places one Sell/Open order under a write-ahead clientOrderId.
type shortCommand struct {
	conn           connFlags
	order          console.OrderFlags
	maxPrice       string
	maxCost        string
	allowSingleUse bool
	yes            bool
}

func (c *shortCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.order.Register(fs, "sell")
	// --limit was this flag's first name; elsewhere (status, jobs) it
	// counts rows, so the price got its own name and the old one stays.
	fs.StringVar(&c.order.Limit, "limit", "", "limit price of the sell")
	fs.MarkDeprecated("limit", "use --limit-price")
	fs.StringVar(&c.maxPrice, "max-price", "", "highest locate price per share to accept")
	fs.StringVar(&c.maxCost, "max-cost", "", "highest total locate cost to accept")
	fs.BoolVar(&c.allowSingleUse, "allow-single-use", false, "allow the SingleUse side of a Reg SHO pair when it is cheaper")
	fs.BoolVarP(&c.yes, "yes", "y", false, "take a locate offer within policy and place the order without asking")
}

// parse reads the command line into the request (the account API checks
// it before anything is sent).
func (c *shortCommand) parse(args []string) (account.ShortRequest, error) {
	var r account.ShortRequest
	if len(args) != 2 {
		return r, console.Usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	var err error
	if r.Symbol, err = brokercode.Symbol(args[0]); err != nil {
		return r, err
	}
	qty, err := console.ParseCount("quantity", args[1])
	if err != nil {
		return r, err
	}
	r.Quantity = qty
	typ, tif, limit, stop, err := c.order.Parse()
	if err != nil {
		return r, err
	}
	r.OrderType, r.TimeInForce, r.Limit, r.Stop = string(typ), string(tif), limit, stop
	r.Route = c.order.Route
	if r.Guard, err = c.order.Guard(); err != nil {
		return r, err
	}
	r.Policy, err = console.ParsePolicy(c.maxPrice, c.maxCost, c.allowSingleUse, c.yes)
	return r, err
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
		return console.Usagef("the order needs a confirmation and nobody can give one here (no terminal, or not -o table): pass --yes; nothing was sent")
	}
	m.warnClosed()
	sess, err := c.conn.open(ctx, "short", ask, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
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
	return console.Ended(account.ShortOutcome(res))
}
