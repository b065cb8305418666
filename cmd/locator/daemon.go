package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/internal/serve"
	"github.com/locatorhq/locator/internal/wire"
)

// runCommand is `locator run`: the daemon with schedules by its older
// name (serve --jobs FILE, one account: the same owner code path), or,
// with --once, one run of one job now, through the account's owner.
type runCommand struct {
	serve serveCommand
	once  string
}

func (c *runCommand) flags(fs *pflag.FlagSet) {
	c.serve.conn.register(fs)
	c.serve.listen.Register(fs)
	c.serve.jobsFlags(fs, "config")
	c.serve.conn.registerStreamURL(fs, ownerStreamURL)
	fs.StringVar(&c.once, "once", "", "run the job named JOB now, once, and exit with its outcome")
}

func (c *runCommand) run(ctx context.Context, args []string) error {
	if c.once == "" && c.serve.jobs != "" {
		c.serve.name = "run"
		return c.serve.run(ctx, args) // which hardens the process first
	}
	if err := c.serve.conn.m.noDump(); err != nil {
		return err
	}
	if c.serve.jobs == "" {
		return console.Usagef("--config FILE is required")
	}
	if c.serve.grace < 0 {
		return console.Usagef("--stop-grace %s: want a duration of zero or more", c.serve.grace)
	}
	// The whole config is checked before anything is sent.
	cfg, err := jobs.LoadConfig(c.serve.jobs)
	if err != nil {
		return console.Usagef("%v", err)
	}
	only, err := cfg.Job(c.once)
	if err != nil {
		return console.Usagef("--once: %s: %v", c.serve.jobs, err)
	}
	c.serve.conn.daemon = true
	log := c.serve.conn.daemonLogger(slog.LevelInfo)
	notifier, _, err := cfg.Notifications(c.serve.conn.m.secretEnv, c.serve.conn.m.Clock, log)
	if err != nil {
		return console.Usagef("config %s: %v", c.serve.jobs, err)
	}
	defer func() { notifier.Drain(ctx, c.serve.grace) }()
	return c.runOnce(ctx, only, notifier, log)
}

// runOnce runs one job now, in this process when it owns the account for
// the run, else in the owner's (serve.RunOnce). A signal
// drains it: it starts nothing new and has the grace period to finish what
// is in flight before it is stopped.
func (c *runCommand) runOnce(ctx context.Context, j jobs.Job, notifier *notify.Notifier, log *slog.Logger) error {
	config, err := os.ReadFile(c.serve.jobs)
	if err != nil {
		return console.Usagef("config: %v", err)
	}
	sess, err := c.serve.conn.open(ctx, "run --once "+j.Name, nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	return serve.RunOnce(ctx, sess, sess.settings.Account, config, j, c.serve.grace, c.serve.report, notifier, log)
}
