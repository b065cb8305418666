package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
)

// offersCommand lists the offers waiting on a person, as the account's
// owner holds them: each workflow's priced legs (both sides of a Reg SHO
// pair) and the seconds left to answer (locator approve / decline).
type offersCommand struct {
	conn connFlags
}

func (c *offersCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
}

func (c *offersCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return console.Usagef("want no arguments")
	}
	sess, err := c.conn.open(ctx, "offers", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	st, err := sess.Status(ctx, account.StatusRequest{})
	if err != nil {
		return err
	}
	console.Offers(c.conn.out(), st.Open, c.conn.m.Clock.Now())
	return nil
}
