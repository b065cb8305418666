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

// ExpireSessions ends every session o's followers earned, as sessionTTL
// passing would.
func (o *Owner) ExpireSessions() {
	o.api.mu.Lock()
	defer o.api.mu.Unlock()
	for t := range o.api.sessions {
		o.api.sessions[t] = time.Time{}
	}
}
