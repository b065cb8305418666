package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
)

// quoteCommand prices located shares without taking them: a price check
// per symbol, each offer cancelled at the broker as soon as it is seen.
type quoteCommand struct {
	conn     connFlags
	quantity int64
}

func (c *quoteCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.Int64VarP(&c.quantity, "quantity", "q", brokercode.LocateLot, "shares to price (a multiple of 100)")
}

func (c *quoteCommand) run(ctx context.Context, args []string) error {
	items, err := c.items(args)
	if err != nil {
		return err
	}
	sess, err := c.conn.open(ctx, "quote", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := sess.Quote(ctx, account.QuoteRequest{Items: items})
	if err != nil {
		return err
	}
	// A person at a terminal watches the changes (a quote queued behind the
	// same-symbol spacing waits up to half a minute) on stderr; stdout
	// holds the prices alone.
	show := func(account.Update) {}
	if d := c.conn.m.display(); d.Live() {
		show = console.Progress(c.conn.m.printer(console.Table), d)
	}
	ws, followErr := account.FollowAll(ctx, sess, res.Started, show)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	console.Quotes(c.conn.out(), ws)
	if err := errors.Join(res.Err(), followErr); err != nil {
		return err
	}
	return console.Ended(account.Worst(ws))
}

// items checks the symbols and the quantity before anything is opened or
// sent.
func (c *quoteCommand) items(args []string) ([]account.QuoteItem, error) {
	if len(args) == 0 {
		return nil, console.Usagef("want SYMBOL [SYMBOL ...]")
	}
	if err := brokercode.ValidateLocateQuantity(c.quantity); err != nil {
		return nil, err
	}
	symbols, err := brokercode.Symbols(args)
	items := make([]account.QuoteItem, len(symbols))
	for i, s := range symbols {
		items[i] = account.QuoteItem{Symbol: s, Quantity: c.quantity}
	}
	return items, err
}
