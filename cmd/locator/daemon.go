package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/dashboard"
	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/notify"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
)

// runCommand is the daemon: one engine for the account and a robfig cron
// scheduler firing the jobs of a config file (see the README for the
// format), each run recorded in the database's job_runs.
type runCommand struct {
	conn   connFlags
	config string
	once   string
	grace  time.Duration
	listen listenFlag

	outMu sync.Mutex
}

func (c *runCommand) synopsis() string {
	return "the daemon (--config FILE [--once JOB]): scheduled locates, credit-backs, ledger syncs, reconciliation"
}

func (c *runCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.listen.register(fs)
	fs.StringVar(&c.config, "config", "", "the jobs, a JSON file (see the README)")
	fs.StringVar(&c.once, "once", "", "run the job named JOB now, once, and exit with its outcome")
	fs.DurationVar(&c.grace, "stop-grace", 30*time.Second, "on SIGTERM or Ctrl-C, how long running jobs may finish the step in flight before they are stopped (their workflows resume at the next start)")
}

func (c *runCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q: the jobs come from --config", args[0])
	}
	if c.config == "" {
		return usagef("--config FILE is required")
	}
	if c.grace < 0 {
		return usagef("--stop-grace %s: want a duration of zero or more", c.grace)
	}
	// The whole config is checked before anything is sent.
	cfg, err := loadConfig(c.config)
	if err != nil {
		return err
	}
	var only jobs.Job
	if c.once != "" {
		var ok bool
		if only, ok = cfg.Job(c.once); !ok {
			var names []string
			for _, j := range cfg.Jobs {
				names = append(names, j.Name)
			}
			return usagef("--once %q: no such job in %s (jobs: %s)", c.once, c.config, strings.Join(names, ", "))
		}
	}
	c.conn.daemon = true
	log := c.conn.daemonLogger(slog.LevelInfo)
	// Webhook URLs are secrets: the config names the variables that hold them.
	lookup := func(k string) (string, bool) { v := c.conn.m.Getenv(k); return v, v != "" }
	notifier, err := notify.New(notify.Config{Webhooks: cfg.Webhooks, LookupEnv: lookup, Clock: clock.Real{}, Logger: log})
	if err != nil {
		return usagef("config %s: %v", c.config, err)
	}
	defer func() {
		// What failed runs queued is delivered first: each delivery is
		// bounded by its timeout and retries, and all of them by the grace
		// after a signal, or by notifyDrain otherwise (an unreachable
		// webhook must not hold the exit for its whole queue).
		bound := notifyDrain
		if ctx.Err() != nil {
			bound = c.grace
		}
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
		defer cancel()
		notifier.Close(nctx)
	}()
	if c.once != "" {
		return c.runOnce(ctx, only, notifier, log)
	}
	metrics, err := c.listen.prepare(c.conn.m, &c.conn)
	if err != nil {
		return err
	}
	defer c.listen.release()
	acct, err := c.conn.own(ctx, "run")
	if err != nil {
		return err
	}
	defer acct.close()
	web, err := c.listen.start(c.conn.m, log, dashboard.Config{Owners: []*service.Owner{acct.owner}, Store: acct.store,
		Metrics: metrics, Clock: clock.Real{}, Logger: log})
	if err != nil {
		return err
	}
	if web != nil {
		defer web.Close()
	}
	return c.daemon(ctx, acct.runner(log, notifier), cfg, acct, log)
}

// notifyDrain bounds the delivery of queued notifications at an exit not
// asked for by a signal: one webhook's three tries with their timeouts.
const notifyDrain = time.Minute

// loadConfig reads and checks the config file; any fault is a usage error
// (exit 2) naming the file and line.
func loadConfig(path string) (*jobs.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("config: %v", err)
	}
	cfg, err := jobs.ParseConfig(data)
	if err != nil {
		var ce *jobs.ConfigError
		if errors.As(err, &ce) {
			return nil, usagef("config %s:%d: %s", path, ce.Line, ce.Msg)
		}
		return nil, usagef("config %s: %v", path, err)
	}
	return cfg, nil
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
	acct, err := c.conn.attach(ctx, "run --once "+j.Name, nil, nil)
	if err != nil {
		return err
	}
	defer acct.close()
	run, err := acct.RunJob(ctx, config, j, c.grace, notifier, log)
	if run == nil {
		return err // the run could not even be recorded
	}
	c.report(run)
	return exitForRun(err)
}

// exitForRun maps a run's outcome to the exit-code contract: 0 ok; for a
// run that failed on its workflows, 4 when the worst was a policy decline, 3
// when the broker rejected, expired or cancelled; 3 for a reconciliation
// with problems, as `locator fees` exits on the same check; 1 otherwise (an
// error, an interruption).
func exitForRun(err error) error {
	if err == nil {
		return nil
	}
	var f *jobs.Failure
	if errors.As(err, &f) && !f.Interrupted {
		if len(f.FeeProblems) > 0 {
			return &exitError{code: exitBroker, msg: f.Detail}
		}
		switch f.Worst {
		case states.Declined:
			return &exitError{code: exitDeclined, msg: f.Detail}
		case states.Rejected, states.Expired, states.Canceled:
			return &exitError{code: exitBroker, msg: f.Detail}
		}
	}
	return &exitError{code: exitFailure, msg: err.Error()}
}

// daemon schedules every job and runs until ctx ends (SIGTERM, Ctrl-C) or
// the engine stops on an error it cannot recover from.
func (c *runCommand) daemon(ctx context.Context, runner *jobs.Runner, cfg *jobs.Config, acct *account, log *slog.Logger) error {
	eng, _ := acct.Engine()
	// No run of this process is in flight yet: rows still "running" were
	// left by a process that died.
	if n, err := acct.store.AbandonJobRuns(ctx, acct.settings.account,
		"interrupted: the process ended before the run did; its workflows resumed when the daemon started again"); err != nil {
		return err
	} else if n > 0 {
		log.Warn("job runs left unfinished by an earlier process marked failed", "count", n)
	}
	if acct.settings.auth == authPartner {
		// A daemon may idle for longer than a refresh token lives: renew
		// each pair on its own schedule, not at the next job's first call.
		go func() {
			if err := acct.client.Partner.KeepRenewed(ctx); err != nil && ctx.Err() == nil {
				log.Error("partner token renewal stopped; run 'locator login --partner' again", "err", err)
			}
		}()
	}
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	cl := cronLogger{log}
	cr := cron.New(
		cron.WithLocation(jobs.Market),
		cron.WithParser(jobs.Parser),
		cron.WithLogger(cl),
		cron.WithChain(cron.Recover(cl), jobs.CatchUp(ctx, cl)),
	)
	now := time.Now()
	for _, j := range cfg.Jobs {
		cr.Schedule(j.Schedule, cron.FuncJob(func() {
			if run, _ := runner.Run(jobCtx, j); run != nil {
				c.report(run)
			}
		}))
		log.Info("job scheduled", "job", j.Name, "kind", string(j.Kind), "schedule", j.Schedule.Spec,
			"next", j.Schedule.Next(now).In(jobs.Market).Format(time.RFC3339))
	}
	cr.Start()
	log.Info("daemon running", "account", acct.settings.account, "jobs", len(cfg.Jobs), "zone", jobs.Market.String())

	var stopErr error
	select {
	case <-ctx.Done():
		log.Info("stopping: no new runs; running jobs finish their current step", "grace", c.grace)
	case err := <-eng.Err():
		stopErr = fmt.Errorf("the engine stopped: %w", err)
		log.Error("stopping: the engine stopped", "err", err)
	case <-acct.owner.Lost():
		stopErr = fmt.Errorf("the account's lease was lost (this process stalled past it): another process owns it now")
		log.Error("stopping: lease lost")
	}
	stopped := cr.Stop() // no new runs; done once the running ones return
	runner.Drain()
	timer := time.NewTimer(c.grace)
	defer timer.Stop()
	select {
	case <-stopped.Done():
	case <-timer.C:
		log.Warn("grace period over: stopping running jobs; their workflows resume at the next start")
		cancelJobs()
		<-stopped.Done()
	}
	log.Info("stopped")
	return stopErr
}

// runJSON is a job run as printed with --json.
type runJSON struct {
	ID        int64  `json:"id"`
	Job       string `json:"job"`
	Kind      string `json:"kind"`
	Account   string `json:"account"`
	StartedAt string `json:"startedAt"`
	EndedAt   string `json:"endedAt,omitempty"`
	Outcome   string `json:"outcome"`
	Detail    string `json:"detail"`
}

// runJSONOf is r as printed with --json; a run still going has no endedAt.
func runJSONOf(r store.JobRun) runJSON {
	o := runJSON{ID: r.ID, Job: r.Job, Kind: r.Kind, Account: r.Account, Outcome: string(r.Outcome), Detail: r.Detail,
		StartedAt: r.StartedAt.UTC().Format(time.RFC3339Nano)}
	if !r.EndedAt.IsZero() {
		o.EndedAt = r.EndedAt.UTC().Format(time.RFC3339Nano)
	}
	return o
}

// report prints a finished run on stdout: one line, or one JSON object.
func (c *runCommand) report(r *store.JobRun) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	c.conn.out().event(runJSONOf(*r), fmt.Sprintf("%s %s (run %d, %s, %s): %s", r.Job, r.Outcome, r.ID,
		r.StartedAt.In(jobs.Market).Format("2006-01-02 15:04:05 MST"), r.EndedAt.Sub(r.StartedAt).Round(time.Millisecond), r.Detail))
}

// cronLogger adapts slog to robfig's logger: its chatter (schedule, wake,
// run) is debug; a run delayed behind the previous one is info, since it
// means a job outlasted its interval.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) {
	if msg == "delayed" {
		l.log.Info("run delayed: the job's previous run is still going", kv...)
		return
	}
	l.log.Debug("cron "+msg, kv...)
}

func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron "+msg, append([]any{"err", err}, kv...)...)
}
