package main

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/workflow"
)

// locateCommand ensures located shares of one symbol or a watchlist.
type locateCommand struct {
	conn           connFlags
	maxPrice       string
	maxCost        string
	allowSingleUse bool
	yes            bool
	watchlist      string
}

func (c *locateCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.maxPrice, "max-price", "", "highest price per share to accept")
	fs.StringVar(&c.maxCost, "max-cost", "", "highest total cost (price × shares) to accept")
	fs.BoolVar(&c.allowSingleUse, "allow-single-use", false, "allow the SingleUse side of a Reg SHO pair (cannot be credited back once used)")
	fs.BoolVarP(&c.yes, "yes", "y", false, "accept an offer within policy without asking")
	fs.StringVar(&c.watchlist, "watchlist", "", "CSV file of symbol, quantity[, max price] rows to locate (instead of SYMBOL QTY arguments)")
}

func (c *locateCommand) run(ctx context.Context, args []string) error {
	policy, err := console.ParsePolicy(c.maxPrice, c.maxCost, c.allowSingleUse, c.yes)
	if err != nil {
		return err
	}
	items, err := c.requests(args, policy)
	if err != nil {
		return err
	}
	if _, err := c.conn.resolve(true); err != nil {
		return err
	}
	m := c.conn.m
	m.warnClosed()
	// A person is asked only about a single symbol: a watchlist's offers
	// arrive a second apart, faster than anyone can weigh them.
	var ask func(context.Context, account.Question) bool
	if len(items) == 1 && !policy.AutoAccept && m.interactive(c.conn.format) {
		ask = m.asker(ctx)
	}
	out := c.conn.out()
	show := console.Progress(out, m.display())
	var board *console.Board
	if len(items) > 1 && c.conn.format == console.Table && console.IsTerminalWriter(m.Stdout) {
		board = console.NewBoard(m.Stdout, items)
		show = board.Update
	}
	sess, err := c.conn.open(ctx, "locate", ask, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := sess.Locate(ctx, account.LocateRequest{Items: items, Ask: ask != nil})
	if err != nil {
		return err
	}
	ws, followErr := account.FollowAll(ctx, sess, res.Started, show)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if board != nil {
		board.Close(ws)
		out = console.Printer{W: io.Discard}
	}
	return finishAll(out, ws, errors.Join(res.Err(), followErr))
}

// requests builds the batch: SYMBOL QTY pairs, or the watchlist's rows
// (whose max price, when given, caps that row under the other flags'
// policy).
func (c *locateCommand) requests(args []string, policy workflow.Policy) ([]account.LocateItem, error) {
	if c.watchlist != "" {
		if len(args) != 0 {
			return nil, console.Usagef("give SYMBOL QTY pairs or --watchlist, not both")
		}
		items, err := config.ReadWatchlist(c.watchlist, policy)
		if err != nil {
			return nil, console.Usagef("%v", err)
		}
		return items, nil
	}
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, console.Usagef("want SYMBOL QTY [SYMBOL QTY ...], got %d argument(s)", len(args))
	}
	var reqs []account.LocateItem
	for i := 0; i < len(args); i += 2 {
		symbol, qty, err := console.ParseSymbolQty(args[i : i+2])
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, account.LocateItem{Symbol: symbol, Quantity: qty, Policy: policy})
	}
	return reqs, nil
}

// finishAll prints every outcome of a batch and returns the worst exit
// status; a request refused before it was queued makes it a failure.
func finishAll(out console.Printer, ws []*workflow.Workflow, startErr error) error {
	console.Outcomes(out, ws)
	if startErr != nil {
		return startErr
	}
	return console.Ended(account.Worst(ws))
}

// finish prints a workflow's outcome and returns its exit status.
func finish(out console.Printer, w *workflow.Workflow) error {
	return finishAll(out, []*workflow.Workflow{w}, nil)
}
