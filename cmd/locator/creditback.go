package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/service"
)

// creditBackCommand returns unused located shares.
type creditBackCommand struct {
	conn connFlags
	typ  string
}

func (c *creditBackCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.typ, "type", "Locate", "inventory row to credit: Locate, PreBorrow or SingleUse")
}

func (c *creditBackCommand) run(ctx context.Context, args []string) error {
	symbol, qty, err := parseSymbolQty(args)
	if err != nil {
		return err
	}
	typ := brokercode.LocateType(c.typ)
	switch typ {
	case brokercode.LocateTypeLocate, brokercode.LocateTypePreBorrow, brokercode.LocateTypeSingleUse:
	default:
		return usagef("--type %q: want Locate, PreBorrow or SingleUse (case-sensitive)", c.typ)
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, "credit-back", nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	started, err := sess.CreditBack(ctx, account.CreditBackRequest{Symbol: symbol, Quantity: qty, Type: typ})
	if err != nil {
		return err
	}
	w, err := account.FollowOrWithdraw(ctx, sess, started.Started[0].ID, console.Progress(out, c.conn.m.display()))
	if err != nil {
		return err
	}
	return finish(out, w)
}
