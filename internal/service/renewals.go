package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/locatorhq/locator/internal/store"
)

// renewals is the lease heartbeat of one process's owners (a fleet's, or
// one owner's): every RenewEvery, or at once when an owner asks
// (awaitRenewal), one statement per store renews the leases of them all
// (store.RenewLeases), and each owner hears whether its own was. The
// loop runs while an owner has joined: a daemon of many accounts has one
// heartbeat, not one goroutine and one statement per account.
type renewals struct {
	kick chan struct{}
	// pass is held through a round of renewals, so that an owner leaving
	// waits for the one in flight and is never renewed after its release.
	pass sync.Mutex

	mu      sync.Mutex
	owners  map[*Owner]bool
	running bool
}

func newRenewals() *renewals {
	return &renewals{kick: make(chan struct{}, 1), owners: map[*Owner]bool{}}
}

// join adds o, whose lease was just taken, to the heartbeat.
func (r *renewals) join(o *Owner) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owners[o] = true
	if !r.running {
		r.running = true
		go r.loop()
	}
}

// leave takes o off the heartbeat, after the round in flight.
func (r *renewals) leave(o *Owner) {
	r.pass.Lock()
	r.mu.Lock()
	delete(r.owners, o)
	r.mu.Unlock()
	r.pass.Unlock()
	r.now() // the loop ends at once when o was the last
}

// now asks for a round at once.
func (r *renewals) now() {
	select {
	case r.kick <- struct{}{}:
	default: // one is asked for already
	}
}

func (r *renewals) loop() {
	for {
		t := time.NewTimer(RenewEvery)
		select {
		case <-t.C:
		case <-r.kick:
			t.Stop()
		}
		r.pass.Lock()
		r.mu.Lock()
		if len(r.owners) == 0 {
			r.running = false
			r.mu.Unlock()
			r.pass.Unlock()
			return
		}
		owners := slices.Collect(maps.Keys(r.owners))
		r.mu.Unlock()
		byStore := map[*store.Store][]*Owner{}
		for _, o := range owners {
			byStore[o.st] = append(byStore[o.st], o)
		}
		for st, group := range byStore {
			renewAll(st, group)
		}
		r.pass.Unlock()
	}
}

// renewAll renews the leases of owners, all on st, in one statement, and
// tells each owner how its own went.
func renewAll(st *store.Store, owners []*Owner) {
	terms := make([]store.Term, len(owners))
	for i, o := range owners {
		terms[i] = store.Term{Account: o.lease.Account, Owner: o.lease.Owner, Term: o.lease.Term}
	}
	attempt := time.Now()
	renewed, lost, err := st.RenewLeases(context.Background(), terms, LeaseTTL)
	for i, o := range owners {
		switch {
		case !o.Held(): // stepped down or closing meanwhile
		case err == nil && renewed[terms[i]]:
			o.trust(attempt)
		case err == nil && lost[terms[i]]:
			// Taken, or its key pair taken while it lapsed (RenewLeases
			// renews a lapsed lease nobody took).
			o.renewalDone(attempt, fmt.Errorf("%w: %s, term %d", store.ErrLeaseLost, o.lease.Account, o.lease.Term))
		case err == nil: // its row was held by a take in flight: the next round
		default:
			o.renewalDone(attempt, err)
		}
	}
}

// renewalDone takes the outcome of a renewal of o's lease attempted at
// attempt: trust on success; on a lost lease, or when renewals failed
// until this owner's trust ran out (the database is unreachable: a
// standby may take the account as soon as the lease lapses), it steps
// down.
func (o *Owner) renewalDone(attempt time.Time, err error) {
	switch {
	case err == nil:
		o.trust(attempt)
	case errors.Is(err, store.ErrLeaseLost):
		o.stepDown(fmt.Errorf("account %s: the lease was lost (this process stalled past it): another process owns it now", o.lease.Account))
	case o.trusted() > 0 || !o.st.Postgres():
		// On SQLite the machine lock keeps the account this process's
		// whatever the database says meanwhile.
		o.log.Error("lease not renewed; retrying", "account", o.lease.Account, "err", err)
	default:
		o.stepDown(fmt.Errorf("account %s: the lease could not be renewed for %s: %w", o.lease.Account, LeaseTTL-TrustMargin, err))
	}
}
