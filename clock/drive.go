package clock

import (
	"sync"
	"time"
)

// driver is the one driver of virtual time in this process: every Fake
// that Drive was called on is moved by one goroutine, which asks Quiet
// once a tick for all of them. A driver per clock, each woken every tick,
// would leave some of them ready to run nearly always, each counted as
// work by the others' Quiet, and time would crawl (six days of
// package tradingday side by side did).
var driver struct {
	sync.Mutex
	clocks map[*driven]struct{}
	stop   chan struct{} // closed to end the running goroutine; nil when none runs
	done   chan struct{} // closed once it has ended
	calls  Quiet         // the process's goroutines, asleep or not
}

// driven is one clock Drive moves, with its caller's condition.
type driven struct {
	f         *Fake
	minTimers int
	ready     func() bool
	quiet     int // ticks in a row it could have moved
}

// Drive moves f as virtual time until the returned stop is called, for
// code whose goroutines all sleep on f when idle: f jumps to its next
// timer once, for five ticks in a row (see driveTick), at least minTimers
// of its timers are pending (everyone is asleep: an engine's poller and
// dispatcher make 2), ready, when given, reports true (no request in
// flight, no event in an engine's hands), and no goroutine of the process
// is ready to run or in a system call (Quiet). So time never moves under
// work under way, whatever woke it: a goroutine the clock woke, a worker
// handed a write, a reader handed a stream push, a commit's fsync (on a
// loaded machine each may wait for a thread longer than the quiet spell,
// and a window would run out under it).
//
// A timer fired and not yet received (Unreceived) is not waited for
// here: its goroutine may be busy with work that waits on the clock (a
// page's stream ticking while it reads the account), and would never
// take it. Code whose every timer is waited on can ask it in ready.
//
// ready is called with the driver's lock held: it must not block, nor
// call Drive or a stop. stop returns once the driver no longer moves f;
// the last stop returns once the driver's goroutine has ended (a test in
// a synctest bubble starts and ends its own).
func (f *Fake) Drive(minTimers int, ready func() bool) (stop func()) {
	d := &driven{f: f, minTimers: max(minTimers, 1), ready: ready}
	driver.Lock()
	defer driver.Unlock()
	if driver.clocks == nil {
		driver.clocks = map[*driven]struct{}{}
	}
	driver.clocks[d] = struct{}{}
	if driver.stop == nil {
		driver.stop, driver.done = make(chan struct{}), make(chan struct{})
		go drive(driver.stop, driver.done)
	}
	return sync.OnceFunc(func() { undrive(d) })
}

// undrive stops moving d's clock, and ends the driver's goroutine when no
// clock is left.
func undrive(d *driven) {
	driver.Lock()
	delete(driver.clocks, d)
	var done chan struct{}
	if len(driver.clocks) == 0 && driver.stop != nil {
		close(driver.stop)
		done = driver.done
		driver.stop, driver.done = nil, nil
	}
	driver.Unlock()
	if done != nil {
		<-done
	}
}

// drive ticks until stop is closed (seen at the next tick). The runtime
// delivers a ticker this short about once a millisecond on Linux, so the
// quiet spell of five ticks is about 5 ms: the pace of virtual time, one
// jump per spell at most.
func drive(stop, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(200 * time.Microsecond)
	defer tick.Stop()
	for range tick.C {
		if !driveTick(stop) {
			return
		}
	}
}

// driveTick moves each clock whose spell is quiet; it reports false once
// stop is closed (checked under the lock, so that a goroutine told to end
// never moves a clock Drive gave the next one).
func driveTick(stop chan struct{}) bool {
	driver.Lock()
	defer driver.Unlock()
	select {
	case <-stop:
		return false
	default:
	}
	busy := driver.calls.Busy()
	for d := range driver.clocks {
		if busy || d.f.Timers() < d.minTimers || (d.ready != nil && !d.ready()) {
			d.quiet = 0
			continue
		}
		// Quiet for five ticks, so a goroutine that just woke has had a
		// moment to start its work before time moves again.
		if d.quiet++; d.quiet >= 5 {
			d.quiet = 0
			d.f.AdvanceToNext()
		}
	}
	return true
}
