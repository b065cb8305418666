package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
)

// shortableCommand tells, per symbol, whether it is easy to borrow, what
// located inventory holds, and the last offers seen, from the owner's
// view of the account (Status).
type shortableCommand struct {
	conn      connFlags
	watchlist string
}

func (c *shortableCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.watchlist, "watchlist", "", "CSV file of symbol, quantity[, max price] rows (the locate watchlist; its symbols are read)")
}

func (c *shortableCommand) run(ctx context.Context, args []string) error {
	symbols, err := c.symbols(args)
	if err != nil {
		return err
	}
	sess, err := c.conn.open(ctx, "shortable", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	st, err := sess.Status(ctx, account.StatusRequest{Symbols: symbols})
	if err != nil {
		return err
	}
	console.Shortable(c.conn.out(), st.Shortable)
	return nil
}

// symbols are the arguments, or the watchlist's symbols, checked.
func (c *shortableCommand) symbols(args []string) ([]string, error) {
	if c.watchlist != "" {
		if len(args) != 0 {
			return nil, console.Usagef("give SYMBOL arguments or --watchlist, not both")
		}
		symbols, err := config.WatchlistSymbols(c.watchlist)
		if err != nil {
			return nil, console.Usagef("%v", err)
		}
		return symbols, nil
	}
	if len(args) == 0 {
		return nil, console.Usagef("want SYMBOL [SYMBOL ...] or --watchlist FILE")
	}
	return brokercode.Symbols(args)
}
