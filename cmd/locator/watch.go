package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/console"
)

// watchCommand follows one of the broker's push streams until interrupted:
// `watch pnl` the account's profit and loss, `watch orders` its orders. On a
// terminal it redraws a table in place; otherwise (or with --json) it prints
// one JSON object per change.
type watchCommand struct {
	conn  connFlags
	wsURL string
}

func (c *watchCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.wsURL, "ws-url", "", "stream address ws(s)://host[:port] (default: the REST address with ws or wss)")
}

func (c *watchCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 || (args[0] != "pnl" && args[0] != "orders") {
		return usagef("want one of: watch pnl, watch orders")
	}
	s, err := c.conn.resolve(true)
	if err != nil {
		return err
	}
	opts := []brokerclient.Option{
		brokerclient.WithBaseURL(s.BaseURL), brokerclient.WithCredentials(s.KeyID, s.Secret),
		brokerclient.WithClock(clock.Real{}), brokerclient.WithLogger(c.conn.logger()), brokerclient.WithUserAgent("locator-cli/1"),
	}
	if c.wsURL != "" {
		opts = append(opts, brokerclient.WithStreamURL(c.wsURL))
	}
	client, err := brokerclient.NewClient(opts...)
	if err != nil {
		return usagef("%v", err)
	}
	f, isFile := c.conn.m.Stdout.(*os.File)
	live := c.conn.format == console.Table && isFile && console.IsTerminal(f)
	if args[0] == "pnl" {
		err = c.pnl(ctx, client, s.Account, live)
	} else {
		err = c.orders(ctx, client, s.Account, live)
	}
	switch {
	case ctx.Err() != nil:
		return &exitError{code: account.ExitInterrupted, msg: "interrupted"}
	case errors.Is(err, brokerclient.ErrStreamAuth):
		return usagef("the broker refused these keys on the stream: check LOCATOR_KEY_ID and LOCATOR_SECRET")
	case errors.Is(err, brokerclient.ErrStreamSubscribe):
		return usagef("account %s not found for these keys; nothing was sent", s.Account)
	}
	return err
}

// redraw clears the terminal and prints a status line and the table.
func (c *watchCommand) redraw(status string, draw func(console.Printer)) {
	fmt.Fprint(c.conn.m.Stdout, "\x1b[H\x1b[2J")
	fmt.Fprintln(c.conn.m.Stdout, status)
	draw(console.Printer{W: c.conn.m.Stdout})
}

func streamStatus(up bool) string {
	state := "live"
	if !up {
		state = "reconnecting…"
	}
	return fmt.Sprintf("%s  stream %s  (Ctrl-C to stop)", time.Now().Format(time.TimeOnly), state)
}

// pnlLine is one JSON line of watch pnl.
type pnlLine struct {
	Time      time.Time                `json:"time"`
	Account   string                   `json:"account"`
	Connected bool                     `json:"connected"`
	PnL       brokerclient.PnLSnapshot `json:"pnl"`
}

func (c *watchCommand) pnl(ctx context.Context, client *brokerclient.Client, account string, live bool) error {
	w, err := client.Streams.WatchPnL(ctx, []string{account})
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Wait(ctx); err != nil {
		return err
	}
	for {
		changed := w.Changed()
		if err := w.Err(); err != nil {
			return err
		}
		snap, up := w.Snapshot(account)
		if live {
			c.redraw(streamStatus(up), func(p console.Printer) { console.PnLSnapshot(p, snap) })
		} else if up {
			c.conn.m.printer(console.JSON).Event(pnlLine{Time: time.Now().UTC(), Account: account, Connected: up, PnL: snap}, "")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (c *watchCommand) orders(ctx context.Context, client *brokerclient.Client, account string, live bool) error {
	f, err := client.Streams.FollowOrders(ctx, account)
	if err != nil {
		return err
	}
	defer f.Close()
	w := f.Watch("")
	defer w.Close()
	if err := f.Load(ctx); err != nil {
		return accountError(account, err)
	}
	var ids []string
	latest := map[string]brokerclient.Order{}
	for {
		o, err := w.Next(ctx)
		if err != nil {
			return err
		}
		if !live {
			c.conn.m.printer(console.JSON).Event(o, "")
			continue
		}
		if _, seen := latest[o.ClientOrderID]; !seen {
			ids = append(ids, o.ClientOrderID)
		}
		latest[o.ClientOrderID] = *o
		up, _ := f.Connected()
		orders := make([]brokerclient.Order, len(ids))
		for i, id := range ids {
			orders[i] = latest[id]
		}
		c.redraw(streamStatus(up), func(p console.Printer) { console.OrderBook(p, orders) })
	}
}
