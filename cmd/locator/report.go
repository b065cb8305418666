package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/internal/report/chart"
	"github.com/locatorhq/locator/internal/wire"
)

// reportCommand prints what locates cost and what they were used for, per
// symbol, per day and in total (the account's Report, which syncs the
// ledger first), and draws the charts.
type reportCommand struct {
	conn     connFlags
	from, to string
	charts   string
}

func (c *reportCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	registerRange(fs, &c.from, &c.to)
	fs.StringVar(&c.charts, "charts", "", "also draw the charts (PNG and SVG) into the folder DIR")
}

// registerRange declares --from and --to, trade dates on the broker's
// calendar.
func registerRange(fs *pflag.FlagSet, from, to *string) {
	fs.StringVar(from, "from", "", "first trade date, YYYY-MM-DD (default: 20 trading days back from the broker's today)")
	fs.StringVar(to, "to", "", "last trade date, YYYY-MM-DD (default: the broker's today)")
}

func (c *reportCommand) run(ctx context.Context, args []string) error {
	rng, err := report.ParseRange(c.from, c.to)
	if err != nil {
		return console.Usagef("%v", err)
	}
	sess, err := c.conn.open(ctx, "report", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	r, err := sess.Report(ctx, account.ReportRequest{Range: rng})
	if err != nil {
		return accountError(sess.settings.Account, err)
	}
	console.Report(c.conn.out(), r)
	if c.charts != "" {
		files, err := chart.Write(r, c.charts)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.conn.m.Stderr, "charts: %s\n", strings.Join(files, " "))
	}
	return nil
}
