package service

// How long an owner trusts itself to hold its lease (see LeaseTTL), what
// it sends meanwhile, and how it steps down.

import (
	"errors"
	"fmt"
	"time"
)

// trust extends this owner's trust from a successful renewal attempt
// that started at attempt (time.Now: see LeaseTTL), and wakes whoever
// waits for it (see maySend). Trust never moves back: an attempt older
// than one trusted already (a reservation's, see renewals.join) tells
// nothing more.
func (o *Owner) trust(attempt time.Time) {
	until := attempt.Add(LeaseTTL - TrustMargin).UnixNano()
	for cur := o.trustUntil.Load(); until > cur && !o.trustUntil.CompareAndSwap(cur, until); {
		cur = o.trustUntil.Load()
	}
	o.trustMu.Lock()
	defer o.trustMu.Unlock()
	if o.renewed != nil {
		close(o.renewed)
		o.renewed = nil
	}
}

// awaitRenewal asks the heartbeat to renew now and waits at most d for a
// successful renewal; it reports whether one came.
func (o *Owner) awaitRenewal(d time.Duration) bool {
	o.trustMu.Lock()
	if o.renewed == nil {
		o.renewed = make(chan struct{})
	}
	renewed := o.renewed
	o.trustMu.Unlock()
	o.renewals.now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-renewed:
		return true
	case <-t.C:
	case <-o.stop:
	}
	return false
}

// trusted is how much longer this owner trusts itself to own the account.
func (o *Owner) trusted() time.Duration {
	return time.Until(time.Unix(0, o.trustUntil.Load()))
}

// maySend is the owner's brokerclient.Gate on Postgres: a request of its
// engine leaves only while the owner trusts its lease, an accept only with
// AcceptBudget of trust left, waiting for a renewal asked for at once when
// less is left. (On SQLite the machine lock alone makes the owner: no
// other process can take the account while it lives.)
func (o *Owner) maySend(accept bool) error {
	select {
	case <-o.session:
		o.stepDown(o.sessionEnded()) // the reason, before any other
	default:
	}
	need := time.Duration(0)
	if accept {
		need = AcceptBudget
	}
	if left := o.trusted(); left <= need && o.Held() {
		// Trust runs out with the time since the last renewal, not with
		// the requests' wait for the key pair's pacer: a renewal is asked
		// for at once and waited for as long as a renewal's trust lasts,
		// more than any left (the lease may live on in the database: an
		// owner just started, whose taking of the lease waited for the
		// database, has none; and a round on a database a takeover loads
		// takes longer than the renewals' spacing, which an owner with
		// none left waited until 52 owners just taken over stepped down
		// at one kill of 10,000 accounts). Nothing is sent meanwhile.
		o.awaitRenewal(LeaseTTL - TrustMargin)
	}
	if left := o.trusted(); left <= need || !o.Held() {
		err := fmt.Errorf("account %s: this process is no longer sure it owns the account (%s of trust in its lease left, %s needed)", o.lease.Account, max(left, 0).Round(time.Millisecond), need)
		// A request held back is work this owner cannot finish: it steps
		// down, and the next owner takes the workflow up from the store.
		o.stepDown(fmt.Errorf("%w: a request to the broker was held back", err))
		return err
	}
	return nil
}

// sessionEnded is why an owner whose process's database session ended
// holds its account no longer.
func (o *Owner) sessionEnded() error {
	return fmt.Errorf("account %s: this process's database session ended, and with it the proof that it lives: another process may take the account at once", o.lease.Account)
}

// ErrSteppedDown is matched by the error Wait returns when the owner
// stepped down (its lease lost, or not sure of it any more), as opposed to
// its engine stopping on an error.
var ErrSteppedDown = errors.New("stepped down")

// stepDown gives the account up for why: Held turns false and Fatal
// says why. Only the first reason counts.
func (o *Owner) stepDown(why error) {
	o.lostOnce.Do(func() {
		o.lostWhy = fmt.Errorf("%w: %w", ErrSteppedDown, why)
		close(o.lost)
	})
}
