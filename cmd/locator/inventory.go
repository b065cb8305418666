package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
)

// readCommand prints one Read of the account's records as the broker
// gives them (inventory, history, routes): what, printed by print.
type readCommand struct {
	conn  connFlags
	name  string
	what  account.ReadKind
	print func(console.Printer, *account.ReadResult)
}

// reader makes the readCommand of name for the command table.
func reader(conn connFlags, name string, what account.ReadKind, print func(console.Printer, *account.ReadResult)) func() command {
	return func() command { return &readCommand{conn, name, what, print} }
}

func (c *readCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *readCommand) run(ctx context.Context, args []string) error {
	r, s, err := c.conn.read(ctx, c.name, true, account.ReadRequest{What: c.what})
	if err != nil {
		return accountError(s.Account, err)
	}
	c.print(c.conn.out(), r)
	return nil
}

// read is one Read of the broker's records about the account for a read
// command (reader). needAccount is false for a read that needs none (the
// list of accounts), which then goes through no owner.
func (c *connFlags) read(ctx context.Context, command string, needAccount bool, req account.ReadRequest) (*account.ReadResult, config.Settings, error) {
	r, s, err := c.reader(ctx, command, needAccount)
	if err != nil {
		return nil, s, err
	}
	defer r.Close()
	res, err := r.Read(ctx, req)
	return res, s, err
}

// reader is the account's reads for a read command, from the checked
// settings (service.Dialer.Reader: through the account's live owner when
// one runs, else this process's own on the database opened for reading).
func (c *connFlags) reader(ctx context.Context, command string, needAccount bool) (*service.Reading, config.Settings, error) {
	s, err := c.resolve(needAccount)
	if err != nil {
		return nil, s, err
	}
	r, err := c.dialer().Reader(ctx, s, command)
	return r, s, err
}
