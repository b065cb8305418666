package clock

import (
	"sync"
	"time"
)

// Scaled runs speed times faster than the wall clock from a chosen start
// instant, so a locally served simulator and the engine can rehearse a
// 30-second offer window in a fraction of the time. It can also jump forward.
type Scaled struct {
	mu     sync.Mutex
	start  time.Time // clock instant at realAt
	realAt time.Time // wall instant when the clock read start
	speed  float64
}

// NewScaled returns a clock reading start now and advancing speed times faster
// than real time. A speed of 1 is real time with a fixed origin.
func NewScaled(start time.Time, speed float64) *Scaled {
	if speed <= 0 {
		speed = 1
	}
	return &Scaled{start: start, realAt: time.Now(), speed: speed}
}

// Now returns the scaled time.
func (s *Scaled) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Scaled) nowLocked() time.Time {
	elapsed := time.Since(s.realAt)
	return s.start.Add(time.Duration(float64(elapsed) * s.speed))
}

// Speed reports how many clock seconds pass per wall second.
func (s *Scaled) Speed() float64 { return s.speed }

// Advance jumps the clock forward by d. Timers already made keep their wall
// deadline, so a jump never fires them early; code that waits re-reads Now.
func (s *Scaled) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start = s.nowLocked().Add(d)
	s.realAt = time.Now()
}

// NewTimer fires after d of scaled time, that is d/speed of wall time, and
// delivers the scaled clock's reading.
func (s *Scaled) NewTimer(d time.Duration) Timer {
	t := &scaledTimer{ch: make(chan time.Time, 1)}
	t.t = time.AfterFunc(time.Duration(float64(d)/s.speed), func() { t.ch <- s.Now() })
	return t
}

type scaledTimer struct {
	t  *time.Timer
	ch chan time.Time
}

func (t *scaledTimer) C() <-chan time.Time { return t.ch }
func (t *scaledTimer) Stop() bool          { return t.t.Stop() }
