package service

// ExpireTrust makes o as unsure of its lease as an owner whose renewals
// failed for a TTL, for tests of what it then holds back.
func (o *Owner) ExpireTrust() { o.trustUntil.Store(0) }
