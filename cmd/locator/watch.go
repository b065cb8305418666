package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
)

// watchCommand follows one of the broker's push streams until interrupted:
// `watch pnl` the account's profit and loss, `watch orders` its orders,
// through the account API (Watch): the streams the account's owner
// follows, relayed, or with no owner running this process's own. On a
// terminal it redraws a table in place; otherwise (or with --json) it
// prints one JSON object per change.
type watchCommand struct {
	conn connFlags
}

func (c *watchCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.conn.registerStreamURL(fs, "with no owner running, the stream address ws(s)://host[:port] this watch follows the broker at "+
		"(default: the REST address with ws or wss); an owner follows its own (serve --ws-url), and the flag is refused beside one")
}

func (c *watchCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return console.Usagef("want one of: watch pnl, watch orders")
	}
	// A watch runs until interrupted, holding the key pair.
	if err := c.conn.m.noDump(); err != nil {
		return err
	}
	r, s, err := c.conn.reader(ctx, "watch", true)
	if err != nil {
		return accountError(s.Account, err)
	}
	defer r.Close()
	if r.Followed && c.conn.streamURL != "" {
		return console.Usagef("--ws-url is for a watch with no owner: account %s's owner follows the broker's streams at its own address (serve --ws-url); nothing was sent", s.Account)
	}
	live := c.conn.format == console.Table && console.IsTerminalWriter(c.conn.m.Stdout)
	return console.Watch(ctx, r, account.WatchStream(args[0]), s.Account, c.conn.m.Stdout, live)
}
