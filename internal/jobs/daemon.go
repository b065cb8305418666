package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/locatorhq/locator"
)

// Daemon runs the jobs of a config on their schedules (robfig/cron in New
// York time, on the NYSE calendar) until it is stopped, each run recorded
// in job_runs.
type Daemon struct {
	Runner *Runner
	Config *Config
	// Grace is how long running jobs may finish the step in flight once
	// the daemon stops, before they are stopped (their workflows resume at
	// the next start).
	Grace time.Duration
	// Report is told of each finished run (nil: nobody).
	Report func(*locator.JobRun)
}

// Run marks the runs an earlier process left unfinished as failed, then
// schedules every job and runs until ctx ends (a signal: it returns nil)
// or fatal says why the account can no longer be driven (the engine
// stopped, the lease was lost: it returns that). Either way it drains:
// no new runs, and running ones get Grace to finish their step.
func (d *Daemon) Run(ctx context.Context, fatal <-chan error) error {
	r := d.Runner
	log := r.log()
	// No run of this process is in flight yet: rows still "running" were
	// left by a process that died.
	n, err := r.Store.AbandonJobRuns(ctx, r.AccountID,
		"interrupted: the process ended before the run did; its workflows resumed when the daemon started again")
	if err != nil {
		return err
	}
	if n > 0 {
		log.Warn("job runs left unfinished by an earlier process marked failed", "count", n)
	}
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	cl := cronLogger{log}
	cr := cron.New(
		cron.WithLocation(Market),
		cron.WithParser(Parser),
		cron.WithLogger(cl),
		cron.WithChain(cron.Recover(cl), CatchUp(ctx, cl)),
	)
	now := time.Now()
	for _, j := range d.Config.Jobs {
		cr.Schedule(j.Schedule, cron.FuncJob(func() {
			if run, _ := r.Run(jobCtx, j); run != nil && d.Report != nil {
				d.Report(run)
			}
		}))
		log.Info("job scheduled", "job", j.Name, "kind", string(j.Kind), "schedule", j.Schedule.Spec,
			"next", j.Schedule.Next(now).In(Market).Format(time.RFC3339))
	}
	cr.Start()
	log.Info("daemon running", "account", r.AccountID, "jobs", len(d.Config.Jobs), "zone", Market.String())

	var stopErr error
	select {
	case <-ctx.Done():
		log.Info("stopping: no new runs; running jobs finish their current step", "grace", d.Grace)
	case err := <-fatal:
		stopErr = fmt.Errorf("stopping: %w", err)
		log.Error("stopping", "err", err)
	}
	stopped := cr.Stop() // no new runs; done once the running ones return
	r.stopGently(d.Grace, stopped.Done(), cancelJobs)
	log.Info("stopped")
	return stopErr
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
