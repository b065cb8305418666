package jobs

import (
	"context"
	"sync"

	"github.com/robfig/cron/v3"
)

// CatchUp is the cron wrapper for jobs whose run may outlast their interval
// (a locate waiting out the broker's 30-second same-symbol spacing behind a
// hand-run quote outlasts a 20-second schedule): a tick that comes while
// the job still runs is neither skipped (robfig's SkipIfStillRunning loses
// it) nor queued one goroutine a tick (DelayIfStillRunning piles them up),
// but coalesced: the job runs once more as soon as the current run ends,
// however many ticks came meanwhile. Once ctx ends (the daemon stops) a
// pending run is dropped.
func CatchUp(ctx context.Context, log cron.Logger) cron.JobWrapper {
	return func(j cron.Job) cron.Job {
		var mu sync.Mutex
		running, again := false, false
		return cron.FuncJob(func() {
			mu.Lock()
			if running {
				if !again {
					log.Info("delayed", "reason", "the previous run is still going; it runs again when that one ends")
				}
				again = true
				mu.Unlock()
				return
			}
			running = true
			mu.Unlock()
			finished := false
			defer func() { // a panic: the next tick starts afresh
				if !finished {
					mu.Lock()
					running, again = false, false
					mu.Unlock()
				}
			}()
			for {
				j.Run()
				mu.Lock()
				if !again || ctx.Err() != nil {
					running, again, finished = false, false, true
					mu.Unlock()
					return
				}
				again = false
				mu.Unlock()
			}
		})
	}
}
