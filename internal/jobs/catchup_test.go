package jobs

import (
	"context"
	"testing"

	"github.com/robfig/cron/v3"
)

// blockingJob counts its runs and blocks each until released.
type blockingJob struct {
	started chan int
	release chan struct{}
	runs    int
}

func (b *blockingJob) Run() {
	b.runs++
	b.started <- b.runs
	<-b.release
}

// Ticks that come while a run is going are coalesced into one more
// run right after it, never skipped and never piled up.
func TestCatchUpCoalescesTicks(t *testing.T) {
	b := &blockingJob{started: make(chan int), release: make(chan struct{})}
	job := CatchUp(t.Context(), cron.DiscardLogger)(b)
	done := make(chan struct{})
	go func() { job.Run(); close(done) }()
	if n := <-b.started; n != 1 {
		t.Fatalf("run %d, want 1", n)
	}
	for range 3 { // three ticks while the first run goes: they return at once
		job.Run()
	}
	b.release <- struct{}{}
	if n := <-b.started; n != 2 {
		t.Fatalf("run %d, want 2 (the ticks coalesced into one)", n)
	}
	b.release <- struct{}{}
	<-done
	if b.runs != 2 {
		t.Fatalf("%d runs, want 2", b.runs)
	}
	// Idle again: the next tick runs at once.
	go func() { job.Run() }()
	if n := <-b.started; n != 3 {
		t.Fatalf("run %d, want 3", n)
	}
	b.release <- struct{}{}
}

// A run pending when the daemon stops is dropped.
func TestCatchUpDropsPendingRunOnStop(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	b := &blockingJob{started: make(chan int), release: make(chan struct{})}
	job := CatchUp(ctx, cron.DiscardLogger)(b)
	done := make(chan struct{})
	go func() { job.Run(); close(done) }()
	<-b.started
	job.Run() // pending
	stop()
	b.release <- struct{}{}
	<-done
	if b.runs != 1 {
		t.Fatalf("%d runs, want 1: the pending run was dropped at the stop", b.runs)
	}
}

// panicJob panics on its first run.
type panicJob struct{ runs int }

func (p *panicJob) Run() {
	p.runs++
	if p.runs == 1 {
		panic("boom")
	}
}

// A run that panics does not leave the job marked running for good.
func TestCatchUpRecoversFromPanic(t *testing.T) {
	p := &panicJob{}
	job := cron.Recover(cron.DiscardLogger)(CatchUp(t.Context(), cron.DiscardLogger)(p))
	job.Run()
	job.Run()
	if p.runs != 2 {
		t.Fatalf("%d runs, want 2: the tick after a panic runs", p.runs)
	}
}
