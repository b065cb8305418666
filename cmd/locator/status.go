package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
)

// statusCommand shows workflows from the local database; it sends nothing.
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
	st, err := c.conn.localStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	out := c.conn.out()
	if len(args) == 1 {
		w, err := st.Find(ctx, "", args[0])
		var ambiguous *store.AmbiguousError
		switch {
		case errors.Is(err, store.ErrNotFound):
			return c.order(ctx, st, args[0])
		case errors.As(err, &ambiguous):
			return console.Usagef("%v", err)
		}
		if err != nil {
			return err
		}
		log, err := st.Transitions(ctx, w.ID)
		if err != nil {
			return err
		}
		console.Transitions(out, w, log)
		return nil
	}
	leases, err := st.Leases(ctx)
	if err != nil {
		return err
	}
	standbys, err := st.Standbys(ctx, "")
	if err != nil {
		return err
	}
	console.Owners(out, leases, standbys, time.Now())
	refused, err := st.Refused(ctx)
	if err != nil {
		return err
	}
	console.Refused(out, refused)
	if err := c.budgetLeft(ctx, st, out); err != nil {
		return err
	}
	ws, err := st.List(ctx, store.Filter{Limit: c.limit})
	if err != nil {
		return err
	}
	orders, err := st.Orders(ctx, store.OrderFilter{Limit: c.limit})
	if err != nil {
		return err
	}
	console.Workflows(out, ws, orders, c.limit)
	return nil
}

// order shows the order locator placed under id (the clientOrderId it
// sent, or the one the broker answered with, as the list shows it), with
// its transition log, when no workflow has that id.
func (c *statusCommand) order(ctx context.Context, st *store.Store, id string) error {
	o, err := st.LookUpOrder(ctx, id)
	if errors.Is(err, store.ErrOrderNotFound) {
		return console.Usagef("no workflow or order %s", id)
	}
	if err != nil {
		return err
	}
	log, err := st.OrderTransitions(ctx, o.ClientOrderID)
	if err != nil {
		return err
	}
	console.OrderTransitions(c.conn.out(), o, log)
	return nil
}

// budgetLeft shows what the locate budget of the settings' account leaves
// of today, from that account's records (the owner keeps the budget; this
// reads the same day's records): nothing when it has no budget.
func (c *statusCommand) budgetLeft(ctx context.Context, st *store.Store, out console.Printer) error {
	s, err := c.conn.picked()
	if err != nil {
		return err
	}
	b, err := s.LocateBudget()
	if err != nil {
		return console.Usagef("%v", err)
	}
	if !b.Set() {
		return nil
	}
	if s.Account == "" {
		return nil // a budget is an account's: none named, none shown
	}
	today, err := st.List(ctx, store.Filter{Account: s.Account, Kind: states.Locate, Since: market.On(c.conn.m.Clock.Now()).Date})
	if err != nil {
		return err
	}
	left := b.Left(today)
	out.Event(map[string]any{"type": "budget", "account": s.Account, "budget": left}, fmt.Sprintf("account %s: %s", s.Account, left))
	return nil
}

// registerLocal declares the flags of a command that reads only the local
// database.
func (c *connFlags) registerLocal(fs *pflag.FlagSet) {
	fs.StringVar(&c.db, "db", "", "SQLite database path or postgres:// URL (env LOCATOR_DB)")
	console.RegisterFormat(fs, &c.format)
}

// localStore opens the local database for reading (store.OpenReader:
// never created, never migrated), refusing one that is not there yet.
func (c *connFlags) localStore(ctx context.Context) (*store.Store, error) {
	path, err := c.dbPath()
	if err != nil {
		return nil, err
	}
	st, err := store.OpenReader(ctx, path, clock.Real{})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, console.Usagef("no database at %s yet (run a locate first, or pass --db)", filepath.Clean(path))
	case errors.Is(err, store.ErrSchemaBehind):
		return nil, console.Usagef("%v", err)
	}
	return st, err
}
