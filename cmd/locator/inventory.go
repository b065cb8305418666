package main

import (
	"context"
	"errors"
	"io/fs"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
)

// inventoryCommand prints the account's located inventory.
type inventoryCommand struct{ conn connFlags }

func (c *inventoryCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *inventoryCommand) run(ctx context.Context, args []string) error {
	r, s, err := c.conn.read(ctx, "inventory", true, account.ReadRequest{What: account.ReadInventory})
	if err != nil {
		return accountError(s.Account, err)
	}
	console.Inventory(c.conn.out(), r.Inventory)
	return nil
}

// historyCommand prints today's locate history rows.
type historyCommand struct{ conn connFlags }

func (c *historyCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *historyCommand) run(ctx context.Context, args []string) error {
	r, s, err := c.conn.read(ctx, "history", true, account.ReadRequest{What: account.ReadLocateHistory})
	if err != nil {
		return accountError(s.Account, err)
	}
	console.LocateHistory(c.conn.out(), r.History)
	return nil
}

// read is one Read of the broker's records about the account for a read
// command: through the account's live owner when one runs (so its request
// is on the owner's pacer and this process sends the broker nothing), and
// only when none does on this process's own client (service.ReadAlone).
// It opens the database only to find the owner's lease, read-only, and
// never creates it. needAccount is false for a read that needs none (the
// list of accounts), which then goes through no owner.
func (c *connFlags) read(ctx context.Context, command string, needAccount bool, req account.ReadRequest) (*account.ReadResult, config.Settings, error) {
	s, err := c.resolve(needAccount)
	if err != nil {
		return nil, s, err
	}
	client, err := c.dialer().Shared(s)
	if err != nil {
		return nil, s, console.Usagef("%v", err)
	}
	if s.Account != "" {
		owner, err := c.owner(ctx, s, command)
		if err != nil {
			return nil, s, err
		}
		if owner != nil {
			defer owner.Close()
			r, err := owner.Read(ctx, req)
			return r, s, err
		}
	}
	r, err := service.ReadAlone(ctx, client, s.Account, req)
	return r, s, err
}

// owner is the account's live owner as a follower reaches it, or nil when
// no live process owns the account (or there is no database yet).
func (c *connFlags) owner(ctx context.Context, s config.Settings, command string) (*service.Client, error) {
	st, err := store.OpenReader(ctx, s.DB, clock.Real{})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	cfg, err := c.dialer().Config(s, st, command, nil, service.RoleCommand, false)
	if err != nil {
		return nil, err
	}
	owner, err := service.FollowOwner(ctx, cfg)
	if errors.Is(err, service.ErrNoOwner) {
		return nil, nil
	}
	return owner, err
}

// readClient is a client for the one command that still reads the broker
// itself (size: ledger.Size takes a client): no engine, no database.
func (c *connFlags) readClient() (*brokerclient.Client, config.Settings, error) {
	s, err := c.resolve(true)
	if err != nil {
		return nil, s, err
	}
	client, err := c.dialer().Client(s)
	if err != nil {
		return nil, s, console.Usagef("%v", err)
	}
	return client, s, nil
}
