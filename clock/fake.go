package clock

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// Fake is a clock that moves only when told to. Tests share one Fake between
// the simulator and the code under test and cross time windows with Advance.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	fired   []*fakeTimer // fired timers whose value may not have been taken yet (Unreceived)
	waiters []waiter     // callers of BlockUntil
}

type waiter struct {
	n  int
	ch chan struct{}
}

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the clock has been advanced by d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- f.now
		t.fired = true
		f.fired = append(f.fired, t)
		return t
	}
	f.timers = append(f.timers, t)
	f.notifyLocked()
	return t
}

// Advance moves the clock forward by d, firing every timer that falls due, in
// deadline order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.setLocked(f.now.Add(d))
	f.mu.Unlock()
}

// Set moves the clock to t; moving backwards fires nothing.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.setLocked(t)
	f.mu.Unlock()
}

func (f *Fake) setLocked(t time.Time) {
	f.now = t
	f.pruneFiredLocked()
	sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].at.Before(f.timers[j].at) })
	kept := f.timers[:0]
	for _, tm := range f.timers {
		if !tm.at.After(t) {
			tm.fired = true
			tm.ch <- t
			f.fired = append(f.fired, tm)
			continue
		}
		kept = append(kept, tm)
	}
	clear(f.timers[len(kept):])
	f.timers = kept
}

// Timers reports how many timers are pending, so a test can wait until the
// code under test is asleep before advancing.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// Unreceived reports how many fired timers still hold their value: a
// goroutine the clock woke has not yet taken its wake-up (not yet run, on a
// busy machine), so a driver of virtual time waits for it before moving
// time again. A timer stopped after it fired is no one's wake-up: it is
// not counted.
func (f *Fake) Unreceived() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pruneFiredLocked()
	return len(f.fired)
}

// pruneFiredLocked forgets the fired timers whose value was received.
func (f *Fake) pruneFiredLocked() {
	f.fired = slices.DeleteFunc(f.fired, func(t *fakeTimer) bool { return len(t.ch) == 0 })
}

// BlockUntil returns a channel closed once at least n timers are pending.
func (f *Fake) BlockUntil(n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	f.waiters = append(f.waiters, waiter{n: n, ch: ch})
	f.notifyLocked()
	return ch
}

func (f *Fake) notifyLocked() {
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if len(f.timers) >= w.n {
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	f.waiters = kept
}

type fakeTimer struct {
	f     *Fake
	at    time.Time
	ch    chan time.Time
	fired bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.fired {
		// Its value is no one's wake-up any more (Unreceived).
		t.f.fired = slices.DeleteFunc(t.f.fired, func(x *fakeTimer) bool { return x == t })
		return false
	}
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			break
		}
	}
	t.fired = true
	return true
}

// AdvanceToNext moves the clock to the earliest pending timer's deadline and
// fires it; it reports false when no timer is pending.
func (f *Fake) AdvanceToNext() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return false
	}
	next := f.timers[0].at
	for _, t := range f.timers[1:] {
		if t.at.Before(next) {
			next = t.at
		}
	}
	if next.After(f.now) {
		f.setLocked(next)
	} else {
		f.setLocked(f.now)
	}
	return true
}
