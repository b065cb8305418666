// Package serve is `locator serve` (and `locator run`, its older name
// with schedules): the process that owns accounts (service.Fleet), serves
// their page (dashboard) and, given a jobs file, runs its schedules on its
// one account (jobs.Daemon), until it is stopped. One owner code path with
// or without schedules: the accounts are kept across a step-down.
package serve

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/dashboard"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
)

// Config is one daemon, its flags checked (nothing is sent before Run).
type Config struct {
	// Dialer makes the accounts' owners: accounts sharing a key pair (at
	// one address) share one client, and so one pacer. Run sets its
	// Offers and Observe.
	Dialer *service.Dialer
	// Base is the settings the accounts share (the database, the broker's
	// address); Accounts are the accounts owned, each on its own key pair
	// (Base.For), whose secrets Secret reads.
	Base     config.Settings
	Accounts []config.NamedAccount
	Secret   func(string) string
	// Command is the daemon's name in the callers its owners record:
	// serve, or run.
	Command string
	// Jobs, when set, are the schedules run on the one account (read from
	// JobsFile), and Grace how long running jobs may finish the step in
	// flight once the daemon stops. Report is told of each finished run.
	Jobs     *jobs.Config
	JobsFile string
	Grace    time.Duration
	Report   func(*locator.JobRun)
	// Notify is the file whose "notify" block says who is told of offers
	// waiting on a person, without Jobs (whose own block says it).
	Notify string
	// Page is the dashboard's bound address (nil: no page). Log is the
	// daemon's log; Say is where it tells a person what it owns.
	Page *dashboard.Bound
	Log  *slog.Logger
	Say  io.Writer
}

// Run serves until ctx ends (a stop, SIGTERM or Ctrl-C, is the daemon's
// normal end: nil), or with Jobs until the account is refused (see
// service.Fleet.Wait).
func Run(ctx context.Context, c Config) error {
	clk := c.Dialer.Time()
	notifier, links, err := c.notifications(clk)
	if err != nil {
		return err
	}
	defer func() { notifier.Drain(ctx, notify.DrainBound) }()
	c.Dialer.Offers = func(acct string) func(account.Question) { return links.Notifier(acct, notifier) }
	if c.Page != nil && c.Page.Metrics != nil {
		c.Dialer.Observe = c.Page.Metrics.ObserveCall
	}
	st, err := service.OpenStore(ctx, c.Base.DB, clk)
	if err != nil {
		return err
	}
	defer st.Close()
	cfgs, err := c.configs(st)
	if err != nil {
		return err
	}
	fleet, err := service.OpenFleet(ctx, cfgs)
	if err != nil {
		return err
	}
	defer fleet.Close()
	fleet.Say(ctx, c.Say)
	web, err := c.Page.Serve(dashboard.Config{Accounts: fleet.Accounts(), Clock: clk, Logger: c.Log,
		FeeDays: jobs.DefaultDays, FeeGrace: jobs.DefaultGrace,
		Links: links.Handler(fleet.ByAccount())}, c.Log, c.Say)
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
	}
	if c.Jobs != nil {
		return c.runJobs(ctx, fleet, &jobs.Runner{Account: fleet.Accounts()[0], Client: cfgs[0].Engine.Client,
			Store: st, Clock: clk, AccountID: cfgs[0].Engine.Account, Logger: c.Log, Notifier: notifier})
	}
	if err := fleet.Wait(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// notifications are who the daemon tells of offers waiting on a person
// (and, with jobs, of failed runs and fee problems): the jobs file's
// notify block, else Notify's file; a fault is bad input (exit 2).
func (c *Config) notifications(clk clock.Clock) (*notify.Notifier, *answerlink.Links, error) {
	if c.Jobs != nil {
		notifier, links, err := c.Jobs.Notifications(c.Secret, clk, c.Log)
		if err != nil {
			return nil, nil, console.Usagef("config %s: %v", c.JobsFile, err)
		}
		return notifier, links, nil
	}
	notifier, links, err := jobs.OpenNotify(c.Notify, c.Secret, clk, c.Log)
	if err != nil {
		return nil, nil, console.Usagef("%v", err)
	}
	return notifier, links, nil
}

// configs is how this process opens each account on st, as a daemon.
func (c *Config) configs(st *store.Store) ([]service.Config, error) {
	var cfgs []service.Config
	for _, a := range c.Accounts {
		s, err := c.Base.For(a, c.Secret)
		if err != nil {
			return nil, console.Usagef("%v", err)
		}
		cfg, err := c.Dialer.Config(s, st, c.Command, nil, wire.RoleDaemon, false)
		if err != nil {
			return nil, err
		}
		cfgs = append(cfgs, cfg)
	}
	return cfgs, nil
}

// runJobs runs the jobs file's schedules on the fleet's one account until
// ctx ends, or until that account is refused (see service.Fleet.Wait).
// The runner holds the account as the fleet does (a service.Handle), so
// an owner that steps down and owns again, or that another process
// replaced, keeps the schedules running through whichever owner there is.
func (c *Config) runJobs(ctx context.Context, fleet *service.Fleet, runner *jobs.Runner) error {
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	fatal := make(chan error, 1)
	go func() {
		if err := fleet.Wait(waitCtx); err != nil && waitCtx.Err() == nil {
			fatal <- err
		}
	}()
	d := jobs.Daemon{Runner: runner, Config: c.Jobs, Grace: c.Grace, Report: c.Report}
	return d.Run(ctx, fatal)
}

// RunOnce runs job j of the jobs file config (its bytes: the owner checks
// the same file) now on a, through whichever process owns the account:
// report is told of the run, and notifier (this process's config names
// the webhooks, whichever process ran it) of its failure; the failure is
// the command's end (console.Exit of how it ended).
func RunOnce(ctx context.Context, a account.Account, accountID string, config []byte, j jobs.Job, grace time.Duration,
	report func(*locator.JobRun), notifier *notify.Notifier, log *slog.Logger) error {
	res, err := a.RunJob(ctx, account.JobRequest{Config: config, Job: j.Name, Grace: grace})
	if err != nil {
		return err // the run could not even be recorded
	}
	report(res.Run)
	if res.Failure == nil {
		return nil
	}
	(&jobs.Runner{AccountID: accountID, Logger: log, Notifier: notifier}).NotifyFailure(ctx, j, res.Run, res.Failure)
	return &console.CodeError{Code: console.Exit(res.Failure.End()), Msg: res.Failure.Detail}
}
