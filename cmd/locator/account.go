package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/config"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// session is a command's account: the account API (service.Handle, the
// same whether this process owns the account or follows its owner), and
// the settings and store it was opened with.
type session struct {
	*service.Handle
	settings config.Settings
	store    *store.Store
}

// open opens the account for command; ask answers the questions of its
// requests at this terminal (nil: nobody can answer here). A daemon
// (serve, run) always owns the account: see service.Open.
func (c *connFlags) open(ctx context.Context, command string, ask func(context.Context, account.Question) bool, role service.Role) (*session, error) {
	s, err := c.resolve(true)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, s.DB)
	if err != nil {
		return nil, err
	}
	cfg, err := c.serviceConfig(s, nil, st, command, ask, role)
	if err == nil {
		var h *service.Handle
		if h, err = service.Open(ctx, cfg); err == nil {
			c.m.opened.Store(h)
			return &session{Handle: h, settings: s, store: st}, nil
		}
	}
	st.Close()
	return nil, err
}

// openStore opens the database at path (a SQLite file, whose folder it
// makes, private) or a Postgres URL.
func openStore(ctx context.Context, path string) (*store.Store, error) {
	if !store.IsPostgres(path) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("database directory: %w", err)
		}
	}
	return store.Open(ctx, path, clock.Real{})
}

// serviceConfig is how this process opens account s on store st for
// command; clients, when given, holds one client per key pair at its
// address, made on first use, so that accounts sharing a key pair share
// its pacer, as the broker's buckets are per key pair.
func (c *connFlags) serviceConfig(s config.Settings, clients map[string]*brokerclient.Client, st *store.Store, command string,
	ask func(context.Context, account.Question) bool, role service.Role) (service.Config, error) {
	clk := clock.Real{}
	client := clients[s.BaseURL+" "+s.KeyID]
	if client == nil {
		var err error
		if client, err = c.client(s, clk); err != nil {
			return service.Config{}, usagef("%v", err)
		}
		if clients != nil {
			clients[s.BaseURL+" "+s.KeyID] = client
		}
	}
	run, err := service.RuntimeDir(c.m.Getenv)
	if err != nil {
		return service.Config{}, usagef("%v", err)
	}
	budget, err := budget(s)
	if err != nil {
		return service.Config{}, err
	}
	host, _ := os.Hostname()
	if c.ownerToken == "" {
		c.ownerToken = c.m.secretEnv(service.OwnerTokenEnv)
	}
	return service.Config{
		OwnerToken: c.ownerToken, Standby: c.standby, NoDump: c.m.NoDump,
		OwnerConfig: service.OwnerConfig{Network: c.network, Offers: c.links.Notifier(s.Account, c.notifier),
			Engine: engine.Config{Client: client, Store: st, Clock: clk, Account: s.Account, Env: s.Env, Logger: c.logger(), Budget: budget,
				// `resume` is run after a crash: no run is still sending
				// the orders it finds unanswered, however recent.
				SettleAllOrders: command == "resume"},
			DB: s.DB, BaseURL: s.BaseURL, RuntimeDir: run, Role: role,
		},
		Caller: account.Caller{Name: fmt.Sprintf("%d@%s %s", os.Getpid(), host, command), Env: s.Env, Ask: ask},
	}, nil
}

// close gives the account up (to the next owner, when this process owned
// it) and closes the store.
func (s *session) close() {
	s.Handle.Close()
	s.store.Close()
}

// budget reads s's locate budget (none when unset), naming where it came
// from when it does not read.
func budget(s config.Settings) (workflow.Budget, error) {
	b, err := workflow.ParseBudget(s.Budget)
	if err != nil {
		return b, usagef("locate budget (%s): %v", s.From["locate-budget"], err)
	}
	return b, nil
}
