package service

import (
	"net/http"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/store"
)

// ExpireTrust makes o as unsure of its lease as an owner whose renewals
// failed for a TTL, for tests of what it then holds back.
func (o *Owner) ExpireTrust() { o.trustUntil.Store(0) }

// ExpireSessions ends every session o's followers earned, as sessionTTL
// passing would.
func (o *Owner) ExpireSessions() { o.api.ExpireSessions() }

// NewHandle is cfg's handle, not connected yet, for tests of what its
// first calls do at once.
var NewHandle = newHandle

// Routes is o's account API handler, for tests that serve it in process.
func (o *Owner) Routes() http.Handler { return o.api.Routes() }

// Paths is the lock and socket of an account at a broker address in a
// runtime folder, for tests that hold other clients to the rule.
var Paths = paths

// Process is this run's process id, which names its database session (see
// store.Attend).
func Process() string { return process }

// Reserve puts the leases of terms, taken on st, on a lease heartbeat of
// their own as a fleet reserves them (see renewals.reserve), for tests of
// how long they are kept; unreserve takes one off (see
// renewals.unreserve).
func Reserve(st *store.Store, leases []locator.Lease) (unreserve func(owner string)) {
	r := newRenewals()
	r.reserve(st, leases, time.Now())
	return r.unreserve
}
