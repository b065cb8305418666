package simtest

import "sync"

// Loops are the event loops a test started (engines), for its driver of
// virtual time: the clock must not move while a loop still holds an event
// (an offer's history row, say), which real time never runs past.
type Loops struct {
	mu    sync.Mutex
	loops []interface{ Idle() bool }
}

// Add counts l among the loops.
func (s *Loops) Add(l interface{ Idle() bool }) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loops = append(s.loops, l)
}

// Idle reports whether no loop holds an event: RunClockWhile's run.
func (s *Loops) Idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.loops {
		if !l.Idle() {
			return false
		}
	}
	return true
}
