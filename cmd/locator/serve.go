package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/dashboard"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/serve"
	"github.com/locatorhq/locator/internal/wire"
)

// serveCommand is the long-running owner of one or more accounts: every
// other process (a terminal, the jobs, an execution helper) hands it its
// requests. Accounts sharing a key pair share one client, so one pacer per
// key pair, as the broker's buckets are. With --jobs it also runs the
// jobs of a jobs file on its account: `locator run --config FILE` is that
// daemon by its older name, so one owner code path keeps the accounts
// across a step-down (service.Fleet), with or without schedules. Here are
// its flags and their checks; package serve runs it.
type serveCommand struct {
	conn      connFlags
	config    string
	listen    dashboard.Flags
	ownerHost string
	advertise string
	followers string
	notify    string
	jobs      string
	grace     time.Duration
	// name is the command's name in the callers it records: serve, or run.
	name string

	outMu sync.Mutex
}

func (c *serveCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.listen.Register(fs)
	fs.BoolVar(&c.conn.standby, "standby", false, "stand by for the accounts another serve owns: follow it, and take them over when it goes")
	fs.StringVar(&c.ownerHost, "owner-listen", "", "take the account API's requests from other hosts too, over TLS on HOST or HOST:PORT (default a free port; one for every account owned, named in their leases); they present "+wire.OwnerTokenEnv)
	fs.StringVar(&c.advertise, "owner-advertise", "", "the host name other hosts reach --owner-listen at (default: its host)")
	fs.StringVar(&c.followers, "owner-followers", "", "with --owner-listen, also admit the follower hosts this file lists, one \"HOST EXPIRES\" a line (\"HOST EXPIRES bearer\" also admits the credential as an Authorization: Bearer), each on its own credential (locator owner-credential); read again at each connection, so removing a line revokes that host")
	fs.StringVar(&c.notify, "notify", "", `push offers waiting on a person, with signed approve and decline links, to webhooks: a file with run's "notify" block`)
	fs.StringVar(&c.config, "config", "", `accounts to own, JSON: {"accounts":[{"account":"LV100001","keyIdEnv":"LOCATOR_KEY_ID","secretEnv":"LOCATOR_SECRET","env":"live"}]}; default: --account with LOCATOR_KEY_ID/LOCATOR_SECRET`)
	c.jobsFlags(fs, "jobs")
	c.conn.registerStreamURL(fs, ownerStreamURL)
}

// ownerStreamURL is what --ws-url is to the daemon (serve, run).
const ownerStreamURL = "the broker's stream address ws(s)://host[:port] its owners follow the P&L and portfolio streams at (default: the REST address with ws or wss); a watch of its accounts gets them relayed"

// jobsFlags declares the flags of the daemon's jobs: the file under name
// (serve's --jobs, run's --config) and the grace of a stop.
func (c *serveCommand) jobsFlags(fs *pflag.FlagSet, name string) {
	fs.StringVar(&c.jobs, name, "", "run the jobs of FILE, JSON (see docs/operations.md, The daemon), on the account owned, each run recorded in the database's job_runs")
	fs.DurationVar(&c.grace, "stop-grace", 30*time.Second, "on SIGTERM or Ctrl-C, how long running jobs may finish the step in flight before they are stopped (their workflows resume at the next start)")
}

func (c *serveCommand) run(ctx context.Context, args []string) error {
	if err := c.conn.m.noDump(); err != nil {
		return err
	}
	c.conn.daemon = true
	if c.name == "" {
		c.name = "serve"
	}
	jobsCfg, err := c.loadJobs()
	if err != nil {
		return err
	}
	network, err := c.ownerNetwork()
	if err != nil {
		return err
	}
	if network != nil {
		defer network.Close()
	}
	accounts, err := c.accounts()
	if err != nil {
		return err
	}
	base, err := c.base()
	if err != nil {
		return err
	}
	if jobsCfg != nil && len(accounts) != 1 {
		return console.Usagef("--jobs runs the jobs of one account; --config names %d", len(accounts))
	}
	// With jobs the log says what each run does (info), as run's always has.
	log := c.conn.logger()
	if jobsCfg != nil {
		log = c.conn.daemonLogger(slog.LevelInfo)
	}
	page, err := c.listen.Bind(c.conn.m.secretEnv(dashboard.TokenEnv))
	if err != nil {
		return console.Usagef("%v", err)
	}
	defer page.Close()
	return serve.Run(ctx, serve.Config{Dialer: c.conn.dialer(), Base: base, Accounts: accounts, Secret: c.conn.m.secretEnv,
		Command: c.name, Jobs: jobsCfg, JobsFile: c.jobs, Grace: c.grace, Report: c.report, Notify: c.notify,
		Page: page, Log: log, Say: c.conn.m.Stderr})
}

// ownerNetwork opens the listener processes of other hosts follow this
// owner over (--owner-listen, with --owner-followers): nil without
// --owner-listen.
func (c *serveCommand) ownerNetwork() (*wire.Network, error) {
	if c.ownerHost == "" {
		if c.followers != "" {
			return nil, console.Usagef("--owner-followers needs --owner-listen")
		}
		return nil, nil
	}
	n, err := wire.NewNetwork(c.ownerHost, c.advertise, c.conn.m.secretEnv(wire.OwnerTokenEnv), wire.NetworkLimits{})
	if err != nil {
		return nil, console.Usagef("--owner-listen: %v", err)
	}
	if c.followers != "" {
		if err := n.AllowFollowers(c.followers); err != nil {
			n.Close()
			return nil, console.Usagef("--owner-followers: %v", err)
		}
	}
	c.conn.network, c.conn.ownerToken = n, n.Token
	return n, nil
}

// base resolves the settings the accounts share; with --config each
// account names its own key pair.
func (c *serveCommand) base() (config.Settings, error) {
	if c.config != "" {
		return c.conn.resolveBase()
	}
	return c.conn.resolve(false)
}

// loadJobs reads and checks the whole jobs file, if any, before anything
// is sent.
func (c *serveCommand) loadJobs() (*jobs.Config, error) {
	if c.grace < 0 {
		return nil, console.Usagef("--stop-grace %s: want a duration of zero or more", c.grace)
	}
	if c.jobs == "" {
		return nil, nil
	}
	cfg, err := jobs.LoadConfig(c.jobs)
	if err != nil {
		return nil, console.Usagef("%v", err)
	}
	if c.notify != "" {
		return nil, console.Usagef("--notify: the jobs file's notify block is the daemon's; nothing was sent")
	}
	return cfg, nil
}

// report prints a finished run on stdout: one line, or one JSON object.
func (c *serveCommand) report(r *locator.JobRun) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	console.JobRun(c.conn.out(), r)
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
		return nil, console.Usagef("%v", err)
	}
	return accounts, nil
}
