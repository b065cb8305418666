package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/ledger"
)

// planCommand suggests the quantity to locate before the open for each
// symbol of a watchlist (report.Plan).
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
	// One read of the account tells the broker's clock, whose calendar the
	// days are counted on.
	st, err := c.conn.localStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	acct, s, err := c.conn.read(ctx, "plan", true, account.ReadRequest{What: account.ReadAccount})
	if err != nil {
		return accountError(s.Account, err)
	}
	skew := acct.Skew
	plan, err := report.Plan(ctx, st, report.PlanOptions{Account: s.Account, Symbols: symbols, Days: c.days,
		Today: ledger.TradeDate(c.conn.m.Clock.Now().Add(skew)), Skew: skew})
	if err != nil {
		return err
	}
	console.Plan(c.conn.out(), plan)
	return nil
}
