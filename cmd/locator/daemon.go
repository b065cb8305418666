package main

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/dashboard"
	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/notify"
	"github.com/locatorhq/locator/service"
)

// runCommand is the daemon: one engine for the account and a robfig cron
// scheduler firing the jobs of a config file (see the README for the
// format), each run recorded in the database's job_runs.
type runCommand struct {
	conn   connFlags
	config string
	once   string
	grace  time.Duration
	listen dashboard.Flags

	outMu sync.Mutex
}

func (c *runCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.listen.Register(fs)
	fs.StringVar(&c.config, "config", "", "the jobs, a JSON file (see the README)")
	fs.StringVar(&c.once, "once", "", "run the job named JOB now, once, and exit with its outcome")
	fs.DurationVar(&c.grace, "stop-grace", 30*time.Second, "on SIGTERM or Ctrl-C, how long running jobs may finish the step in flight before they are stopped (their workflows resume at the next start)")
}

func (c *runCommand) run(ctx context.Context, args []string) error {
	if err := c.conn.m.noDump(); err != nil {
		return err
	}
	if c.config == "" {
		return usagef("--config FILE is required")
	}
	if c.grace < 0 {
		return usagef("--stop-grace %s: want a duration of zero or more", c.grace)
	}
	// The whole config is checked before anything is sent.
	cfg, err := jobs.LoadConfig(c.config)
	if err != nil {
		return usagef("%v", err)
	}
	var only jobs.Job
	if c.once != "" {
		if only, err = cfg.Job(c.once); err != nil {
			return usagef("--once: %s: %v", c.config, err)
		}
	}
	c.conn.daemon = true
	log := c.conn.daemonLogger(slog.LevelInfo)
	notifier, links, err := cfg.Notifications(c.conn.m.secretEnv, clock.Real{}, log)
	if err != nil {
		return usagef("config %s: %v", c.config, err)
	}
	defer func() { notifier.Drain(ctx, c.grace) }()
	if c.once != "" {
		return c.runOnce(ctx, only, notifier, log)
	}
	bound, err := bindListen(&c.listen, c.conn.m, &c.conn)
	if err != nil {
		return err
	}
	defer bound.Close()
	c.conn.links, c.conn.notifier = links, notifier // offers waiting on a person
	sess, err := c.conn.open(ctx, "run", nil, service.RoleDaemon)
	if err != nil {
		return err
	}
	defer sess.close()
	web, err := bound.Serve(dashboard.Config{Accounts: []account.Account{sess}, Store: sess.store, Clock: clock.Real{}, Logger: log,
		Links: links.Handler(map[string]account.Account{sess.settings.Account: sess})}, log, c.conn.m.Stderr)
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
	}
	runner := sess.Owner().Local().Runner(sess.Caller().Name, notifier)
	runner.Logger = log // the daemon's log, on by default
	d := jobs.Daemon{Runner: runner, Config: cfg, Grace: c.grace, Report: c.report}
	return d.Run(ctx, sess.Owner().Fatal())
}

// runOnce runs one job now, in this process when it owns the account for
// the run, else in the owner's (which checks the same config). A signal
// drains it: it starts nothing new and has the grace period to finish what
// is in flight before it is stopped.
func (c *runCommand) runOnce(ctx context.Context, j jobs.Job, notifier *notify.Notifier, log *slog.Logger) error {
	config, err := os.ReadFile(c.config)
	if err != nil {
		return usagef("config: %v", err)
	}
	sess, err := c.conn.open(ctx, "run --once "+j.Name, nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	res, err := sess.RunJob(ctx, account.JobRequest{Config: config, Job: j.Name, Grace: c.grace})
	if err != nil {
		return err // the run could not even be recorded
	}
	c.report(res.Run)
	if res.Failure == nil {
		return nil
	}
	// This process's config names the webhooks, whichever process ran it.
	(&jobs.Runner{AccountID: sess.settings.Account, Logger: log, Notifier: notifier}).NotifyFailure(ctx, j, res.Run, res.Failure)
	return &exitError{code: res.Failure.Exit(), msg: res.Failure.Detail}
}

// report prints a finished run on stdout: one line, or one JSON object.
func (c *runCommand) report(r *locator.JobRun) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	console.JobRun(c.conn.out(), r)
}
