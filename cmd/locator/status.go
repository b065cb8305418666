package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/store"
)

// statusCommand shows workflows from the local database; it sends nothing.
type statusCommand struct {
	conn  connFlags
	limit int
}

func (c *statusCommand) synopsis() string {
	return "list recent workflows, or one workflow with its transitions (local, sends nothing)"
}

func (c *statusCommand) flags(fs *pflag.FlagSet) {
	c.conn.registerLocal(fs)
	fs.IntVar(&c.limit, "limit", 20, "how many recent workflows to list")
}

func (c *statusCommand) run(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return usagef("want at most one workflow ID")
	}
	st, err := c.conn.localStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	out := c.conn.out()
	if len(args) == 1 {
		w, err := st.Get(ctx, args[0])
		if errors.Is(err, store.ErrNotFound) {
			w, err = st.ByQuoteReqID(ctx, args[0])
		}
		if errors.Is(err, store.ErrNotFound) {
			return usagef("no workflow %s", args[0])
		}
		if err != nil {
			return err
		}
		log, err := st.Transitions(ctx, w.ID)
		if err != nil {
			return err
		}
		out.Event(console.OutcomeOf(w), fmt.Sprintf("%s  %s %s %d  %s  quoteReqID %s  %s", w.ID, w.Kind, w.Symbol, w.Requested, w.State, w.QuoteReqID, w.Reason))
		var rows [][]string
		var objs []any
		for _, t := range log {
			rows = append(rows, []string{t.At.Local().Format(time.DateTime), string(t.From), string(t.To), string(t.Event), t.Reason})
			objs = append(objs, map[string]any{"at": t.At, "from": t.From, "to": t.To, "event": t.Event, "reason": t.Reason, "row": t.RawRow})
		}
		out.Table([]string{"AT", "FROM", "TO", "EVENT", "REASON"}, rows, objs)
		return nil
	}
	if err := c.owners(ctx, st, out); err != nil {
		return err
	}
	ws, err := st.List(ctx, store.Filter{Limit: c.limit})
	if err != nil {
		return err
	}
	var rows [][]string
	var objs []any
	for _, w := range ws {
		o := console.OutcomeOf(w)
		rows = append(rows, []string{w.ID, w.CreatedAt.Local().Format(time.DateTime), string(w.Kind), w.Account, w.Symbol,
			strconv.FormatInt(w.Requested, 10), strconv.FormatInt(w.Quantity, 10), o.PricePerShare, string(w.State), w.Asker, w.Reason})
		objs = append(objs, o)
	}
	out.Table([]string{"ID", "CREATED", "KIND", "ACCOUNT", "SYMBOL", "ASKED", "SENT", "PRICE", "STATE", "ASKED BY", "REASON"}, rows, objs)
	return nil
}

// owners says which process owns each account (docs/design.md rule 3), live or
// lapsed.
func (c *statusCommand) owners(ctx context.Context, st *store.Store, out console.Printer) error {
	leases, err := st.Leases(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, l := range leases {
		state := "live"
		if !l.Expires.After(now) {
			state = "lapsed"
		}
		out.Event(map[string]any{"owner": map[string]any{"account": l.Account, "pid": l.PID, "host": l.Host, "since": l.Since, "heartbeat": l.Heartbeat, "state": state}},
			fmt.Sprintf("account %s: owned by pid %d on %s since %s (%s, last heartbeat %s)", l.Account, l.PID, l.Host,
				l.Since.Local().Format(time.DateTime), state, l.Heartbeat.Local().Format(time.TimeOnly)))
	}
	return nil
}

// registerLocal declares the flags of a command that reads only the local
// database.
func (c *connFlags) registerLocal(fs *pflag.FlagSet) {
	fs.StringVar(&c.db, "db", "", "SQLite database path (env LOCATOR_DB)")
	console.RegisterFormat(fs, &c.format)
}

// localStore opens the local database for reading, refusing to create one
// that is not there yet.
func (c *connFlags) localStore(ctx context.Context) (*store.Store, error) {
	path, err := c.dbPath()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, usagef("no database at %s yet (run a locate first, or pass --db)", filepath.Clean(path))
	}
	return store.Open(ctx, path, clock.Real{})
}
