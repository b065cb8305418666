package clock_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/clock"
)

var t0 = time.Date(2025, 3, 10, 14, 30, 0, 0, time.UTC)

// recv waits for a value on ch, failing the test if none comes within a
// generous wall-clock bound (a safety net for a broken hand-off, never a way
// to wait out a time window).
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// fired reports whether tm has fired, without waiting, and the time it sent.
func fired(tm clock.Timer) (time.Time, bool) {
	select {
	case v := <-tm.C():
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeAdvanceFiresDueTimers(t *testing.T) {
	t.Parallel()
	deadlines := []time.Duration{3 * time.Second, time.Second, 2 * time.Second}
	tests := []struct {
		name    string
		advance time.Duration
		want    []bool // fired, per deadline
	}{
		{"before any", 999 * time.Millisecond, []bool{false, false, false}},
		{"exactly the first", time.Second, []bool{false, true, false}},
		{"between", 2500 * time.Millisecond, []bool{false, true, true}},
		{"exactly the last", 3 * time.Second, []bool{true, true, true}},
		{"far past", time.Hour, []bool{true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewFake(t0)
			timers := make([]clock.Timer, len(deadlines))
			for i, d := range deadlines {
				timers[i] = clk.NewTimer(d)
			}
			clk.Advance(tt.advance)
			if got, want := clk.Now(), t0.Add(tt.advance); !got.Equal(want) {
				t.Errorf("Now() = %v, want %v", got, want)
			}
			got := make([]bool, len(timers))
			pending := 0
			for i, tm := range timers {
				v, ok := fired(tm)
				got[i] = ok
				if !ok {
					pending++
					continue
				}
				// The timer sends a time no earlier than its deadline and no
				// later than the clock's.
				if v.Before(t0.Add(deadlines[i])) || v.After(clk.Now()) {
					t.Errorf("timer %v sent %v, want within [%v, %v]", deadlines[i], v, t0.Add(deadlines[i]), clk.Now())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fired (-want +got):\n%s", diff)
			}
			if got := clk.Timers(); got != pending {
				t.Errorf("Timers() = %d, want %d", got, pending)
			}
		})
	}
}

func TestFakeAdvanceToNextFiresInDeadlineOrder(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	if clk.AdvanceToNext() {
		t.Fatal("AdvanceToNext() = true with no timers pending")
	}
	deadlines := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, 2 * time.Second}
	timers := make([]clock.Timer, len(deadlines))
	for i, d := range deadlines {
		timers[i] = clk.NewTimer(d)
	}
	steps := []struct {
		now   time.Duration
		fired []int // indexes into timers
	}{
		{time.Second, []int{1}},
		{2 * time.Second, []int{2, 3}}, // equal deadlines fire together
		{3 * time.Second, []int{0}},
	}
	for _, st := range steps {
		if !clk.AdvanceToNext() {
			t.Fatalf("AdvanceToNext() = false, want a timer at %v", st.now)
		}
		if got, want := clk.Now(), t0.Add(st.now); !got.Equal(want) {
			t.Fatalf("Now() = %v, want %v", got, want)
		}
		var got []int
		for i, tm := range timers {
			if v, ok := fired(tm); ok {
				got = append(got, i)
				if !v.Equal(clk.Now()) {
					t.Errorf("timer %d sent %v, want %v", i, v, clk.Now())
				}
			}
		}
		if diff := cmp.Diff(st.fired, got); diff != "" {
			t.Errorf("at %v fired (-want +got):\n%s", st.now, diff)
		}
	}
	if clk.AdvanceToNext() {
		t.Error("AdvanceToNext() = true after every timer fired")
	}
	if got, want := clk.Now(), t0.Add(3*time.Second); !got.Equal(want) {
		t.Errorf("Now() = %v after a fruitless AdvanceToNext, want %v", got, want)
	}
}

func TestFakeTimerStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		d        time.Duration
		advance  time.Duration // before the first Stop
		wantStop bool
	}{
		{"pending", time.Second, 500 * time.Millisecond, true},
		{"already fired", time.Second, time.Second, false},
		{"zero duration fires at once", 0, 0, false},
		{"negative duration fires at once", -time.Second, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewFake(t0)
			tm := clk.NewTimer(tt.d)
			clk.Advance(tt.advance)
			if got := tm.Stop(); got != tt.wantStop {
				t.Errorf("Stop() = %v, want %v", got, tt.wantStop)
			}
			if tm.Stop() {
				t.Error("second Stop() = true, want false")
			}
			if got := clk.Timers(); got != 0 {
				t.Errorf("Timers() = %d after Stop, want 0", got)
			}
			clk.Advance(time.Hour)
			_, ok := fired(tm)
			if wantFired := !tt.wantStop; ok != wantFired {
				t.Errorf("fired = %v, want %v (a stopped timer never fires)", ok, wantFired)
			}
		})
	}
}

func TestFakeNewTimerNonPositiveSendsNow(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	v, ok := fired(clk.NewTimer(0))
	if !ok || !v.Equal(t0) {
		t.Errorf("NewTimer(0) sent (%v, %v), want (%v, true)", v, ok, t0)
	}
}

func TestFakeSetBackwardsFiresNothing(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	tm := clk.NewTimer(time.Second)

	clk.Set(t0.Add(-time.Hour))
	if got := clk.Now(); !got.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("Now() = %v, want %v", got, t0.Add(-time.Hour))
	}
	if _, ok := fired(tm); ok {
		t.Fatal("timer fired when the clock moved backwards")
	}
	// Deadlines are instants: an hour forward only brings the clock back to t0.
	clk.Advance(time.Hour)
	if _, ok := fired(tm); ok {
		t.Fatal("timer fired before its deadline")
	}
	clk.Set(t0.Add(time.Second))
	if v, ok := fired(tm); !ok || !v.Equal(t0.Add(time.Second)) {
		t.Errorf("after Set to the deadline: fired = (%v, %v), want (%v, true)", v, ok, t0.Add(time.Second))
	}
}

func TestFakeBlockUntil(t *testing.T) {
	t.Parallel()
	isClosed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	clk := clock.NewFake(t0)
	if !isClosed(clk.BlockUntil(0)) {
		t.Error("BlockUntil(0) not closed at once")
	}
	two := clk.BlockUntil(2)
	first := clk.NewTimer(time.Second)
	if isClosed(two) {
		t.Fatal("BlockUntil(2) closed with one timer pending")
	}
	// A timer that goes away does not count.
	first.Stop()
	clk.NewTimer(time.Second)
	if isClosed(two) {
		t.Fatal("BlockUntil(2) closed with one timer pending after a Stop")
	}
	clk.NewTimer(2 * time.Second)
	if !isClosed(two) {
		t.Fatal("BlockUntil(2) not closed with two timers pending")
	}
	if !isClosed(clk.BlockUntil(2)) {
		t.Error("BlockUntil(2) made while two timers are pending not closed at once")
	}
}

func TestSleepOnFake(t *testing.T) {
	t.Parallel()
	t.Run("returns when advanced to the end", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(t0)
		done := make(chan error, 1)
		go func() { done <- clock.Sleep(t.Context(), clk, 5*time.Second) }()
		recv(t, clk.BlockUntil(1), "Sleep to make its timer")
		clk.Advance(5*time.Second - time.Nanosecond)
		if got := clk.Timers(); got != 1 {
			t.Fatalf("Timers() = %d a nanosecond early, want 1 (still asleep)", got)
		}
		select {
		case err := <-done:
			t.Fatalf("Sleep returned %v a nanosecond early", err)
		default:
		}
		clk.Advance(time.Nanosecond)
		if err := recv(t, done, "Sleep to return"); err != nil {
			t.Errorf("Sleep() = %v, want nil", err)
		}
	})
	t.Run("ctx cancelled while asleep", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(t0)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- clock.Sleep(ctx, clk, time.Hour) }()
		recv(t, clk.BlockUntil(1), "Sleep to make its timer")
		cancel()
		if err := recv(t, done, "Sleep to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep() = %v, want context.Canceled", err)
		}
		if got := clk.Timers(); got != 0 {
			t.Errorf("Timers() = %d after a cancelled Sleep, want 0 (its timer released)", got)
		}
		if !clk.Now().Equal(t0) {
			t.Errorf("Now() = %v, want %v", clk.Now(), t0)
		}
	})

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"zero", context.Background(), 0, nil},
		{"negative", context.Background(), -time.Second, nil},
		{"zero, ctx done", cancelled, 0, context.Canceled},
		{"positive, ctx done", cancelled, time.Hour, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewFake(t0)
			if err := clock.Sleep(tt.ctx, clk, tt.d); !errors.Is(err, tt.want) {
				t.Errorf("Sleep() = %v, want %v", err, tt.want)
			}
			if got := clk.Timers(); got != 0 {
				t.Errorf("Timers() = %d, want 0", got)
			}
		})
	}
}

func TestSleepOnRealHonoursCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := clock.Sleep(ctx, clock.Real{}, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep() = %v, want context.Canceled", err)
	}
}

func TestWithDeadlineOnFake(t *testing.T) {
	t.Parallel()
	t.Run("ends exactly at the deadline", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(t0)
		ctx, cancel := clock.WithDeadline(t.Context(), clk, t0.Add(30*time.Second))
		defer cancel()
		clk.Advance(30*time.Second - time.Nanosecond)
		if err := ctx.Err(); err != nil {
			t.Fatalf("ctx ended %v a nanosecond before the deadline", err)
		}
		if got := clk.Timers(); got != 1 {
			t.Fatalf("Timers() = %d, want 1", got)
		}
		clk.Advance(time.Nanosecond)
		recv(t, ctx.Done(), "ctx to end at the deadline")
		if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("Cause(ctx) = %v, want context.DeadlineExceeded", cause)
		}
	})
	t.Run("deadline already passed", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(t0)
		ctx, cancel := clock.WithDeadline(t.Context(), clk, t0.Add(-time.Second))
		defer cancel()
		recv(t, ctx.Done(), "ctx to end")
		if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("Cause(ctx) = %v, want context.DeadlineExceeded", cause)
		}
	})

	release := []struct {
		name string
		end  func(cancel, cancelParent context.CancelFunc)
	}{
		{"cancel", func(cancel, _ context.CancelFunc) { cancel() }},
		{"parent cancelled", func(_, cancelParent context.CancelFunc) { cancelParent() }},
	}
	for _, tt := range release {
		t.Run(tt.name+" releases the timer", func(t *testing.T) {
			t.Parallel()
			// The bubble lets synctest.Wait tell when WithDeadline's goroutine
			// has stopped its timer and gone.
			synctest.Test(t, func(t *testing.T) {
				clk := clock.NewFake(t0)
				parent, cancelParent := context.WithCancel(t.Context())
				defer cancelParent()
				ctx, cancel := clock.WithDeadline(parent, clk, t0.Add(time.Minute))
				defer cancel()
				tt.end(cancel, cancelParent)
				<-ctx.Done()
				synctest.Wait()
				if got := clk.Timers(); got != 0 {
					t.Errorf("Timers() = %d after the context ended, want 0", got)
				}
				if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
					t.Errorf("Cause(ctx) = %v, want context.Canceled", cause)
				}
				clk.Advance(time.Hour)
				if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
					t.Errorf("Cause(ctx) = %v after the deadline passed, want still context.Canceled", cause)
				}
			})
		})
	}
}

// TestWithDeadlineOnFakeMatchesContext fails: on a non-Real clock the context
// comes from WithCancelCause, so at the deadline ctx.Err() is
// context.Canceled (only Cause says DeadlineExceeded) and ctx.Deadline()
// reports no deadline, unlike context.WithDeadline and the Real branch. An
// Ask callback that checks errors.Is(ctx.Err(), context.DeadlineExceeded), or
// an HTTP client reading ctx.Deadline(), behaves differently under test.
func TestWithDeadlineOnFakeMatchesContext(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	deadline := t0.Add(30 * time.Second)
	ctx, cancel := clock.WithDeadline(t.Context(), clk, deadline)
	defer cancel()
	if got, ok := ctx.Deadline(); !ok || !got.Equal(deadline) {
		t.Errorf("ctx.Deadline() = (%v, %v), want (%v, true)", got, ok, deadline)
	}
	clk.Advance(30 * time.Second)
	recv(t, ctx.Done(), "ctx to end")
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ctx.Err() = %v, want context.DeadlineExceeded", err)
	}
}

func TestWithDeadlineOnReal(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(-time.Second)
	ctx, cancel := clock.WithDeadline(t.Context(), clock.Real{}, deadline)
	defer cancel()
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ctx.Err() = %v, want context.DeadlineExceeded", err)
	}
	if got, ok := ctx.Deadline(); !ok || !got.Equal(deadline) {
		t.Errorf("ctx.Deadline() = (%v, %v), want (%v, true)", got, ok, deadline)
	}
}

// TestFakeDrive: Drive moves the clock only while minTimers timers are
// pending and ready says so. Not parallel: the driver's goroutine is the
// process's one, started in this test's synctest bubble (another test's
// clocks would be moved from inside it), and Quiet counts every
// goroutine of the process.
func TestFakeDrive(t *testing.T) {
	// In a synctest bubble the driver's wall-clock ticker is virtual: a
	// bubble second is thousands of its ticks, with no real sleeping.
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(t0)
		var idle atomic.Bool
		defer clk.Drive(2, idle.Load)()

		// Bubble time bounds the wait should Drive never fire the timers.
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		var woke []time.Duration
		var sleepErr error
		slept := make(chan struct{})
		go func() {
			defer close(slept)
			for range 3 {
				if sleepErr = clock.Sleep(ctx, clk, time.Second); sleepErr != nil {
					return
				}
				woke = append(woke, clk.Now().Sub(t0))
			}
		}()

		stays := func(why string) {
			t.Helper()
			time.Sleep(time.Second)
			synctest.Wait()
			if got := clk.Now(); !got.Equal(t0) {
				t.Fatalf("Now() = %v with %s, want %v", got, why, t0)
			}
		}
		idle.Store(true)
		stays("1 timer pending and minTimers 2")
		long := clk.NewTimer(time.Minute)
		idle.Store(false)
		stays("2 timers pending but idle() false")

		// Idle with two timers: Drive moves the sleeper through its three
		// seconds; then only the long timer is left and time stops.
		idle.Store(true)
		<-slept
		if sleepErr != nil {
			t.Fatalf("Sleep() = %v", sleepErr)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, woke); diff != "" {
			t.Errorf("wake-ups (-want +got):\n%s", diff)
		}
		if got, want := clk.Now(), t0.Add(3*time.Second); !got.Equal(want) {
			t.Errorf("Now() = %v once the sleeper left, want %v", got, want)
		}
		if _, ok := fired(long); ok {
			t.Error("the one-minute timer fired although it was the only one pending")
		}
	})
}

// TestFakeDriveNilReady: without ready, a sleeper alone is moved through
// its wait. Not parallel, as TestFakeDrive.
func TestFakeDriveNilReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(t0)
		defer clk.Drive(1, nil)()
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		if err := clock.Sleep(ctx, clk, 30*time.Second); err != nil {
			t.Fatalf("Sleep() = %v, want nil", err)
		}
		if got, want := clk.Now(), t0.Add(30*time.Second); !got.Equal(want) {
			t.Errorf("Now() = %v, want %v", got, want)
		}
	})
}

func TestScaledSpeed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		speed, want float64
	}{
		{1000, 1000},
		{2.5, 2.5},
		{1, 1},
		{0, 1},
		{-3, 1},
	}
	for _, tt := range tests {
		if got := clock.NewScaled(t0, tt.speed).Speed(); got != tt.want {
			t.Errorf("NewScaled(_, %v).Speed() = %v, want %v", tt.speed, got, tt.want)
		}
	}
}

func TestScaledRunsFaster(t *testing.T) {
	t.Parallel()
	// A small real interval: a 50 s timer at speed 1000 is 50 ms of wall time.
	wallStart := time.Now()
	s := clock.NewScaled(t0, 1000)
	tm := s.NewTimer(50 * time.Second)
	recv(t, tm.C(), "the scaled timer")
	scaled := s.Now().Sub(t0)
	wall := time.Since(wallStart)
	if scaled < 50*time.Second {
		t.Errorf("scaled elapsed %v after a 50 s scaled timer, want at least 50s", scaled)
	}
	if limit := time.Duration(float64(wall) * 1000); scaled > limit {
		t.Errorf("scaled elapsed %v in %v of wall time, want at most %v", scaled, wall, limit)
	}
}

func TestScaledExact(t *testing.T) {
	t.Parallel()
	// In a synctest bubble the wall clock is virtual, so the scaling is exact.
	synctest.Test(t, func(t *testing.T) {
		s := clock.NewScaled(t0, 60)
		if got := s.Now(); !got.Equal(t0) {
			t.Fatalf("Now() = %v at creation, want %v", got, t0)
		}
		time.Sleep(time.Second)
		if got, want := s.Now(), t0.Add(time.Minute); !got.Equal(want) {
			t.Errorf("after 1 s of wall time Now() = %v, want %v", got, want)
		}
		s.Advance(time.Hour)
		if got, want := s.Now(), t0.Add(time.Hour+time.Minute); !got.Equal(want) {
			t.Errorf("after Advance(1h) Now() = %v, want %v", got, want)
		}
		time.Sleep(500 * time.Millisecond)
		if got, want := s.Now(), t0.Add(time.Hour+90*time.Second); !got.Equal(want) {
			t.Errorf("after another 0.5 s Now() = %v, want %v", got, want)
		}

		before := time.Now()
		<-s.NewTimer(30 * time.Second).C()
		if got := time.Since(before); got != 500*time.Millisecond {
			t.Errorf("a 30 s scaled timer took %v of wall time, want 500ms", got)
		}
	})
}

// TestScaledTimerSendsScaledTime fails: Scaled.NewTimer wraps a time.Timer,
// so C delivers the wall time, not "the clock's time" that clock.Timer
// promises. Nothing reads the value yet (Sleep and the poller ignore it).
func TestScaledTimerSendsScaledTime(t *testing.T) {
	t.Parallel()
	start := time.Date(2020, 1, 2, 9, 30, 0, 0, time.UTC)
	s := clock.NewScaled(start, 1000)
	v := recv(t, s.NewTimer(time.Second).C(), "the scaled timer")
	if now := s.Now(); v.Before(start.Add(time.Second)) || v.After(now) {
		t.Errorf("timer sent %v, want a scaled time within [%v, %v]", v, start.Add(time.Second), now)
	}
}

// TestFakeUnreceived: a fired timer counts as a wake-up not yet taken until
// its value is received or the timer is stopped, so a virtual-time driver
// can wait for a goroutine the clock woke (and the machine has not yet run)
// instead of a wall-clock pause.
func TestFakeUnreceived(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	a, b, c := clk.NewTimer(time.Second), clk.NewTimer(time.Second), clk.NewTimer(time.Hour)
	if n := clk.Unreceived(); n != 0 {
		t.Fatalf("Unreceived() = %d before any fired, want 0", n)
	}
	clk.Advance(time.Second)
	if n := clk.Unreceived(); n != 2 {
		t.Fatalf("Unreceived() = %d after two fired, want 2", n)
	}
	<-a.C()
	if n := clk.Unreceived(); n != 1 {
		t.Fatalf("Unreceived() = %d after one was received, want 1", n)
	}
	b.Stop() // fired, abandoned: no one's wake-up
	if n := clk.Unreceived(); n != 0 {
		t.Fatalf("Unreceived() = %d after the other was stopped, want 0", n)
	}
	now := clk.NewTimer(0) // fires at once, into its creator's hands
	if n := clk.Unreceived(); n != 1 {
		t.Fatalf("Unreceived() = %d with a zero timer unread, want 1", n)
	}
	<-now.C()
	c.Stop()
	if n := clk.Unreceived(); n != 0 {
		t.Fatalf("Unreceived() = %d at the end, want 0", n)
	}
}

// inSystemCall starts a goroutine blocked in a read system call of a pipe
// no poller watches (as a commit's fsync on a busy disk blocks), and
// returns what ends it, once its call has returned.
func inSystemCall(t *testing.T) (end func()) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		syscall.Read(p[0], make([]byte, 1)) // blocks in the kernel until written
		close(read)
	}()
	end = sync.OnceFunc(func() {
		syscall.Write(p[1], []byte{1})
		<-read
		syscall.Close(p[0])
		syscall.Close(p[1])
	})
	t.Cleanup(end)
	return end
}

// settles reports whether q.Busy() says want within d: the runtime's
// counts are approximate, so it is asked again, a millisecond apart.
func settles(q *clock.Quiet, want bool, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if q.Busy() == want {
			return true
		}
	}
	return false
}

// seenInSystemCall checks that q sees the process at rest, then starts a
// goroutine in a system call (inSystemCall) and checks that q sees it;
// it returns what ends the call.
func seenInSystemCall(t *testing.T, q *clock.Quiet) (end func()) {
	t.Helper()
	if !settles(q, false, time.Second) {
		t.Fatal("Busy() = true for a second at rest")
	}
	end = inSystemCall(t)
	if !settles(q, true, time.Second) {
		t.Fatal("Busy() = false for a second with a goroutine in a read system call")
	}
	return end
}

// TestQuietSeesASystemCall: a goroutine blocked in a system call is work
// under way that Busy sees; once it returns, Busy says no again. Not
// parallel, as TestBusy.
func TestQuietSeesASystemCall(t *testing.T) {
	var q clock.Quiet
	end := seenInSystemCall(t, &q)
	end()
	if !settles(&q, false, time.Second) {
		t.Error("Busy() = true for a second after the system call returned")
	}
}

// TestQuietTakesALongCallForGood: a goroutine in a system call for more
// than a full second (a child process's waiter, say) is taken for one in
// it for good: Busy says no again within two seconds, and stays so once
// the call returns. Not parallel, as TestBusy.
func TestQuietTakesALongCallForGood(t *testing.T) {
	var q clock.Quiet
	end := seenInSystemCall(t, &q)
	if !settles(&q, false, time.Minute) { // a hang guard: two seconds, by Quiet's window
		t.Error("Busy() = true for a minute with one goroutine in a system call throughout")
	}
	end()
	if !settles(&q, false, time.Second) {
		t.Error("Busy() = true for a second after the long call returned")
	}
}

// TestBusy: goroutines ready to run but waiting for a thread (more of them
// computing than there are threads, as a woken event loop waits on a
// loaded machine) are seen by Busy, which a driver of virtual time waits
// on; once every goroutine but the caller is parked, Busy says so (the
// runtime's count is approximate: it is asked again, a millisecond apart,
// for at most a second). Not parallel: another test's goroutines would be
// at work too.
func TestBusy(t *testing.T) {
	var stop atomic.Bool
	n := runtime.GOMAXPROCS(0) + 2
	var started, done sync.WaitGroup
	started.Add(n)
	for range n {
		done.Go(func() {
			started.Done()
			for !stop.Load() {
				runtime.Gosched()
			}
		})
	}
	started.Wait()
	var q clock.Quiet
	if !q.Busy() {
		t.Errorf("Busy() = false with %d goroutines computing on %d threads", n, runtime.GOMAXPROCS(0))
	}
	stop.Store(true)
	done.Wait()
	for range 1000 {
		if !q.Busy() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Error("Busy() = true for a second with every other goroutine parked")
}

// A Scaled clock handed to another process as its Setting reads the same
// time there: the process tests share one virtual clock this way.
func TestScaledSettingRoundTrips(t *testing.T) {
	t.Parallel()
	s := clock.NewScaled(t0, 20)
	p, err := clock.ParseSetting(s.Setting())
	if err != nil {
		t.Fatal(err)
	}
	if p.Speed() != 20 {
		t.Errorf("speed %v, want 20", p.Speed())
	}
	// Read p between two readings of s: it falls between them.
	before := s.Now()
	got := p.Now()
	after := s.Now()
	if got.Before(before) || got.After(after) {
		t.Errorf("parsed clock reads %v, outside %v .. %v", got, before, after)
	}
	for _, bad := range []string{"", "start=x&speed=2&wall=2026-11-25T15:00:00Z", "start=2026-11-25T15:00:00Z&speed=0&wall=2026-11-25T15:00:00Z", "start=2026-11-25T15:00:00Z&speed=2"} {
		if _, err := clock.ParseSetting(bad); err == nil {
			t.Errorf("ParseSetting(%q): no error", bad)
		}
	}
}

// TestDriveWaitsForWorkUnderWay: the driver does not move a clock while a
// goroutine of the process sits in a system call; once it returns, the
// clock moves. Not parallel: Quiet counts every goroutine of the process.
func TestDriveWaitsForWorkUnderWay(t *testing.T) {
	clk := clock.NewFake(t0)
	defer clk.Drive(1, nil)() // with no timer yet: it learns the process at rest
	var q clock.Quiet
	end := seenInSystemCall(t, &q)
	later := clk.NewTimer(time.Minute)
	defer later.Stop()
	time.Sleep(200 * time.Millisecond) // forty quiet spells, were it quiet
	if got := clk.Now(); !got.Equal(t0) {
		t.Fatalf("Now() = %v with a goroutine in a system call, want %v", got, t0)
	}
	end()
	select {
	case <-later.C():
	case <-time.After(time.Minute): // a hang guard: the driver moves it in milliseconds
		t.Fatal("the clock never moved to the one-minute timer once the process was quiet")
	}
}
