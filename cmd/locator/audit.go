package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/report"
)

// auditCommand prints the Reg SHO audit trail (the account's Audit): every
// short sale locator placed or saw, with what covered it when it was sent.
type auditCommand struct {
	conn     connFlags
	from, to string
}

func (c *auditCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	registerRange(fs, &c.from, &c.to)
}

func (c *auditCommand) run(ctx context.Context, args []string) error {
	rng, err := report.ParseRange(c.from, c.to)
	if err != nil {
		return console.Usagef("%v", err)
	}
	r, s, err := c.conn.reader(ctx, "audit", true)
	if err != nil {
		return err
	}
	defer r.Close()
	trail, err := r.Audit(ctx, account.AuditRequest{Range: rng})
	if err != nil {
		return accountError(s.Account, err)
	}
	console.Audit(c.conn.out(), trail)
	if n := trail.Flagged(); n > 0 {
		return &console.CodeError{Code: console.ExitBroker, Msg: fmt.Sprintf("%d of %d short sale(s) sent without cover", n, len(trail.Rows))}
	}
	return nil
}
