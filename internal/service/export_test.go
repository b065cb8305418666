package service

import "time"

// ExpireTrust makes o as unsure of its lease as an owner whose renewals
// failed for a TTL, for tests of what it then holds back.
func (o *Owner) ExpireTrust() { o.trustUntil.Store(0) }

// The two ends of the owner token's proof on a connection, and a
// certificate's pin, for tests that pose as one end (a relay).
var (
	AdmitToken   = admitToken
	PresentToken = presentToken
	PinOf        = pinOf
)

// Asking counts the questions waiting on a person now (offers to take,
// orders to confirm), for tests that hold virtual time still while one
// waits (a person takes no virtual time to answer).
func (l *Local) Asking() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}

// ExpireSessions ends every session o's followers earned, as sessionTTL
// passing would.
func (o *Owner) ExpireSessions() {
	o.api.mu.Lock()
	defer o.api.mu.Unlock()
	for t := range o.api.sessions {
		o.api.sessions[t] = time.Time{}
	}
}

// NewHandle is cfg's handle, not connected yet, for tests of what its
// first calls do at once.
var NewHandle = newHandle

// EngineIdle reports whether o's engine has nothing in hand (see
// engine.Engine.Idle), for drivers of virtual time.
func (o *Owner) EngineIdle() bool { return o.eng.Idle() }
