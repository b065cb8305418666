package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
)

// statusCommand shows the database's workflows and orders, and their
// owners; it sends nothing.
type statusCommand struct {
	conn  connFlags
	limit int
}

func (c *statusCommand) flags(fs *pflag.FlagSet) {
	c.conn.registerLocal(fs)
	fs.IntVar(&c.limit, "limit", 20, "how many rows to list: the most recent workflows and orders locator placed")
}

func (c *statusCommand) run(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return console.Usagef("want at most one workflow ID")
	}
	s, err := c.conn.picked()
	if err != nil {
		return err
	}
	// Every account's records: the whole database, read here (an owner
	// answers for its own account alone), as it needs no keys.
	all := s
	all.Account = ""
	db, err := c.conn.dialer().Reader(ctx, all, "status")
	if err != nil {
		return err
	}
	defer db.Close()
	if len(args) == 1 {
		return c.one(ctx, db, args[0])
	}
	r, err := db.Records(ctx, account.RecordsRequest{What: account.RecordsRecent, Limit: c.limit})
	if err != nil {
		return err
	}
	out := c.conn.out()
	console.Owners(out, r.Leases, r.Standbys, time.Now())
	console.Refused(out, r.Refused)
	if err := c.budgetLeft(ctx, s, out); err != nil {
		return err
	}
	console.Workflows(out, r.Workflows, r.Orders, c.limit)
	return nil
}

// one shows the workflow id names (its id, its quoteReqID or a unique
// prefix of its id), or else the order locator placed under id (the
// clientOrderId it sent, or the one the broker answered with, as the list
// shows it), with its transition log.
func (c *statusCommand) one(ctx context.Context, db account.Reader, id string) error {
	r, err := db.Records(ctx, account.RecordsRequest{What: account.RecordsOne, ID: id})
	switch k := account.KindOf(err); {
	case err == nil:
	case k == account.KindInput, k == account.KindNotOpen:
		return console.Usagef("%v", err)
	default:
		return err
	}
	if r.Workflow != nil {
		console.Transitions(c.conn.out(), r.Workflow, r.Log)
		return nil
	}
	console.OrderTransitions(c.conn.out(), r.Order, r.Log)
	return nil
}

// budgetLeft shows what the locate budget of the settings' account leaves
// of today: its owner's, when one runs (the owner keeps the budget), else
// the settings' budget against the same day's records; nothing when it
// has none, or no account is named.
func (c *statusCommand) budgetLeft(ctx context.Context, s config.Settings, out console.Printer) error {
	if s.Account == "" {
		return nil
	}
	acct, err := c.conn.dialer().Reader(ctx, s, "status")
	if err != nil {
		return err
	}
	defer acct.Close()
	r, err := acct.Records(ctx, account.RecordsRequest{What: account.RecordsBudget})
	if err != nil || r.Budget == nil {
		return err
	}
	left := *r.Budget
	out.Event(map[string]any{"type": "budget", "account": s.Account, "budget": left}, fmt.Sprintf("account %s: %s", s.Account, left))
	return nil
}

// registerLocal declares the flags of a command that reads only the
// database.
func (c *connFlags) registerLocal(fs *pflag.FlagSet) {
	fs.StringVar(&c.db, "db", "", "SQLite database path or postgres:// URL (env LOCATOR_DB)")
	console.RegisterFormat(fs, &c.format)
}
