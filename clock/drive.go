package clock

import (
	"sync"
	"time"
)

// RunWhen drives the clock as virtual time until stop is closed, for code
// whose goroutines all sleep on the clock when idle. It jumps to the next
// deadline once the clock has been quiet for five ticks in a row (200 µs
// apart at best; about a millisecond on a loaded machine): at least
// minTimers timers pending (everyone is asleep), idle, when given, true (no
// request in flight, say), every goroutine the clock woke has taken its
// wake-up (Unreceived), and no goroutine of the process waits for a thread
// (Busy). Time thus never moves under a goroutine that is busy with I/O, or
// that a channel, a socket or the clock woke and that has not run yet on a
// loaded machine: an engine's loop handed a history read, a worker handed an
// accept, would otherwise see time run past a window it meets in real time.
// A wake-up left untaken while the clock is otherwise quiet holds time for
// at most 50 ticks: its goroutine is not waiting for a thread but busy
// elsewhere, perhaps waiting on this clock (a page's stream whose tick fired
// while it read the broker through a pacer), and would hold time forever.
// RunWhen returns once the driver no longer moves the clock.
//
// Every clock driven this way in a process shares one driver goroutine, so
// that Busy counts the work of the code under test and not the drivers of
// other clocks (a driver per clock, each woken every 200 µs, leaves some
// ready to run nearly always, and time crawls). That goroutine belongs to
// the synctest bubble, if any, of the first RunWhen: a test that drives a
// clock in a bubble must not run beside another that drives one.
func (f *Fake) RunWhen(stop <-chan struct{}, minTimers int, idle func() bool) {
	d := &driven{f: f, minTimers: minTimers, idle: idle}
	drivers.add(d)
	<-stop
	drivers.remove(d)
}

// driven is one clock under RunWhen.
type driven struct {
	f         *Fake
	minTimers int
	idle      func() bool
	quiet     int // quiet ticks in a row
	untaken   int // ticks in a row quiet but for a wake-up not yet taken
}

// untakenHold is how many ticks a wake-up not yet taken holds time while
// the clock is otherwise quiet.
const untakenHold = 50

// quietNow reports whether nothing stands in the way of moving d's clock.
func (d *driven) quietNow() bool {
	if d.f.Timers() < d.minTimers || (d.idle != nil && !d.idle()) {
		d.untaken = 0
		return false
	}
	if d.f.Unreceived() == 0 {
		d.untaken = 0
		return true
	}
	d.untaken++
	return d.untaken > untakenHold
}

// drivers is the process's one driver of the clocks under RunWhen.
var drivers driverSet

type driverSet struct {
	mu     sync.Mutex
	clocks map[*driven]struct{}
	stop   chan struct{} // closed to end the driver goroutine; nil when none runs
	ended  chan struct{} // closed once it has ended
}

func (s *driverSet) add(d *driven) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clocks == nil {
		s.clocks = map[*driven]struct{}{}
	}
	s.clocks[d] = struct{}{}
	if s.stop == nil {
		s.stop, s.ended = make(chan struct{}), make(chan struct{})
		go s.run(s.stop, s.ended)
	}
}

// remove stops driving d; once it returns, the driver no longer moves d's
// clock (it moves clocks holding mu), and when d was the last, the driver
// goroutine has ended (a synctest bubble ends only once it has).
func (s *driverSet) remove(d *driven) {
	s.mu.Lock()
	delete(s.clocks, d)
	var ended chan struct{}
	if len(s.clocks) == 0 && s.stop != nil {
		close(s.stop)
		ended, s.stop, s.ended = s.ended, nil, nil
	}
	s.mu.Unlock()
	if ended != nil {
		<-ended
	}
}

// run drives the clocks until stop is closed.
func (s *driverSet) run(stop, ended chan struct{}) {
	defer close(ended)
	tick := time.NewTicker(200 * time.Microsecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		select {
		case <-stop: // a later driver may drive the clocks now
			s.mu.Unlock()
			return
		default:
		}
		busy := Busy()
		for d := range s.clocks {
			if !d.quietNow() || busy {
				d.quiet = 0
				continue
			}
			// Quiet for about a millisecond, so a goroutine that just woke
			// has had a moment to start its work before time moves again.
			if d.quiet++; d.quiet >= 5 {
				d.quiet = 0
				d.f.AdvanceToNext()
			}
		}
		s.mu.Unlock()
	}
}
