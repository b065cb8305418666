package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/console"
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
		return console.Usagef("want one of: watch pnl, watch orders")
	}
	// A watch runs until interrupted, holding the key pair.
	if err := c.conn.m.noDump(); err != nil {
		return err
	}
	s, err := c.conn.resolve(true)
	if err != nil {
		return err
	}
	var opts []brokerclient.Option
	if c.wsURL != "" {
		opts = append(opts, brokerclient.WithStreamURL(c.wsURL))
	}
	client, err := c.conn.dialer().Client(s, opts...)
	if err != nil {
		return console.Usagef("%v", err)
	}
	live := c.conn.format == console.Table && console.IsTerminalWriter(c.conn.m.Stdout)
	return accountError(s.Account, console.Watch(ctx, client, args[0], s.Account, c.conn.m.Stdout, live))
}
