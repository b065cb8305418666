package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/report"
)

// planCommand suggests the quantity to locate before the open for each
// symbol of a watchlist (the account's Plan).
type planCommand struct {
	conn      connFlags
	watchlist string
	days      int
}

func (c *planCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.watchlist, "watchlist", "", "CSV watchlist as 'locate --watchlist' reads it (symbol, quantity[, max price]); only the symbols are used (required)")
	fs.IntVar(&c.days, "days", report.DefaultPlanDays, "trading days of history to read, today's included")
}

func (c *planCommand) run(ctx context.Context, args []string) error {
	if c.watchlist == "" {
		return console.Usagef("--watchlist FILE is required")
	}
	if c.days < 1 {
		return console.Usagef("--days %d: want 1 or more", c.days)
	}
	symbols, err := config.WatchlistSymbols(c.watchlist)
	if err != nil {
		return console.Usagef("%v", err)
	}
	r, s, err := c.conn.reader(ctx, "plan", true)
	if err != nil {
		return err
	}
	defer r.Close()
	plan, err := r.Plan(ctx, account.PlanRequest{Symbols: symbols, Days: c.days})
	if err != nil {
		return accountError(s.Account, err)
	}
	console.Plan(c.conn.out(), plan.Suggestions)
	return nil
}
