package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/report"
	"github.com/locatorhq/locator/workflow"
)

// planJSON is a suggestion as -o json prints it; prices are per share.
type planJSON struct {
	Symbol      string `json:"symbol"`
	Suggested   int64  `json:"suggested"`
	MaxDay      int64  `json:"maxDay"`
	Shorted     int64  `json:"shorted"`
	DaysShorted int    `json:"daysShorted"`
	Days        int    `json:"days"`
	Offers      int    `json:"offers"`
	MinPrice    string `json:"minPrice"`
	MaxPrice    string `json:"maxPrice"`
}

// priceOrDash shows a locate price with four decimals, "-" when none.
func priceOrDash(d *decimal.Decimal) string {
	if d == nil {
		return "-"
	}
	return console.Price4(*d)
}

// planCommand suggests the quantity to locate before the open for each
// symbol of a watchlist (report.Plan).
type planCommand struct {
	conn      connFlags
	watchlist string
	days      int
}

func (c *planCommand) synopsis() string {
	return "for a watchlist, the quantity to locate before the open from the last days' shorted shares, and the price range of the offers seen"
}

func (c *planCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.watchlist, "watchlist", "", "CSV watchlist as 'locate --watchlist' reads it (symbol, quantity[, max price]); only the symbols are used (required)")
	fs.IntVar(&c.days, "days", report.DefaultPlanDays, "trading days of history to read, today's included")
}

func (c *planCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if c.watchlist == "" {
		return usagef("--watchlist FILE is required")
	}
	if c.days < 1 {
		return usagef("--days %d: want 1 or more", c.days)
	}
	reqs, err := readWatchlist(c.watchlist, workflow.Policy{})
	if err != nil {
		return err
	}
	var symbols []string
	for _, r := range reqs {
		symbols = append(symbols, r.Symbol)
	}
	client, s, st, err := c.conn.analytics(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	// One read of the account tells the broker's clock, whose calendar the
	// days are counted on.
	if _, _, err := client.Accounts.Get(ctx, s.Account); err != nil {
		return accountError(s.Account, err)
	}
	skew := client.ClockSkew()
	plan, err := report.Plan(ctx, st, report.PlanOptions{Account: s.Account, Symbols: symbols, Days: c.days,
		Today: ledger.TradeDate(clock.Real{}.Now().Add(skew)), Skew: skew})
	if err != nil {
		return err
	}
	var rows [][]string
	var objs []any
	for _, s := range plan {
		rows = append(rows, []string{s.Symbol, strconv.FormatInt(s.Suggested, 10), strconv.FormatInt(s.MaxDay, 10),
			strconv.FormatInt(s.Shorted, 10), fmt.Sprintf("%d/%d", s.DaysShorted, s.Days), strconv.Itoa(s.Offers),
			priceOrDash(s.MinPrice), priceOrDash(s.MaxPrice)})
		objs = append(objs, planJSON{Symbol: s.Symbol, Suggested: s.Suggested, MaxDay: s.MaxDay, Shorted: s.Shorted,
			DaysShorted: s.DaysShorted, Days: s.Days, Offers: s.Offers, MinPrice: priceOrDash(s.MinPrice), MaxPrice: priceOrDash(s.MaxPrice)})
	}
	c.conn.out().Table([]string{"SYMBOL", "LOCATE", "MOST IN A DAY", "SHORTED", "DAYS SHORTED", "OFFERS", "MIN PRICE", "MAX PRICE"}, rows, objs)
	return nil
}
