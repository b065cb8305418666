package clock

import (
	"context"
	"errors"
	"time"
)

// Clock tells the time and makes timers on that time.
type Clock interface {
	// Now returns the current instant on this clock.
	Now() time.Time
	// NewTimer returns a timer that fires once d has elapsed on this clock.
	NewTimer(d time.Duration) Timer
}

// Timer is a single-shot timer on a Clock.
type Timer interface {
	// C delivers the clock's time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was still pending.
	Stop() bool
}

// Sleep waits for d on c, returning early with ctx's error if ctx ends first.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// WithDeadline is context.WithDeadline on clock c: the context ends when c
// reaches deadline, so a fake or scaled clock governs it like the rest.
func WithDeadline(ctx context.Context, c Clock, deadline time.Time) (context.Context, context.CancelFunc) {
	if _, ok := c.(Real); ok {
		return context.WithDeadline(ctx, deadline)
	}
	inner, cancel := context.WithCancelCause(ctx)
	t := c.NewTimer(deadline.Sub(c.Now()))
	go func() {
		select {
		case <-t.C():
			cancel(context.DeadlineExceeded)
		case <-inner.Done():
			t.Stop()
		}
	}()
	return deadlineCtx{Context: inner, deadline: deadline}, func() { cancel(context.Canceled) }
}

// deadlineCtx reports its clock deadline and, once it has passed,
// DeadlineExceeded, as a context from context.WithDeadline does.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (d deadlineCtx) Deadline() (time.Time, bool) { return d.deadline, true }

func (d deadlineCtx) Err() error {
	err := d.Context.Err()
	if err != nil && errors.Is(context.Cause(d.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}
