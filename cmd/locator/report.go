package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/config"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/report"
	"github.com/locatorhq/locator/store"
)

// reportCommand prints what locates cost and what they were used for, per
// symbol, per day and in total (report.Run), and draws the charts.
type reportCommand struct {
	conn     connFlags
	from, to string
	charts   string
}

func (c *reportCommand) synopsis() string {
	return "spend analytics: located, shorted and credited shares, utilisation, spend, recovery, net spend, forgone offers, price per 100, P&L net of locates, fee status"
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

// parseRange reads --from and --to; zero dates are left to the library's
// defaults, which need the broker's today.
func parseRange(from, to string) (report.Range, error) {
	var r report.Range
	for _, f := range []struct {
		name, v string
		t       *time.Time
	}{{"--from", from, &r.From}, {"--to", to, &r.To}} {
		if f.v == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, f.v)
		if err != nil {
			return r, usagef("%s %q: want a date YYYY-MM-DD", f.name, f.v)
		}
		*f.t = d
	}
	switch {
	case r.From.IsZero() && !r.To.IsZero():
		return r, usagef("--to needs --from")
	case !r.To.IsZero() && r.To.Before(r.From):
		return r, usagef("--to %s is before --from %s", to, from)
	}
	return r, nil
}

// analytics opens what the report, audit and plan commands read: a client
// (for the broker's clock, its ledger and order book) and the local
// database.
func (c *connFlags) analytics(ctx context.Context) (*brokerclient.Client, config.Settings, *store.Store, error) {
	client, s, err := c.readClient()
	if err != nil {
		return nil, s, nil, err
	}
	st, err := c.localStore(ctx)
	return client, s, st, err
}

func (c *reportCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	rng, err := parseRange(c.from, c.to)
	if err != nil {
		return err
	}
	client, s, st, err := c.conn.analytics(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := report.Run(ctx, client, st, s.Account, clock.Real{}.Now(), rng)
	if err != nil {
		return accountError(s.Account, err)
	}
	out := c.conn.out()
	recs := r.Records()
	var rows [][]string
	var objs []any
	for _, rec := range recs {
		objs = append(objs, rec)
		rows = append(rows, rec.CSV())
	}
	if out.Format != console.Table {
		out.Table(report.CSVHeader, rows, objs)
	} else {
		c.printTable(r, recs)
	}
	if c.charts != "" {
		files, err := report.WriteCharts(r, c.charts)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.conn.m.Stderr, "charts: %s\n", strings.Join(files, " "))
	}
	return nil
}

// printTable shows the report for people: one table per kind of row.
func (c *reportCommand) printTable(r *report.Report, recs []report.Record) {
	w := c.conn.m.Stdout
	fmt.Fprintf(w, "Locates of %s, %s (New York trade dates, the broker's calendar)\n", r.Account, r.Range)
	header := []string{"LOCATED", "SHORTED", "CREDITED", "UTIL", "SPEND", "RECOVERY", "NET SPEND", "FORGONE", "PER 100", "SHORT P&L", "NET P&L", "FEES"}
	for _, part := range []struct{ typ, title, key string }{
		{"symbol", "By symbol", "SYMBOL"}, {"date", "By day", "DATE"}, {"day", "By symbol and day", "DATE SYMBOL"}, {"total", "Total", ""},
	} {
		var rows [][]string
		for _, rec := range recs {
			if rec.Type != part.typ {
				continue
			}
			row := []string{strconv.FormatInt(rec.Located, 10), strconv.FormatInt(rec.Shorted, 10), strconv.FormatInt(rec.Credited, 10),
				dash(rec.Utilisation), rec.Spend, rec.Recovery, rec.NetSpend, rec.ForgoneSpend, dash(rec.PricePer100),
				rec.ShortPnL, rec.NetPnL, rec.FeeStatus}
			switch part.typ {
			case "symbol":
				row = append([]string{rec.Symbol}, row...)
				if rec.PriceTrend != nil {
					row[9] += " (" + signed(*rec.PriceTrend) + ")"
				}
			case "date":
				row = append([]string{rec.Date}, row...)
			case "day":
				row = append([]string{rec.Date + " " + rec.Symbol}, row...)
			}
			rows = append(rows, row)
		}
		h := header
		if part.key != "" {
			h = append([]string{part.key}, header...)
		}
		fmt.Fprintf(w, "\n%s\n", part.title)
		c.conn.out().Table(h, rows, nil)
	}
}

func dash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// signed shows a change with its sign.
func signed(s string) string {
	if !strings.HasPrefix(s, "-") {
		return "+" + s
	}
	return s
}
