package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/config"
	"github.com/locatorhq/locator/dashboard"
	"github.com/locatorhq/locator/service"
)

// serveCommand is the long-running owner of one or more accounts: every
// other process (a terminal, the jobs, an execution helper) hands it its
// requests. Accounts sharing a key pair share one client, so one pacer per
// key pair, as the broker's buckets are.
type serveCommand struct {
	conn      connFlags
	config    string
	listen    listenFlag
	ownerHost string
	advertise string
}

func (c *serveCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.listen.register(fs)
	fs.BoolVar(&c.conn.standby, "standby", false, "stand by for the accounts another serve owns: follow it, and take them over when it goes")
	fs.StringVar(&c.ownerHost, "owner-listen", "", "take the account API's requests from other hosts too, over TLS on this host's address (a free port per account, named in its lease); they present "+service.OwnerTokenEnv)
	fs.StringVar(&c.advertise, "owner-advertise", "", "the host name other hosts reach --owner-listen at (default: its address)")
	fs.StringVar(&c.config, "config", "", `accounts to own, JSON: {"accounts":[{"account":"LV100001","keyIdEnv":"LOCATOR_KEY_ID","secretEnv":"LOCATOR_SECRET","env":"live"}]}; default: --account with LOCATOR_KEY_ID/LOCATOR_SECRET`)
}

func (c *serveCommand) run(ctx context.Context, args []string) error {
	if err := c.conn.m.noDump(); err != nil {
		return err
	}
	c.conn.daemon = true
	if c.ownerHost != "" {
		token := c.conn.m.secretEnv(service.OwnerTokenEnv)
		if err := service.CheckToken(token); err != nil {
			return usagef("--owner-listen: %v", err)
		}
		c.conn.ownerToken = token
		c.conn.network = &service.Network{Listen: net.JoinHostPort(c.ownerHost, "0"), Advertise: c.advertise, Token: token}
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
	bound, err := c.listen.bind(c.conn.m, &c.conn)
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
	for _, h := range fleet.Handles() {
		if o := h.Owner(); o != nil {
			fmt.Fprintf(c.conn.m.Stderr, "serving %s (pid %d, term %d); other processes hand their requests to %s %s\n", o.Lease().Account, os.Getpid(), o.Lease().Term, o.Lease().Endpoint, o.Lease().Address)
		} else if hello, err := h.Followed(ctx); err == nil && hello != nil {
			fmt.Fprintf(c.conn.m.Stderr, "standing by for %s (pid %d): %s\n", hello.Account, os.Getpid(), hello.Lease)
		}
	}
	web, err := bound.Serve(dashboard.Config{Accounts: fleet.Accounts(), Store: st, Clock: clock.Real{}, Logger: log}, log, c.conn.m.Stderr)
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
	}
	return fleet.Wait(ctx)
}

// accounts reads --config, or serves the one account of the flags.
func (c *serveCommand) accounts() ([]config.NamedAccount, error) {
	if c.config == "" {
		s, err := c.conn.resolve(true)
		if err != nil {
			return nil, err
		}
		return []config.NamedAccount{{Account: s.Account, KeyIDEnv: s.KeyVars[0], SecretEnv: s.KeyVars[1]}}, nil
	}
	accounts, err := config.LoadServe(c.config)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return accounts, nil
}

// listenFlag is --listen of the long-running commands (serve, run): where
// /healthz, /metrics and the dashboard are served, and who may use them.
type listenFlag struct {
	addr           string
	noToken        bool
	certFile       string
	keyFile        string
	trustedProxies []string
	fs             *pflag.FlagSet
}

func (l *listenFlag) register(fs *pflag.FlagSet) {
	l.fs = fs
	fs.StringVar(&l.addr, "listen", dashboard.DefaultAddr, `address of /healthz, /metrics and the dashboard ("" turns them off); beyond loopback it needs --tls-cert/--tls-key or --trusted-proxy`)
	fs.BoolVar(&l.noToken, "dashboard-no-token-on-loopback", false, "serve the dashboard without a token, to every user of this machine (loopback only); by default each start makes a random token and prints its login address")
	fs.StringVar(&l.certFile, "tls-cert", "", "serve the dashboard over TLS with this PEM certificate (with --tls-key)")
	fs.StringVar(&l.keyFile, "tls-key", "", "the PEM private key of --tls-cert")
	fs.StringSliceVar(&l.trustedProxies, "trusted-proxy", nil, "address or CIDR of a TLS proxy in front of the dashboard, whose X-Forwarded-Proto is believed (repeatable)")
}

// bind checks the access flags and binds the address before anything is
// sent (dashboard.Bind), and has the broker clients report to its metrics;
// nil when nothing is to be served. Bad access flags or an address asked
// for that cannot be bound are refused (exit 2, nothing sent).
func (l *listenFlag) bind(m *Main, conn *connFlags) (*dashboard.Bound, error) {
	if l.addr == "" {
		return nil, nil
	}
	proxies, err := dashboard.ParseProxies(l.trustedProxies)
	if err != nil {
		return nil, usagef("--trusted-proxy: %v", err)
	}
	access := dashboard.Access{Token: m.secretEnv(dashboard.TokenEnv), NoToken: l.noToken, CertFile: l.certFile, KeyFile: l.keyFile,
		TrustedProxies: proxies}
	b, err := dashboard.Bind(l.addr, access, l.fs.Changed("listen"))
	switch {
	case errors.Is(err, dashboard.ErrTLSRequired):
		return nil, usagef("--listen %s: %v: pass --tls-cert and --tls-key, or --trusted-proxy", l.addr, err)
	case errors.Is(err, dashboard.ErrTokenRequired):
		return nil, usagef("--listen %s: %v: drop --dashboard-no-token-on-loopback", l.addr, err)
	case err != nil:
		return nil, usagef("--listen %s: %v", l.addr, err)
	}
	if b.Metrics != nil {
		conn.observe = b.Metrics.ObserveCall
	}
	return b, nil
}
