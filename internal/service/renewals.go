package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locatorhq/locator"
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

	mu     sync.Mutex
	owners map[*Owner]bool
	// reserved are the leases a fleet took for accounts it has not
	// opened yet (see reserve), by store, renewed with the owners' until
	// the account's owner joins (it took the lease on under its owner
	// id) or the fleet gives the lease up (unreserve). A dead process's
	// 2,500 accounts taken over in a few statements were opened one by
	// one behind each other's start-up on the database's 8 connections,
	// and unrenewed, hundreds of the leases lapsed before their owner
	// took them on, and moved again for 20 s. By owner id: each lease
	// taken has an owner id of its own.
	reserved map[string]reservation
	running  bool
}

// reservation is a lease reserved, the store it was taken on, and when
// the last statement that took or renewed it began: an owner taking it
// on trusts it from then (see takeOn).
type reservation struct {
	lease   locator.Lease
	st      *store.Store
	trusted time.Time
}

func newRenewals() *renewals {
	return &renewals{kick: make(chan struct{}, 1), owners: map[*Owner]bool{}, reserved: map[string]reservation{}}
}

// join adds o, whose lease was just taken, to the heartbeat, in place of
// the reservation it took on, if any: trusted from that reservation's last
// renewal, which a round may have made since o took it on (see takeOn).
func (r *renewals) join(o *Owner) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owners[o] = true
	if res, ok := r.reserved[o.lease.Owner]; ok && store.TermOf(res.lease) == store.TermOf(o.lease) {
		o.trust(res.trusted)
	}
	delete(r.reserved, o.lease.Owner)
	r.start()
}

// reserve adds leases, taken on st for accounts not yet opened by a
// statement that began at attempt, to the heartbeat.
func (r *renewals) reserve(st *store.Store, leases []locator.Lease, attempt time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range leases {
		r.reserved[l.Owner] = reservation{l, st, attempt}
	}
	r.start()
}

// takeOn returns the lease reserved for want.Owner, if it was taken for an
// owner serving where want does (its pid, host, socket, and neither an
// address nor a pin for other hosts), and when the owner may trust it from
// (see Owner.trust): the owner joins the heartbeat in its place (join) with
// no statement of its own (TakeOnLease would write what the lease holds
// already, and renew it). The 2,500 accounts of a process killed at 10,000
// each took their lease on so, as the take that lost the race for them
// held their rows, waiting up to seconds. The reservation is renewed until
// the owner joins, and a round in flight as it does is the owner's too
// (renewAll): a round's renewal of a lease the owner had taken on from
// under it counted for nobody, and trust that started from the take ran
// out as 2,500 accounts opened, 64 at a time (52 stepped down at one kill).
func (r *renewals) takeOn(want locator.Lease) (locator.Lease, time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.reserved[want.Owner]
	l := res.lease
	if !ok || l.Account != want.Account || l.PID != want.PID || l.Host != want.Host || l.Endpoint != want.Endpoint || l.Process != want.Process ||
		l.PacingKey != want.PacingKey || want.Address != "" || want.Pin != "" {
		return locator.Lease{}, time.Time{}, false
	}
	return l, res.trusted, true
}

// unreserve takes the lease reserved for owner off the heartbeat, after
// the round in flight: the lease is then given up, or lapses, and no
// renewal of it is under way.
func (r *renewals) unreserve(owner string) {
	r.pass.Lock()
	defer r.pass.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.reserved, owner)
}

// start runs the loop unless it runs; r.mu held.
func (r *renewals) start() {
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
		if len(r.owners) == 0 && len(r.reserved) == 0 {
			r.running = false
			r.mu.Unlock()
			r.pass.Unlock()
			return
		}
		byStore := map[*store.Store]*renewal{}
		of := func(st *store.Store) *renewal {
			if byStore[st] == nil {
				byStore[st] = &renewal{}
			}
			return byStore[st]
		}
		for o := range r.owners {
			of(o.st).owners = append(of(o.st).owners, o)
		}
		for _, res := range r.reserved {
			of(res.st).reserved = append(of(res.st).reserved, store.TermOf(res.lease))
		}
		r.mu.Unlock()
		for st, rn := range byStore {
			r.renewAll(st, rn.owners, rn.reserved)
		}
		r.pass.Unlock()
	}
}

// renewal is what one round renews on a store: its owners' leases and
// the reserved ones.
type renewal struct {
	owners   []*Owner
	reserved []store.Term
}

// renewAll renews the leases of owners and the reserved ones, all on st,
// in one statement, tells each owner how its own went, and forgets a
// reservation lost (the lease moved on: its account's claim finds that)
// or notes when one renewed was last trusted.
func (r *renewals) renewAll(st *store.Store, owners []*Owner, reserved []store.Term) {
	terms := make([]store.Term, len(owners), len(owners)+len(reserved))
	for i, o := range owners {
		terms[i] = store.TermOf(o.lease)
	}
	attempt := time.Now()
	renewed, lost, err := st.RenewLeases(context.Background(), append(terms, reserved...), LeaseTTL)
	var joined []*Owner // in place of a reservation this round renewed
	var byTerm map[store.Term]*Owner
	r.mu.Lock()
	for _, t := range reserved {
		res, ok := r.reserved[t.Owner]
		switch {
		case !ok || store.TermOf(res.lease) != t: // its owner joined meanwhile
			if err == nil && renewed[t] {
				if byTerm == nil {
					byTerm = r.byTerm()
				}
				if o := byTerm[t]; o != nil {
					joined = append(joined, o)
				}
			}
		case err == nil && lost[t]:
			delete(r.reserved, t.Owner)
		case err == nil && renewed[t]:
			res.trusted = attempt
			r.reserved[t.Owner] = res
		}
	}
	r.mu.Unlock()
	for _, o := range joined {
		o.trust(attempt)
	}
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

// byTerm is the heartbeat's owners by the term each holds; r.mu held.
func (r *renewals) byTerm() map[store.Term]*Owner {
	out := make(map[store.Term]*Owner, len(r.owners))
	for o := range r.owners {
		out[store.TermOf(o.lease)] = o
	}
	return out
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
