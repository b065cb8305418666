package service_test

import (
	"errors"
	"testing"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/store/storetest"
)

// A lease a fleet took for an account it has not opened yet is renewed
// with its owners' leases until the account's owner takes it on or the
// fleet gives it up: a dead process's thousands of accounts, taken over
// in a few statements and opened one after another, otherwise lapsed by
// the hundred before their owners took them on, and moved again. Here
// both reserved leases have lapsed already (a TTL of zero, as a slow
// start leaves them); the heartbeat renews them; one given up
// (unreserved, then released) is renewed no more, while the other still
// is, round after round. On SQLite and on Postgres.
func TestReservedLeasesAreKeptUntilGivenUp(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Drivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			st, err := store.Open(t.Context(), storetest.DSN(t, d), clock.Real{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ctx := t.Context()
			var leases []locator.Lease
			for _, acct := range []string{"LV100001", "LV100002"} {
				leases = append(leases, locator.Lease{Account: acct, Owner: "daemon:reserved-" + acct, PID: 1, Host: "h",
					Endpoint: "/nowhere/" + acct + ".sock", PacingKey: "K", Process: service.Process()})
			}
			taken, _, err := st.AcquireLeases(ctx, leases, 0)
			if err != nil || len(taken) != 2 {
				t.Fatalf("the reservations: %v, %v", taken, err)
			}
			terms := make([]store.Term, len(taken))
			for i, l := range taken {
				terms[i] = store.TermOf(l)
			}
			unreserve := service.Reserve(st, taken)
			defer unreserve(terms[1].Owner)
			// Renewed by the heartbeat's rounds (every RenewEvery), looked
			// at until they were, with a hang guard far past them.
			beat := func(acct string, after time.Time) time.Time {
				t.Helper()
				for deadline := time.Now().Add(time.Minute); ; {
					if l, err := st.LiveLease(ctx, acct); err == nil && l.Heartbeat.After(after) {
						return l.Heartbeat
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s not renewed past %v within a minute", acct, after)
					}
					if err := clock.Sleep(ctx, clock.Real{}, 20*time.Millisecond); err != nil {
						t.Fatal(err)
					}
				}
			}
			beat("LV100001", taken[0].Heartbeat)
			last := beat("LV100002", taken[1].Heartbeat)
			unreserve(terms[0].Owner)
			if err := st.ReleaseLease(ctx, "LV100001", terms[0].Owner, terms[0].Term); err != nil {
				t.Fatal(err)
			}
			for range 2 { // two rounds more
				last = beat("LV100002", last)
			}
			if l, err := st.LiveLease(ctx, "LV100001"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the lease given up: %+v, %v; want it released, not renewed", l, err)
			}
		})
	}
}
