package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
)

// creditBackCommand returns located shares: a quantity of one inventory
// row, or the unused shares (ledger.Unused) of a symbol or of every symbol,
// which a person confirms first unless --yes.
type creditBackCommand struct {
	conn  connFlags
	fs    *pflag.FlagSet
	typ   string
	all   bool
	yes   bool
	force bool
}

func (c *creditBackCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.fs = fs
	fs.StringVar(&c.typ, "type", "Locate", "inventory row to credit: Locate, PreBorrow or SingleUse (without QTY: only that row's unused shares; every row's when not given)")
	fs.BoolVar(&c.all, "all", false, "credit back every symbol's unused shares (instead of SYMBOL)")
	fs.BoolVarP(&c.yes, "yes", "y", false, "credit back the unused shares found without asking")
	fs.BoolVar(&c.force, "force", false, "credit back QTY even past the unused shares: those working short sales need, a SingleUse row's used ones")
}

// request reads the command line: SYMBOL QTY, SYMBOL (its unused shares)
// or --all (every symbol's).
func (c *creditBackCommand) request(args []string) (account.CreditBackRequest, error) {
	var req account.CreditBackRequest
	typ := brokercode.LocateType(c.typ)
	switch typ {
	case brokercode.LocateTypeLocate, brokercode.LocateTypePreBorrow, brokercode.LocateTypeSingleUse:
	default:
		return req, console.Usagef("--type %q: want Locate, PreBorrow or SingleUse (case-sensitive)", c.typ)
	}
	switch {
	case c.all && len(args) > 0:
		return req, console.Usagef("give SYMBOL [QTY] or --all, not both")
	case !c.all && (len(args) == 0 || len(args) > 2):
		return req, console.Usagef("want SYMBOL QTY, SYMBOL or --all, got %d argument(s)", len(args))
	case len(args) == 2:
		symbol, qty, err := console.ParseSymbolQty(args)
		return account.CreditBackRequest{Symbol: symbol, Quantity: qty, Type: typ, Force: c.force}, err
	case c.force:
		return req, console.Usagef("--force goes with SYMBOL QTY: the unused shares are never forced")
	}
	req.Unused = true
	if c.fs.Changed("type") {
		req.Type = typ
	}
	var err error
	if len(args) == 1 {
		req.Symbol, err = brokercode.Symbol(args[0])
	}
	return req, err
}

func (c *creditBackCommand) run(ctx context.Context, args []string) error {
	req, err := c.request(args)
	if err != nil {
		return err
	}
	m := c.conn.m
	var ask func(context.Context, account.Question) bool
	// A person confirms the unused shares found; with nobody at a terminal
	// the owner refuses the request unless --yes.
	if req.Confirm = req.Unused && !c.yes; req.Confirm && m.interactive(c.conn.format) {
		ask = m.asker(ctx)
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, "credit-back", ask, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := sess.CreditBack(ctx, req)
	if err != nil && (res == nil || len(res.Started) == 0) {
		return err
	}
	if !console.CreditBackNotes(m.Stderr, req, res) {
		return nil
	}
	ws, followErr := account.FollowAll(ctx, sess, res.Workflows(), console.Progress(out, m.display()))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return finishAll(out, ws, errors.Join(err, followErr))
}
