package main

import (
	"context"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/wire"
)

// session is a command's account: the account API (service.Handle, the
// same whether this process owns the account or follows its owner), and
// the settings it was opened with.
type session struct {
	*service.Opened
	settings config.Settings
}

// open opens the account for command; ask answers the questions of its
// requests at this terminal (nil: nobody can answer here). A daemon
// (serve, run) always owns the account: see service.Open.
func (c *connFlags) open(ctx context.Context, command string, ask func(context.Context, account.Question) bool, role wire.Role) (*session, error) {
	s, err := c.resolve(true)
	if err != nil {
		return nil, err
	}
	// `resume` is run after a crash: no run is still sending the orders it
	// finds unanswered, however recent.
	o, err := c.dialer().Open(ctx, s, command, ask, role, command == "resume")
	if err != nil {
		return nil, err
	}
	c.m.opened.Store(o.Handle)
	return &session{Opened: o, settings: s}, nil
}

// dialer is how this command opens accounts and makes broker clients
// (service.Dialer): made on first use, from the flags and what serve set
// (its network, its metrics, its offers' notifications).
func (c *connFlags) dialer() *service.Dialer {
	if c.dial != nil {
		return c.dial
	}
	if c.ownerToken == "" {
		c.ownerToken = c.m.secretEnv(wire.OwnerTokenEnv)
	}
	c.dial = &service.Dialer{Getenv: c.m.Getenv, Logger: c.logger(), Clock: c.m.Clock,
		OwnerToken: c.ownerToken, NoDump: c.m.NoDump, Standby: c.standby, Network: c.network, StreamURL: c.streamURL}
	return c.dial
}
