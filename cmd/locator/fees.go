package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/workflow"
)

// feesCommand syncs the cash ledger and reconciles locate fees against the
// workflows in the local database.
type feesCommand struct {
	conn  connFlags
	since string
	grace time.Duration
}

func (c *feesCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.since, "since", "", "first trade date to reconcile, YYYY-MM-DD (default 30 days before the broker's today)")
	fs.DurationVar(&c.grace, "grace", ledger.FeeGrace, "how long after a fill its fee may still be pending before it is missing")
	fs.VarPF(console.FormatAlias{F: &c.conn.format, To: console.CSV}, "csv", "", "print CSV (fees, credits and day totals, one row each)").NoOptDefVal = "true"
	fs.MarkDeprecated("csv", "use -o csv")
}

func (c *feesCommand) run(ctx context.Context, args []string) error {
	if c.grace < 0 {
		return console.Usagef("--grace %s: want a duration of zero or more", c.grace)
	}
	win := locator.FeeWindow{Days: 31}
	if c.since != "" {
		d, err := time.Parse(time.DateOnly, c.since)
		if err != nil {
			return console.Usagef("--since %q: want a date YYYY-MM-DD", c.since)
		}
		win = locator.FeeWindow{Since: d}
	}
	sess, err := c.conn.open(ctx, "fees", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := sess.Fees(ctx, account.FeesRequest{Window: win, Grace: c.grace})
	if err != nil {
		return err
	}
	r := res.Report
	console.FeeReport(c.conn.out(), r, res.Synced, c.grace)
	if n := r.Problems(); n > 0 {
		return &console.CodeError{Code: console.ExitBroker, Msg: fmt.Sprintf("%d problem(s) in the ledger: %s", n, r)}
	}
	return nil
}

// sizeCommand says how many shares can be shorted now.
type sizeCommand struct {
	conn   connFlags
	price  string
	target int64
}

func (c *sizeCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.price, "price", "", "price per share the short would be placed at (required)")
	fs.Int64Var(&c.target, "target", 0, "shares you want to short: says how many more lots to locate and their cost")
}

func (c *sizeCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return console.Usagef("want SYMBOL, got %d argument(s)", len(args))
	}
	symbol, err := brokercode.Symbol(args[0])
	if err != nil {
		return err
	}
	if c.price == "" {
		return console.Usagef("--price is required")
	}
	price, err := workflow.ParsePrice("--price", c.price)
	if err != nil {
		return err
	}
	if c.target < 0 {
		return console.Usagef("--target %d: want zero or more shares", c.target)
	}
	r, s, err := c.conn.reader(ctx, "size", true)
	if err != nil {
		return err
	}
	defer r.Close()
	z, err := r.Size(ctx, account.SizeRequest{Symbol: symbol, Price: price, Target: c.target})
	if errors.Is(err, brokercode.ErrInput) {
		return console.Usagef("%v", err)
	}
	if err != nil {
		return accountError(s.Account, err)
	}
	console.Sizing(c.conn.out(), z)
	return nil
}
