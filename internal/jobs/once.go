package jobs

import (
	"context"
	"time"

	"github.com/locatorhq/locator"
)

// RunOnce runs j now, like Run, and stops it gently: when ctx ends (an
// interrupt, a follower withdrawing its request) the run starts nothing new
// and has grace to finish the step in flight before it is stopped; its
// workflows stay in the store and resume with the account's next owner.
// The run is nil only when it could not even be recorded.
func (r *Runner) RunOnce(ctx context.Context, j Job, grace time.Duration) (*locator.JobRun, error) {
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var run *locator.JobRun
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		run, err = r.Run(jobCtx, j)
	}()
	select {
	case <-done:
		return run, err
	case <-ctx.Done():
	}
	r.log().Info("stopping: the job starts nothing new and finishes its current step", "job", j.Name, "grace", grace)
	r.stopGently(grace, done, cancel)
	return run, err
}

// stopGently tells the bodies to start nothing new and waits until done is
// closed, stopping the work (cancel) once grace has passed: the one way a
// run or the daemon stops gently.
func (r *Runner) stopGently(grace time.Duration, done <-chan struct{}, cancel func()) {
	r.Drain()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		r.log().Warn("grace period over: stopping running jobs; their workflows resume at the next start")
		cancel()
		<-done
	}
}
