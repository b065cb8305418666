package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/config"
	"github.com/locatorhq/locator/dashboard"
	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/notify"
	"github.com/locatorhq/locator/service"
)

// serveCommand is the long-running owner of one or more accounts: every
// other process (a terminal, the jobs, an execution helper) hands it its
// requests. Accounts sharing a key pair share one client, so one pacer per
// key pair, as the broker's buckets are.
type serveCommand struct {
	conn      connFlags
	config    string
	listen    dashboard.Flags
	ownerHost string
	advertise string
	notify    string
}

func (c *serveCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.listen.Register(fs)
	fs.BoolVar(&c.conn.standby, "standby", false, "stand by for the accounts another serve owns: follow it, and take them over when it goes")
	fs.StringVar(&c.ownerHost, "owner-listen", "", "take the account API's requests from other hosts too, over TLS on HOST or HOST:PORT (default a free port; one for every account owned, named in their leases); they present "+service.OwnerTokenEnv)
	fs.StringVar(&c.advertise, "owner-advertise", "", "the host name other hosts reach --owner-listen at (default: its host)")
	fs.StringVar(&c.notify, "notify", "", `push offers waiting on a person, with signed approve and decline links, to webhooks: a file with run's "notify" block`)
	fs.StringVar(&c.config, "config", "", `accounts to own, JSON: {"accounts":[{"account":"LV100001","keyIdEnv":"LOCATOR_KEY_ID","secretEnv":"LOCATOR_SECRET","env":"live"}]}; default: --account with LOCATOR_KEY_ID/LOCATOR_SECRET`)
}

func (c *serveCommand) run(ctx context.Context, args []string) error {
	if err := c.conn.m.noDump(); err != nil {
		return err
	}
	c.conn.daemon = true
	if c.ownerHost != "" {
		n, err := service.NewNetwork(c.ownerHost, c.advertise, c.conn.m.secretEnv(service.OwnerTokenEnv), service.NetworkLimits{})
		if err != nil {
			return usagef("--owner-listen: %v", err)
		}
		defer n.Close()
		c.conn.network, c.conn.ownerToken = n, n.Token
	}
	accounts, err := c.accounts()
	if err != nil {
		return err
	}
	resolve := func() (config.Settings, error) { return c.conn.resolve(false) }
	if c.config != "" {
		resolve = c.conn.resolveBase // each account names its own key pair
	}
	base, err := resolve()
	if err != nil {
		return err
	}
	log := c.conn.logger()
	notifier, links, err := jobs.OpenNotify(c.notify, c.conn.m.secretEnv, clock.Real{}, log)
	if err != nil {
		return usagef("%v", err)
	}
	defer func() { notifier.Drain(ctx, notify.DrainBound) }()
	c.conn.links, c.conn.notifier = links, notifier
	bound, err := bindListen(&c.listen, c.conn.m, &c.conn)
	if err != nil {
		return err
	}
	defer bound.Close()
	st, err := openStore(ctx, base.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	clients := map[string]*brokerclient.Client{} // one per key pair (at its address): one pacer per key pair
	var cfgs []service.Config
	for _, a := range accounts {
		s, err := base.For(a, c.conn.m.secretEnv)
		if err != nil {
			return usagef("%v", err)
		}
		cfg, err := c.conn.serviceConfig(s, clients, st, "serve", nil, service.RoleDaemon)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, cfg)
	}
	fleet, err := service.OpenFleet(ctx, cfgs)
	if err != nil {
		return err
	}
	defer fleet.Close()
	fleet.Say(ctx, c.conn.m.Stderr)
	web, err := bound.Serve(dashboard.Config{Accounts: fleet.Accounts(), Store: st, Clock: clock.Real{}, Logger: log,
		Links: links.Handler(fleet.ByAccount())}, log, c.conn.m.Stderr)
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
	}
	// A daemon's stop (SIGTERM from systemd or docker, or Ctrl-C) is its
	// normal end, as run's: exit 0, not 130.
	if err := fleet.Wait(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// accounts reads --config, or serves the one account of the flags.
func (c *serveCommand) accounts() ([]config.NamedAccount, error) {
	if c.config == "" {
		s, err := c.conn.resolve(true)
		if err != nil {
			return nil, err
		}
		return []config.NamedAccount{{Account: s.Account, KeyIDEnv: s.KeyVars[0], SecretEnv: s.KeyVars[1], LocateBudget: s.Budget}}, nil
	}
	accounts, err := config.LoadServe(c.config)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return accounts, nil
}

// bindListen binds the dashboard's flags (exit 2 on a bad one, nothing
// sent) and has the broker clients report to its metrics.
func bindListen(l *dashboard.Flags, m *Main, conn *connFlags) (*dashboard.Bound, error) {
	b, err := l.Bind(m.secretEnv(dashboard.TokenEnv))
	if err != nil {
		return nil, usagef("%v", err)
	}
	if b != nil && b.Metrics != nil {
		conn.observe = b.Metrics.ObserveCall
	}
	return b, nil
}
