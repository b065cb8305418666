package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/workflow"
)

// coverCommand buys to cover a short (Buy/Close, spec "Orders" rule 3):
// the account's PlaceOrder checks the order's shape and route, records it
// under a write-ahead clientOrderId and sends it once.
type coverCommand struct {
	conn  connFlags
	order console.OrderFlags
	yes   bool
}

func (c *coverCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.order.Register(fs, "buy")
	fs.BoolVarP(&c.yes, "yes", "y", false, "place the order without asking")
}

// parse reads SYMBOL SHARES and the order's flags.
func (c *coverCommand) parse(args []string) (workflow.Order, error) {
	var o workflow.Order
	if len(args) != 2 {
		return o, console.Usagef("want SYMBOL SHARES, got %d argument(s)", len(args))
	}
	var err error
	if o.Symbol, err = brokercode.Symbol(args[0]); err != nil {
		return o, err
	}
	if o.Quantity, err = console.ParseCount("quantity", args[1]); err != nil {
		return o, err
	}
	if err := workflow.ValidateOrderQuantity(o.Quantity); err != nil {
		return o, err
	}
	typ, tif, limit, stop, err := c.order.Parse()
	if err != nil {
		return o, err
	}
	o.Side, o.OpenClose = string(brokerclient.SideBuy), string(brokerclient.OpenCloseClose)
	o.OrderType, o.TimeInForce, o.LimitPrice, o.StopPrice, o.Route = string(typ), string(tif), limit, stop, c.order.Route
	return o, nil
}

func (c *coverCommand) run(ctx context.Context, args []string) error {
	o, err := c.parse(args)
	if err != nil {
		return err
	}
	guard, err := c.order.Guard()
	if err != nil {
		return err
	}
	m := c.conn.m
	var ask func(context.Context, account.Question) bool
	if !c.yes {
		if !m.interactive(c.conn.format) {
			return console.Usagef("the order needs a confirmation and nobody can give one here (no terminal, or not -o table): pass --yes; nothing was sent")
		}
		ask = m.asker(ctx)
	}
	m.warnClosed()
	sess, err := c.conn.open(ctx, "cover", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	o.Account = sess.settings.Account
	out := c.conn.out()
	if ask != nil && !ask(ctx, account.Question{Order: &o}) {
		console.Cover(out, o, nil, "declined at the confirmation")
		return ctx.Err()
	}
	got, err := sess.PlaceOrder(ctx, account.PlaceOrderRequest{Order: o, Guard: guard})
	if err != nil {
		if got != nil {
			console.Cover(out, o, got, "")
		}
		return err
	}
	console.Cover(out, o, got, "")
	return console.Ended(account.ShortOutcome(&account.ShortResult{Order: got}))
}
