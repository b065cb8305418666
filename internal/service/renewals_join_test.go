package service

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
)

// An owner that took on a lease its fleet reserved is trusted from the
// last renewal of that reservation, whether the round renewing it ended
// before the owner joined the heartbeat or after: a round's renewal of a
// lease taken on from under it counted for nobody, and the owners of a
// takeover, opened 64 at a time, ran out of trust from the take (52 of
// them stepped down at one kill of 10,000 accounts).
func TestTakenOnLeaseIsTrustedFromItsLastRenewal(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "locator.db"), clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := []locator.Lease{
		{Account: "LV100001", Owner: "daemon:a", PID: 1, Host: "h", Endpoint: "/nowhere/a.sock", PacingKey: "K", Process: process},
		{Account: "LV100002", Owner: "daemon:b", PID: 1, Host: "h", Endpoint: "/nowhere/b.sock", PacingKey: "K", Process: process},
	}
	taken, _, err := st.AcquireLeases(t.Context(), want, LeaseTTL)
	if err != nil || len(taken) != 2 {
		t.Fatalf("the take: %v, %v", taken, err)
	}
	r := newRenewals()
	r.running = true // rounds only as the test makes them (renewAll)
	took := time.Now().Add(-2 * time.Second)
	r.reserve(st, taken, took)
	owners := map[string]*Owner{}
	for _, l := range taken {
		o := &Owner{lease: l}
		got, trusted, ok := r.takeOn(l)
		if !ok || got != l || !trusted.Equal(took) {
			t.Fatalf("takeOn %s: %v, %v, %v", l.Account, got, trusted, ok)
		}
		o.trust(trusted)
		owners[l.Account] = o
	}
	left := func(o *Owner) time.Duration { return o.trusted() }
	if l := left(owners["LV100001"]); l > time.Second {
		t.Fatalf("trust left from the take 2 s ago: %v", l)
	}

	// A round ends before the first owner joins: the reservation it
	// renewed is the owner's as it joins.
	r.renewAll(st, nil, []store.Term{store.TermOf(taken[0])})
	r.join(owners["LV100001"])
	if l := left(owners["LV100001"]); l < time.Second {
		t.Errorf("an owner joining after a round renewed its reservation: %v of trust left, want that round's", l)
	}
	// A round that began with the reservation ends after the second owner
	// joined in its place: the renewal is the owner's.
	r.join(owners["LV100002"])
	if l := left(owners["LV100002"]); l > time.Second {
		t.Fatalf("trust left before the round: %v", l)
	}
	r.renewAll(st, nil, []store.Term{store.TermOf(taken[1])})
	if l := left(owners["LV100002"]); l < time.Second {
		t.Errorf("an owner that joined as a round renewed its reservation: %v of trust left, want that round's", l)
	}
}
