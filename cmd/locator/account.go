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
)

// session is a command's account: the account API (service.Handle, the
// same whether this process owns the account or follows its owner), and
// the settings, client and store it was opened with.
type session struct {
	*service.Handle
	settings config.Settings
	client   *brokerclient.Client
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
	return c.openAs(ctx, s, nil, command, ask, role)
}

// openAs is open with settings already resolved (serve's accounts);
// clients, when given, holds one client per key pair at its address, made
// on first use, so that accounts sharing a key pair share its pacer, as
// the broker's buckets are per key pair.
func (c *connFlags) openAs(ctx context.Context, s config.Settings, clients map[string]*brokerclient.Client, command string, ask func(context.Context, account.Question) bool, role service.Role) (*session, error) {
	clk := clock.Real{}
	client := clients[s.BaseURL+" "+s.KeyID]
	if client == nil {
		var err error
		if client, err = c.client(s, clk); err != nil {
			return nil, usagef("%v", err)
		}
		if clients != nil {
			clients[s.BaseURL+" "+s.KeyID] = client
		}
	}
	run, err := service.RuntimeDir(c.m.Getenv)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.DB), 0o700); err != nil {
		return nil, fmt.Errorf("database directory: %w", err)
	}
	st, err := store.Open(ctx, s.DB, clk)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	h, err := service.Open(ctx, service.Config{
		OwnerConfig: service.OwnerConfig{
			Engine: engine.Config{Client: client, Store: st, Clock: clk, Account: s.Account, Env: s.Env, Logger: c.logger(),
				// `resume` is run after a crash: no run is still sending
				// the orders it finds unanswered, however recent.
				SettleAllOrders: command == "resume"},
			DB: s.DB, BaseURL: s.BaseURL, RuntimeDir: run, Role: role,
		},
		Caller: account.Caller{Name: fmt.Sprintf("%d@%s %s", os.Getpid(), host, command), Env: s.Env, Ask: ask},
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &session{Handle: h, settings: s, client: client, store: st}, nil
}

// close gives the account up (to the next owner, when this process owned
// it) and closes the store.
func (s *session) close() {
	s.Handle.Close()
	s.store.Close()
}
