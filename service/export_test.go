package service

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
