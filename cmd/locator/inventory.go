package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/config"
	"github.com/locatorhq/locator/console"
)

// inventoryCommand prints the account's located inventory.
type inventoryCommand struct{ conn connFlags }

func (c *inventoryCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *inventoryCommand) run(ctx context.Context, args []string) error {
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	rows, _, err := client.Locates.Inventory(ctx, s.Account)
	if err != nil {
		return accountError(s.Account, err)
	}
	console.Inventory(c.conn.out(), rows)
	return nil
}

// historyCommand prints today's locate history rows.
type historyCommand struct{ conn connFlags }

func (c *historyCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *historyCommand) run(ctx context.Context, args []string) error {
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	rows, _, err := client.Locates.History(ctx, s.Account)
	if err != nil {
		return accountError(s.Account, err)
	}
	console.LocateHistory(c.conn.out(), rows)
	return nil
}

// readClient is a client for read-only commands: no engine, no database.
func (c *connFlags) readClient() (*brokerclient.Client, config.Settings, error) {
	s, err := c.resolve(true)
	if err != nil {
		return nil, s, err
	}
	client, err := c.client(s, clock.Real{})
	if err != nil {
		return nil, s, usagef("%v", err)
	}
	return client, s, nil
}
