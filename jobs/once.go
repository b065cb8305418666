package jobs

import (
	"context"
	"time"

	"github.com/locatorhq/locator/store"
)

// RunOnce runs j now, like Run, and stops it gently: when ctx ends (an
// interrupt, a follower withdrawing its request) the run starts nothing new
// and has grace to finish the step in flight before it is stopped; its
// workflows stay in the store and resume with the account's next owner.
// The run is nil only when it could not even be recorded.
func (r *Runner) RunOnce(ctx context.Context, j Job, grace time.Duration) (*store.JobRun, error) {
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	type result struct {
		run *store.JobRun
		err error
	}
	done := make(chan result, 1)
	go func() {
		run, err := r.Run(jobCtx, j)
		done <- result{run, err}
	}()
	select {
	case res := <-done:
		return res.run, res.err
	case <-ctx.Done():
	}
	r.log().Info("stopping: the job starts nothing new and finishes its current step", "job", j.Name, "grace", grace)
	r.Drain()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.run, res.err
	case <-timer.C:
		r.log().Warn("grace period over: stopping the job; its workflows resume at the next start", "job", j.Name)
		cancel()
		res := <-done
		return res.run, res.err
	}
}
