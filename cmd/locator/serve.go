package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
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
	conn   connFlags
	config string
	listen listenFlag
}

func (c *serveCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.listen.register(fs)
	fs.StringVar(&c.config, "config", "", `accounts to own, JSON: {"accounts":[{"account":"LV100001","keyIdEnv":"LOCATOR_KEY_ID","secretEnv":"LOCATOR_SECRET","env":"live"}]}; default: --account with LOCATOR_KEY_ID/LOCATOR_SECRET`)
}

func (c *serveCommand) run(ctx context.Context, args []string) error {
	if err := c.conn.m.noDump(); err != nil {
		return err
	}
	c.conn.daemon = true
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
	metrics, err := c.listen.prepare(c.conn.m, &c.conn)
	if err != nil {
		return err
	}
	defer c.listen.release()
	clients := map[string]*brokerclient.Client{} // one per key pair (at its address): one pacer per key pair
	var sessions []*session
	defer func() {
		for _, s := range sessions {
			s.close()
		}
	}()
	for _, a := range accounts {
		s, err := base.For(a, c.conn.m.secretEnv)
		if err != nil {
			return usagef("%v", err)
		}
		sess, err := c.conn.openAs(ctx, s, clients, "serve", nil, service.RoleDaemon)
		if err != nil {
			return err
		}
		sessions = append(sessions, sess)
		fmt.Fprintf(c.conn.m.Stderr, "serving %s (pid %d); other processes hand their requests to %s\n", s.Account, os.Getpid(), sess.Owner().Lease().Endpoint)
	}
	served := make([]account.Account, len(sessions))
	fatal := make(chan error, len(sessions))
	for i, s := range sessions {
		served[i] = s
		go func() {
			if err, ok := <-s.Owner().Fatal(); ok {
				fatal <- err
			}
		}()
	}
	web, err := c.listen.start(c.conn.m, log, dashboard.Config{Accounts: served, Store: sessions[0].store, Metrics: metrics, Clock: clock.Real{}, Logger: log})
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-fatal:
		return err
	}
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
	ln             net.Listener // bound by prepare, served by start
	// taken is why prepare could not bind the default address; start
	// warns of it, where it always has.
	taken error
}

func (l *listenFlag) register(fs *pflag.FlagSet) {
	l.fs = fs
	fs.StringVar(&l.addr, "listen", dashboard.DefaultAddr, `address of /healthz, /metrics and the dashboard ("" turns them off); beyond loopback it needs --tls-cert/--tls-key or --trusted-proxy`)
	fs.BoolVar(&l.noToken, "dashboard-no-token-on-loopback", false, "serve the dashboard without a token, to every user of this machine (loopback only); by default each start makes a random token and prints its login address")
	fs.StringVar(&l.certFile, "tls-cert", "", "serve the dashboard over TLS with this PEM certificate (with --tls-key)")
	fs.StringVar(&l.keyFile, "tls-key", "", "the PEM private key of --tls-cert")
	fs.StringSliceVar(&l.trustedProxies, "trusted-proxy", nil, "address or CIDR of a TLS proxy in front of the dashboard, whose X-Forwarded-Proto is believed (repeatable)")
}

// access is the dashboard's Access from the flags and LOCATOR_DASHBOARD_TOKEN.
func (l *listenFlag) access(m *Main) (dashboard.Access, error) {
	proxies, err := dashboard.ParseProxies(l.trustedProxies)
	if err != nil {
		return dashboard.Access{}, usagef("--trusted-proxy: %v", err)
	}
	return dashboard.Access{Token: m.secretEnv(dashboard.TokenEnv), NoToken: l.noToken, CertFile: l.certFile, KeyFile: l.keyFile,
		TrustedProxies: proxies}, nil
}

// prepare checks the access flags and binds the address before anything
// is sent, and makes the registry the broker clients report to, when
// anything is to be served. The default address taken (another locator on
// this machine) is not worth stopping a daemon for: it warns and goes on
// without; an address asked for must be served, and bad access flags are
// refused (exit 2, nothing sent).
func (l *listenFlag) prepare(m *Main, conn *connFlags) (*dashboard.Metrics, error) {
	if l.addr == "" {
		return nil, nil
	}
	access, err := l.access(m)
	if err != nil {
		return nil, err
	}
	ln, err := dashboard.Listen(l.addr, access)
	var bind *net.OpError
	switch {
	case errors.Is(err, dashboard.ErrTLSRequired):
		return nil, usagef("--listen %s: %v: pass --tls-cert and --tls-key, or --trusted-proxy", l.addr, err)
	case errors.Is(err, dashboard.ErrTokenRequired):
		return nil, usagef("--listen %s: %v: drop --dashboard-no-token-on-loopback", l.addr, err)
	case err != nil && (l.fs.Changed("listen") || !errors.As(err, &bind)):
		return nil, usagef("--listen %s: %v", l.addr, err)
	case err != nil:
		l.taken = err
		return nil, nil
	}
	l.ln = ln
	metrics := dashboard.NewMetrics()
	conn.observe = metrics.ObserveCall
	return metrics, nil
}

// release closes the listener prepare bound when start never took it.
func (l *listenFlag) release() {
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
}

// start serves the dashboard on the listener prepare bound, if any, and
// prints its login address once (with a token made for this start, the
// token itself, as notebook servers do); it warns when the default address
// was taken.
func (l *listenFlag) start(m *Main, log *slog.Logger, cfg dashboard.Config) (*dashboard.Server, error) {
	if l.taken != nil {
		log.Warn("dashboard not served (pass --listen ADDR, or --listen '' to turn it off)", "err", l.taken)
	}
	if l.ln == nil {
		return nil, nil
	}
	ln := l.ln
	l.ln = nil // the server's now: Start or Close closes it
	access, err := l.access(m)
	if err != nil {
		ln.Close()
		return nil, err
	}
	cfg.Access = access
	srv, err := dashboard.New(cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	addr, err := srv.Start(ln)
	if err != nil {
		srv.Close()
		return nil, err
	}
	fmt.Fprintf(m.Stderr, "dashboard: open %s (health /healthz, metrics /metrics)\n", srv.LoginAddress(addr))
	return srv, nil
}
