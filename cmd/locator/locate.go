package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/config"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/service"
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

// parseSymbolQty reads and checks one SYMBOL QTY pair (the domain's rules:
// nothing is recorded or sent for a bad one).
func parseSymbolQty(args []string) (string, int64, error) {
	if len(args) != 2 {
		return "", 0, usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	if err := brokercode.ValidateSymbol(args[0]); err != nil {
		return "", 0, err
	}
	qty, err := workflow.ParseQuantity(args[1])
	return args[0], qty, err
}

// parsePolicy reads the cost-policy flags; --yes or a cap lets the policy
// decide alone, otherwise a person at the terminal is asked.
func parsePolicy(maxPrice, maxCost string, allowSingleUse, yes bool) (workflow.Policy, error) {
	p := workflow.Policy{AllowSingleUse: allowSingleUse, AutoAccept: yes}
	var err error
	if p.MaxPrice, err = workflow.ParsePrice("--max-price", maxPrice); err != nil {
		return p, err
	}
	if p.MaxCost, err = workflow.ParseCost("--max-cost", maxCost); err != nil {
		return p, err
	}
	p.AutoAccept = p.AutoAccept || p.Capped()
	return p, nil
}

func (c *locateCommand) run(ctx context.Context, args []string) error {
	policy, err := parsePolicy(c.maxPrice, c.maxCost, c.allowSingleUse, c.yes)
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
	sess, err := c.conn.open(ctx, "locate", ask, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	res, err := sess.Locate(ctx, account.LocateRequest{Items: items, Ask: ask != nil})
	if err != nil {
		return err
	}
	ws := followAll(ctx, sess, res.Started, show)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if board != nil {
		board.Close(ws)
		out = console.Printer{W: io.Discard}
	}
	return finishAll(out, ws, res.Err())
}

// followAll follows every workflow started at once, showing their changes
// one at a time, and returns their ends by index (nil for one not started,
// or not followed to its end).
func followAll(ctx context.Context, a account.Account, started []account.Started, show func(account.Update)) []*workflow.Workflow {
	var mu sync.Mutex // one line at a time
	one := func(u account.Update) {
		mu.Lock()
		defer mu.Unlock()
		show(u)
	}
	ws := make([]*workflow.Workflow, len(started))
	var wg sync.WaitGroup
	for i, st := range started {
		if st.ID == "" {
			continue
		}
		wg.Go(func() { ws[i], _ = follow(ctx, a, st.ID, one) })
	}
	wg.Wait()
	return ws
}

// follow waits for workflow id's end, showing each change. Interrupted,
// it withdraws the request (an open offer is cancelled at the broker) on a
// context that outlives the interrupt, and waits (bounded) for the broker
// to confirm, so that nothing this command asked for is left open.
func follow(ctx context.Context, a account.Account, id string, show func(account.Update)) (*workflow.Workflow, error) {
	w, err := a.Follow(ctx, account.FollowRequest{ID: id}, show)
	if err != nil && ctx.Err() != nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		if a.Cancel(wctx, account.CancelRequest{ID: id, Interrupt: true}) == nil {
			a.Follow(wctx, account.FollowRequest{ID: id}, nil)
		}
	}
	return w, err
}

// requests builds the batch: SYMBOL QTY pairs, or the watchlist's rows
// (whose max price, when given, caps that row under the other flags'
// policy).
func (c *locateCommand) requests(args []string, policy workflow.Policy) ([]account.LocateItem, error) {
	if c.watchlist != "" {
		if len(args) != 0 {
			return nil, usagef("give SYMBOL QTY pairs or --watchlist, not both")
		}
		items, err := config.ReadWatchlist(c.watchlist, policy)
		if err != nil {
			return nil, usagef("%v", err)
		}
		return items, nil
	}
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, usagef("want SYMBOL QTY [SYMBOL QTY ...], got %d argument(s)", len(args))
	}
	var reqs []account.LocateItem
	for i := 0; i < len(args); i += 2 {
		symbol, qty, err := parseSymbolQty(args[i : i+2])
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, account.LocateItem{Symbol: symbol, Quantity: qty, Policy: policy})
	}
	return reqs, nil
}

// finishAll prints every outcome of a batch (one JSON object per symbol
// with --json, one CSV row with -o csv) and returns the worst exit status; a
// request refused before it was queued makes it a failure.
func finishAll(out console.Printer, ws []*workflow.Workflow, startErr error) error {
	var texts []string
	var rows [][]string
	var objs []any
	for _, w := range ws {
		if w == nil {
			continue
		}
		o := console.OutcomeOf(w)
		texts, rows, objs = append(texts, fmt.Sprintf("%s %s: %s", w.Symbol, w.ID, account.OutcomeOf(w).Words)), append(rows, o.Row()), append(objs, o)
	}
	out.Records(console.OutcomeHeader, rows, objs, texts)
	if startErr != nil {
		return startErr
	}
	return worstExit(ws)
}

// worstExit is the exit status of the worst end among ws (nil when every
// one exits 0; nil entries are skipped).
func worstExit(ws []*workflow.Workflow) error {
	var worst *workflow.Workflow
	for _, w := range ws {
		if w != nil && exitFor(w) != nil && (worst == nil || jobs.Severity(w.State) > jobs.Severity(worst.State)) {
			worst = w
		}
	}
	if worst == nil {
		return nil
	}
	return exitFor(worst)
}

// finish prints a workflow's outcome and returns its exit status.
func finish(out console.Printer, w *workflow.Workflow) error {
	return finishAll(out, []*workflow.Workflow{w}, nil)
}
