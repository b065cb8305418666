package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/store/storetest"
)

// One leader row per account: a second owner is refused while the lease
// lives, takes it with the next term once it lapsed (a zero TTL lapses at
// once, whatever clock the database keeps), and the old owner can then
// neither renew nor write under its term.
func TestLeaseTermsAndFencing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		a := locator.Lease{Account: "LV100001", Owner: "a", PID: 1, Host: "h1", Endpoint: "e1"}
		got, err := b.store.AcquireLease(ctx, a, time.Hour)
		if err != nil || got.Term != 1 {
			t.Fatalf("first acquire: term %d, %v", got.Term, err)
		}
		again, err := b.store.AcquireLease(ctx, a, time.Hour)
		if err != nil || again.Term != 1 || !again.Since.Equal(got.Since) {
			t.Fatalf("the owner again: term %d since %v, %v; want term 1 since %v", again.Term, again.Since, err, got.Since)
		}
		other := locator.Lease{Account: "LV100001", Owner: "b", PID: 2, Host: "h2", Endpoint: "e2"}
		var held *store.LeaseHeldError
		if _, err := b.store.AcquireLease(ctx, other, time.Hour); !errors.As(err, &held) || held.Holder.Owner != "a" {
			t.Fatalf("acquire of a live lease: %v", err)
		}
		fenced := b.store.Fenced(store.Fence{Account: "LV100001", Owner: "a", Term: 1})
		if err := fenced.Create(ctx, newLocate("w1")); err != nil {
			t.Fatalf("write under the current term: %v", err)
		}
		// a stalls: its lease lapses and b takes term 2.
		if err := b.store.RenewLease(ctx, "LV100001", "a", 1, 0); err != nil {
			t.Fatal(err)
		}
		took, err := b.store.AcquireLease(ctx, other, time.Hour)
		if err != nil || took.Term != 2 {
			t.Fatalf("acquire of a lapsed lease: term %d, %v", took.Term, err)
		}
		if err := b.store.RenewLease(ctx, "LV100001", "a", 1, time.Hour); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("renewal of an ended term: %v", err)
		}
		if err := fenced.Create(ctx, newLocate("w2")); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("write under an ended term: %v", err)
		}
		if _, err := b.store.Get(ctx, "w2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the fenced write was stored: %v", err)
		}
		// A release lapses the lease and keeps the row: the next owner's
		// term is 3, never 1 again.
		if err := b.store.ReleaseLease(ctx, "LV100001", "b", 2); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.LiveLease(ctx, "LV100001"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("live lease after release: %v", err)
		}
		if ls, err := b.store.Leases(ctx); err != nil || len(ls) != 0 {
			t.Fatalf("leases after release: %+v, %v; want none", ls, err)
		}
		c := locator.Lease{Account: "LV100001", Owner: "c", PID: 3, Host: "h3", Endpoint: "e3"}
		if got, err := b.store.AcquireLease(ctx, c, time.Hour); err != nil || got.Term != 3 {
			t.Fatalf("acquire after release: term %d, %v", got.Term, err)
		}
		live, err := b.store.LiveLease(ctx, "LV100001")
		if err != nil || live.Owner != "c" || live.Endpoint != "e3" || live.Term != 3 {
			t.Fatalf("live lease: %+v, %v", live, err)
		}
		// Taking over from a dead owner starts a term too, and is refused
		// when the lease has meanwhile moved to someone else.
		d := locator.Lease{Account: "LV100001", Owner: "d", PID: 4, Host: "h3", Endpoint: "e4"}
		if _, err := b.store.TakeOverLease(ctx, d, "someone-else", time.Hour); !errors.As(err, &held) {
			t.Fatalf("take over from an owner that is not the holder: %v", err)
		}
		if got, err := b.store.TakeOverLease(ctx, d, "c", time.Hour); err != nil || got.Term != 4 {
			t.Fatalf("take over from c: term %d, %v", got.Term, err)
		}
	})
}

// Processes racing for a free account: exactly one wins, the others are
// told who did.
func TestLeaseRace(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		stores := []*store.Store{b.store, mustOpen(t, b.dsn, b.clock), mustOpen(t, b.dsn, b.clock), mustOpen(t, b.dsn, b.clock)}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, refused := 0, 0
		for i, s := range stores {
			for j := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l := locator.Lease{Account: "LV100001", Owner: string(rune('a'+i)) + string(rune('0'+j)), PID: i, Host: "h", Endpoint: "e"}
					_, err := s.AcquireLease(ctx, l, time.Hour)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						won++
					case errors.Is(err, store.ErrLeaseHeld):
						refused++
					default:
						t.Errorf("acquire: %v", err)
					}
				}()
			}
		}
		wg.Wait()
		if won != 1 || refused != len(stores)*3-1 {
			t.Fatalf("%d won, %d refused; want 1 and %d", won, refused, len(stores)*3-1)
		}
	})
}

// A standby waiting on a held lease is woken when it may be free: at once
// for a lease released or passed on, and while it waits by the release's
// notification on Postgres (LISTEN/NOTIFY), by its next look (a quarter
// of a second) on SQLite, long before the lease would have lapsed.
func TestWaitLease(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		a := locator.Lease{Account: "LV100001", Owner: "a", PID: 1, Host: "h1", Endpoint: "e1"}
		held, err := b.store.AcquireLease(ctx, a, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		standby := mustOpen(t, b.dsn, b.clock)
		woken := make(chan error, 1)
		go func() { woken <- standby.WaitLease(ctx, held) }()
		select {
		case err := <-woken:
			t.Fatalf("woken while the lease is held: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if err := b.store.ReleaseLease(ctx, "LV100001", "a", held.Term); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-woken:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the standby was not woken by the release")
		}
		// Passed on to another owner: no wait at all.
		next, err := b.store.AcquireLease(ctx, locator.Lease{Account: "LV100001", Owner: "b", PID: 2, Host: "h2", Endpoint: "e2"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := standby.WaitLease(ctx, held); err != nil {
			t.Fatal(err)
		}
		_ = next
	})
}

// A standby's look at the leases it waits on reads one row while each is
// held as it saw it: it tells a lease renewed (still held) from one passed
// to another owner or term, or lapsed, which the look then reads whole.
func TestStandbyLookSeesChangesInOneRow(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		var held []locator.Lease
		for _, acct := range []string{"LV100001", "LV100002"} {
			l, err := b.store.AcquireLease(ctx, locator.Lease{Account: acct, Owner: "a-" + acct, PID: 1, Host: "h1", Endpoint: "e1"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, l)
		}
		if same, err := b.store.Unchanged(ctx, held...); err != nil || !same {
			t.Fatalf("leases as held: unchanged %v, %v; want true", same, err)
		}
		if err := b.store.RenewLease(ctx, held[0].Account, held[0].Owner, held[0].Term, time.Hour); err != nil {
			t.Fatal(err)
		}
		if same, err := b.store.Unchanged(ctx, held...); err != nil || !same {
			t.Fatalf("a lease renewed: unchanged %v, %v; want true", same, err)
		}
		if err := b.store.ReleaseLease(ctx, held[1].Account, held[1].Owner, held[1].Term); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.AcquireLease(ctx, locator.Lease{Account: held[1].Account, Owner: "b", PID: 2, Host: "h2", Endpoint: "e2"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if same, err := b.store.Unchanged(ctx, held...); err != nil || same {
			t.Fatalf("a lease passed to another owner: unchanged %v, %v; want false", same, err)
		}
		// Lapsed a second ago (SQLite's clock in SQL counts milliseconds:
		// a lease lapsing now may read live for one more).
		if err := b.store.RenewLease(ctx, held[0].Account, held[0].Owner, held[0].Term, -time.Second); err != nil {
			t.Fatal(err)
		}
		if same, err := b.store.Unchanged(ctx, held[0]); err != nil || same {
			t.Fatalf("a lease lapsed: unchanged %v, %v; want false", same, err)
		}
	})
}

// Many standbys of one store wait at once (one look at their leases
// serves them all): a release wakes its own standby alone, one whose
// caller gives up ends with its context's error, and the others wait on.
func TestWaitLeases(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		standby := mustOpen(t, b.dsn, b.clock)
		const n = 5
		woken := make([]chan error, n)
		held := make([]locator.Lease, n)
		cancels := make([]context.CancelFunc, n)
		for i := range n {
			l, err := b.store.AcquireLease(ctx, locator.Lease{Account: fmt.Sprintf("LV10000%d", i+1), Owner: "a", PID: 1, Host: "h1", Endpoint: "e1"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			held[i], woken[i] = l, make(chan error, 1)
			wctx, cancel := context.WithCancel(ctx)
			cancels[i] = cancel
			go func() { woken[i] <- standby.WaitLease(wctx, l) }()
		}
		defer func() {
			for _, c := range cancels {
				c()
			}
		}()
		quiet := func(which ...int) {
			t.Helper()
			for _, i := range which {
				select {
				case err := <-woken[i]:
					t.Fatalf("standby %d woken while its lease is held: %v", i, err)
				case <-time.After(300 * time.Millisecond):
				}
			}
		}
		quiet(0, 1, 2, 3, 4)
		if err := b.store.ReleaseLease(ctx, held[2].Account, "a", held[2].Term); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-woken[2]:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the standby of the lease released was not woken")
		}
		cancels[4]()
		if err := <-woken[4]; !errors.Is(err, context.Canceled) {
			t.Fatalf("a standby given up: %v, want context.Canceled", err)
		}
		quiet(0, 1, 3)
	})
}

// Standbys are listed while they renew, and no more once they leave or
// lapse; of every account, or of those named.
func TestStandbys(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		sb := locator.Standby{Account: "LV100001", Process: "daemon:b", PID: 2, Host: "h2", Rank: 3}
		if err := b.store.StandBy(ctx, sb, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := b.store.StandBy(ctx, locator.Standby{Account: "LV100002", Process: "daemon:c", PID: 3, Host: "h3"}, 0); err != nil {
			t.Fatal(err)
		}
		got, err := b.store.Standbys(ctx)
		if err != nil || len(got) != 1 || got[0].Process != "daemon:b" || got[0].Host != "h2" || got[0].Rank != 3 {
			t.Fatalf("standbys: %+v, %v; want b alone (c lapsed), its key pair listed fourth", got, err)
		}
		if err := b.store.LeaveStandby(ctx, sb); err != nil {
			t.Fatal(err)
		}
		if got, err := b.store.Standbys(ctx, "LV100001"); err != nil || len(got) != 0 {
			t.Fatalf("standbys after leaving: %+v, %v", got, err)
		}
		// A daemon announces all the accounts it is about to own in one
		// statement (a second time renews them); c's lapsed one lives again.
		all := []locator.Standby{sb, {Account: "LV100002", Process: "daemon:b", PID: 2, Host: "h2", Rank: 1}, {Account: "LV100002", Process: "daemon:c", PID: 3, Host: "h3"}}
		for range 2 {
			if err := b.store.StandByAll(ctx, all, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		got, err = b.store.Standbys(ctx)
		if err != nil || len(got) != 3 {
			t.Fatalf("standbys after StandByAll: %+v, %v; want 3", got, err)
		}
		for _, sb := range got {
			if want := all[slices.IndexFunc(all, func(w locator.Standby) bool { return w.Account == sb.Account && w.Process == sb.Process })].Rank; sb.Rank != want {
				t.Errorf("%s of %s ranks its key pair %d, want %d", sb.Account, sb.Process, sb.Rank, want)
			}
		}
		// The records of several accounts (a key pair's) in one read, by
		// account; those of an account not named are not among them.
		if got, err := b.store.Standbys(ctx, "LV100002", "LV100003"); err != nil || len(got) != 2 || got[0].Account != "LV100002" || got[1].Account != "LV100002" {
			t.Fatalf("the standbys of LV100002 and LV100003: %+v, %v; want LV100002's two", got, err)
		}
		if got, err := b.store.Standbys(ctx, "LV100001", "LV100002"); err != nil || len(got) != 3 || got[0].Account != "LV100001" {
			t.Fatalf("the standbys of LV100001 and LV100002: %+v, %v; want all three, LV100001's first", got, err)
		}
		// b leaves both its accounts in one statement; c's record stays.
		if err := b.store.LeaveStandby(ctx, all[0], all[1]); err != nil {
			t.Fatal(err)
		}
		if got, err := b.store.Standbys(ctx); err != nil || len(got) != 1 || got[0].Process != "daemon:c" {
			t.Fatalf("standbys after b left both: %+v, %v; want c's alone", got, err)
		}
	})
}

// A daemon renews every record it keeps in one statement, whatever
// process id each carries (a fleet's accounts stand by each under its
// caller's id): the records named live on, one not named lapses, and
// another process's record of a named account is not renewed for it.
func TestRenewStandbysByRecord(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		mine := []locator.Standby{{Account: "LV100001", Process: "daemon:a1", PID: 2, Host: "h"}, {Account: "LV100002", Process: "daemon:a2", PID: 2, Host: "h"}}
		dropped := locator.Standby{Account: "LV100003", Process: "daemon:a3", PID: 2, Host: "h"}
		other := locator.Standby{Account: "LV100001", Process: "daemon:b", PID: 3, Host: "h2"}
		if err := b.store.StandByAll(ctx, append([]locator.Standby{dropped, other}, mine...), 0); err != nil {
			t.Fatal(err)
		}
		if got, err := b.store.Standbys(ctx); err != nil || len(got) != 0 {
			t.Fatalf("standbys written lapsed: %+v, %v; want none", got, err)
		}
		if err := b.store.RenewStandbys(ctx, mine, time.Hour); err != nil {
			t.Fatal(err)
		}
		got, err := b.store.Standbys(ctx)
		if err != nil || len(got) != 2 {
			t.Fatalf("standbys after the renewal: %+v, %v; want the two renewed", got, err)
		}
		for _, sb := range got {
			if !slices.ContainsFunc(mine, func(m locator.Standby) bool { return m.Account == sb.Account && m.Process == sb.Process }) {
				t.Errorf("%s of %s renewed; it was not named", sb.Account, sb.Process)
			}
		}
	})
}

// The broker's rate limits are per key pair (spec "Rate limits": several
// processes sharing one key pair share the buckets), so the accounts of
// one key pair are owned by one process at a time: another process is
// refused any of them while a lease of one lives, may take them once they
// lapsed or their process is found dead, and an owner whose lapsed lease
// lost its key pair to another process cannot renew it.
func TestKeyPairOneProcess(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		lease := func(acct, owner, process, key string) locator.Lease {
			return locator.Lease{Account: acct, Owner: owner, PID: 1, Host: "h", Endpoint: "e-" + owner, PacingKey: key, Process: process}
		}
		if _, err := b.store.AcquireLease(ctx, lease("A", "p1-a", "p1", "K"), time.Hour); err != nil {
			t.Fatal(err)
		}
		var pair *store.KeyPairHeldError
		if _, err := b.store.AcquireLease(ctx, lease("B", "p2-b", "p2", "K"), time.Hour); !errors.As(err, &pair) || pair.Holder.Account != "A" || pair.Account != "B" {
			t.Fatalf("another process on the key pair: %v; want a KeyPairHeldError naming A", err)
		}
		if _, err := b.store.LiveLease(ctx, "B"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("B was written: %v", err)
		}
		if _, err := b.store.AcquireLease(ctx, lease("B", "p1-b", "p1", "K"), time.Hour); err != nil {
			t.Fatalf("the same process, another account of the pair: %v", err)
		}
		if _, err := b.store.AcquireLease(ctx, lease("C", "p2-c", "p2", "K2"), time.Hour); err != nil {
			t.Fatalf("another key pair: %v", err)
		}
		// p1 stalls: A's lease lapses (B's lives) and p2 is still refused;
		// then B's lapses too, and p2 takes A.
		if err := b.store.RenewLease(ctx, "A", "p1-a", 1, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.AcquireLease(ctx, lease("A", "p2-a", "p2", "K"), time.Hour); !errors.As(err, &pair) || pair.Holder.Account != "B" {
			t.Fatalf("A lapsed, B live: %v; want a KeyPairHeldError naming B", err)
		}
		if err := b.store.RenewLease(ctx, "B", "p1-b", 1, 0); err != nil {
			t.Fatal(err)
		}
		if got, err := b.store.AcquireLease(ctx, lease("A", "p2-a", "p2", "K"), time.Hour); err != nil || got.Term != 2 {
			t.Fatalf("both lapsed: term %d, %v; want A's term 2", got.Term, err)
		}
		// p1 resumes: B's lease is still its term, but lapsed, and its key
		// pair is p2's now.
		if err := b.store.RenewLease(ctx, "B", "p1-b", 1, time.Hour); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("renewal of a lapsed lease whose key pair moved: %v", err)
		}
		// p2 takes B; p3 finds p2 dead and takes A over at once, and then B,
		// though p2's lease of B has not lapsed.
		if _, err := b.store.AcquireLease(ctx, lease("B", "p2-b", "p2", "K"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.TakeOverLease(ctx, lease("A", "p3-a", "p3", "K"), "p2-a", time.Hour); err != nil {
			t.Fatalf("take over from a dead process: %v", err)
		}
		if _, err := b.store.TakeOverLease(ctx, lease("B", "p3-b", "p3", "K"), "p2-b", time.Hour); err != nil {
			t.Fatalf("take over the dead process's other account: %v", err)
		}
		// Processes racing for the accounts of one free key pair: exactly
		// one wins.
		stores := []*store.Store{b.store, mustOpen(t, b.dsn, b.clock), mustOpen(t, b.dsn, b.clock), mustOpen(t, b.dsn, b.clock)}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := map[string]bool{}
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := fmt.Sprintf("q%d", i)
				_, err := s.AcquireLease(ctx, lease(fmt.Sprintf("R%d", i), p, p, "K3"), time.Hour)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won[p] = true
				case !errors.Is(err, store.ErrKeyPairHeld):
					t.Errorf("acquire: %v", err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("processes owning accounts of one key pair: %v; want one", won)
		}
	})
}

// One process renews every lease it holds at once: the live leases of
// the terms named are extended, and a lapsed one nobody took (the
// process's renewals were late), in one more statement; one another owner
// took is not, nor a lapsed one whose key pair another process holds
// meanwhile (one process owns a key pair's accounts).
func TestRenewLeasesAtOnce(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		var terms []store.Term
		for i := range 6 {
			acct := fmt.Sprintf("LV%06d", i)
			l, err := b.store.AcquireLease(ctx, locator.Lease{Account: acct, Owner: "p1-" + acct, PID: 1, Host: "h", Endpoint: "e", PacingKey: "K", Process: "p1"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			terms = append(terms, store.TermOf(l))
		}
		before, err := b.store.LiveLease(ctx, terms[0].Account)
		if err != nil {
			t.Fatal(err)
		}
		// Another key pair's account of p1's, which lapses while p3 takes
		// another account of that key pair.
		l, err := b.store.AcquireLease(ctx, locator.Lease{Account: "LV900000", Owner: "p1-LV900000", PID: 1, Host: "h", Endpoint: "e", PacingKey: "L", Process: "p1"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		pairMoved := store.TermOf(l)
		terms = append(terms, pairMoved)
		// The second lapses; the third lapses and another owner takes it.
		lapsed, moved := terms[1], terms[2]
		for _, x := range []store.Term{lapsed, moved, pairMoved} {
			if err := b.store.RenewLease(ctx, x.Account, x.Owner, x.Term, 0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.store.AcquireLease(ctx, locator.Lease{Account: moved.Account, Owner: "p2", PID: 2, Host: "h", Endpoint: "e2", Process: "p2"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.AcquireLease(ctx, locator.Lease{Account: "LV900001", Owner: "p3", PID: 3, Host: "h", Endpoint: "e3", PacingKey: "L", Process: "p3"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		renewed, lost, err := b.store.RenewLeases(ctx, terms, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(lost) != 2 || !lost[moved] || !lost[pairMoved] {
			t.Fatalf("lost %v; want the moved one and the one whose key pair moved", lost)
		}
		if len(renewed) != len(terms)-2 || !renewed[lapsed] || renewed[moved] || renewed[pairMoved] || !renewed[terms[0]] || !renewed[terms[5]] {
			t.Fatalf("renewed %d of %d (lapsed %v, moved %v, its key pair moved %v); want all but the moved and the one whose key pair moved",
				len(renewed), len(terms), renewed[lapsed], renewed[moved], renewed[pairMoved])
		}
		after, err := b.store.LiveLease(ctx, terms[0].Account)
		if err != nil || !after.Expires.After(before.Expires) || after.Term != before.Term {
			t.Fatalf("a renewed lease: %+v, %v; want its term %d, expiring after %v", after, err, before.Term, before.Expires)
		}
		if l, err := b.store.LiveLease(ctx, lapsed.Account); err != nil || l.Term != lapsed.Term {
			t.Fatalf("the lapsed lease nobody took: %+v, %v; want it renewed in its term", l, err)
		}
		if _, err := b.store.LiveLease(ctx, pairMoved.Account); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the lapsed lease whose key pair moved was renewed: %v", err)
		}
		if l, err := b.store.LiveLease(ctx, moved.Account); err != nil || l.Owner != "p2" || l.Term != moved.Term+1 {
			t.Fatalf("the moved lease: %+v, %v; want p2's term %d", l, err, moved.Term+1)
		}
		if err := b.store.RenewLease(ctx, moved.Account, moved.Owner, moved.Term, time.Hour); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("the moved lease's old owner: %v, want ErrLeaseLost", err)
		}
	})
}

// A process takes all of a key pair's accounts at once, one
// transaction and one write, by the rules a single take keeps: a free
// account starts term 1, a lapsed one the next term, one the owner holds
// keeps its term; another process is refused an account whose lease
// lives (a LeaseHeldError) and every other account of that key pair (a
// KeyPairHeldError), nothing written for them; the accounts of another
// key pair in the same call are taken. Processes racing for one free key
// pair's accounts: one owns them all, the others none (spec "Rate
// limits": the buckets are per key pair).
func TestAcquireLeasesAtOnce(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		lease := func(acct, owner, process, key string) locator.Lease {
			return locator.Lease{Account: acct, Owner: owner, PID: 1, Host: "h", Endpoint: "e-" + owner, PacingKey: key, Process: process}
		}
		// B: p0's lease, lapsed; C: p1's already.
		if _, err := b.store.AcquireLease(ctx, lease("B", "p0-b", "p0", "K"), 0); err != nil {
			t.Fatal(err)
		}
		c, err := b.store.AcquireLease(ctx, lease("C", "p1-c", "p1", "K"), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		taken, refused, err := b.store.AcquireLeases(ctx, []locator.Lease{lease("A", "p1-a", "p1", "K"), lease("B", "p1-b", "p1", "K"), lease("C", "p1-c", "p1", "K")}, time.Hour)
		if err != nil || len(refused) != 0 || len(taken) != 3 {
			t.Fatalf("p1 takes A, B, C: %d taken, refused %v, %v; want all three", len(taken), refused, err)
		}
		terms := map[string]int64{}
		for _, l := range taken {
			got, err := b.store.LiveLease(ctx, l.Account)
			if err != nil || got.Owner != l.Owner || got.Term != l.Term || got.Endpoint != l.Endpoint || !got.Expires.Equal(l.Expires) {
				t.Fatalf("%s: stored %+v, %v; want %+v", l.Account, got, err, l)
			}
			terms[l.Account] = l.Term
		}
		if terms["A"] != 1 || terms["B"] != 2 || terms["C"] != c.Term {
			t.Fatalf("terms %v; want A 1 (free), B 2 (lapsed), C %d (its own)", terms, c.Term)
		}
		taken, refused, err = b.store.AcquireLeases(ctx, []locator.Lease{lease("A", "p2-a", "p2", "K"), lease("D", "p2-d", "p2", "K"), lease("E", "p2-e", "p2", "K2")}, time.Hour)
		var held *store.LeaseHeldError
		var pair *store.KeyPairHeldError
		switch {
		case err != nil:
			t.Fatal(err)
		case !errors.As(refused["A"], &held) || held.Holder.Owner != "p1-a":
			t.Fatalf("p2 asks for A, p1's: %v; want a LeaseHeldError naming p1-a", refused["A"])
		case !errors.As(refused["D"], &pair) || pair.Account != "D" || pair.Holder.Process != "p1":
			t.Fatalf("p2 asks for D of p1's key pair: %v; want a KeyPairHeldError naming p1", refused["D"])
		case len(taken) != 1 || taken[0].Account != "E" || taken[0].Term != 1:
			t.Fatalf("p2 took %+v; want E (another key pair), term 1", taken)
		}
		if _, err := b.store.LiveLease(ctx, "D"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("D was written: %v", err)
		}
		stores := []*store.Store{b.store, mustOpen(t, b.dsn, b.clock), mustOpen(t, b.dsn, b.clock), mustOpen(t, b.dsn, b.clock)}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := map[string]int{}
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := fmt.Sprintf("q%d", i)
				var ls []locator.Lease
				for j := range 5 {
					ls = append(ls, lease(fmt.Sprintf("R%d", j), p+fmt.Sprint(j), p, "K3"))
				}
				taken, refused, err := s.AcquireLeases(ctx, ls, time.Hour)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("acquire: %v", err)
				}
				if len(taken) > 0 {
					won[p] = len(taken)
				}
				for a, err := range refused {
					if !errors.Is(err, store.ErrKeyPairHeld) && !errors.Is(err, store.ErrLeaseHeld) {
						t.Errorf("%s refused %s: %v", p, a, err)
					}
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("processes owning accounts of one key pair: %v; want one owning all 5", won)
		}
		for _, n := range won {
			if n != 5 {
				t.Fatalf("the winner took %d of 5", n)
			}
		}
	})
}

// A process stopped half-way through a fenced write (SIGSTOP, a frozen VM)
// holds a share lock on its lease row that it cannot give up: the server
// ends its session once it has sat idle in its transaction for 2 s (less
// than a lease lasts), so another process takes over the lapsed lease
// without waiting for the stopped one to run again, and the stopped one's
// write is lost, not applied late. Postgres only: SQLite's one writer is a
// process of this machine's.
func TestTakeoverPastAPausedWrite(t *testing.T) {
	t.Parallel()
	a, b, _ := onePostgres(t)
	var setting string
	if err := store.QueryRow(t.Context(), a, `SHOW idle_in_transaction_session_timeout`, &setting); err != nil || setting != "2s" {
		t.Fatalf("idle_in_transaction_session_timeout %q, %v; want 2s", setting, err)
	}
	ctx := t.Context()
	mine := locator.Lease{Account: "LV100001", Owner: "a", PID: 1, Host: "h1", Endpoint: "e1"}
	// A zero TTL: the lease has lapsed already, as a paused owner's would.
	l, err := a.AcquireLease(ctx, mine, 0)
	if err != nil {
		t.Fatal(err)
	}
	held, release, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	defer close(release)
	go func() {
		ended <- store.HoldFenced(a.Fenced(store.Fence{Account: "LV100001", Owner: "a", Term: l.Term}), held, release)
	}()
	<-held
	other := locator.Lease{Account: "LV100001", Owner: "b", PID: 2, Host: "h2", Endpoint: "e2"}
	start := time.Now()
	var took locator.Lease
	for {
		// Each try waits on the row lock for at most the transaction bound.
		if took, err = b.AcquireLease(ctx, other, time.Hour); err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the takeover still waits on the paused write after %s: %v", time.Since(start).Round(time.Second), err)
		}
	}
	if took.Term != l.Term+1 {
		t.Errorf("took term %d, want %d", took.Term, l.Term+1)
	}
	release <- struct{}{}
	if err := <-ended; err == nil {
		t.Error("the paused write committed after its session was ended")
	}
}

// A process that takes a lease on Postgres holds a database session of
// its own for as long as it lives: when the server ends it (as it does
// when the process dies), the process hears at once, other processes see
// it gone (a standby waiting on its lease is woken), and one takes over a
// lease that would have lived an hour more,
// in the next term, with the dead owner's writes fenced off. A process
// that lives keeps its session, and one that never held one is not known
// either way (its lease's time alone frees it). On SQLite there are no
// sessions: the machine lock tells a dead owner there.
func TestSessionEndFreesTheLease(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		other := mustOpen(t, b.dsn, b.clock)
		mine := locator.Lease{Account: "LV100001", Owner: "a", PID: 1, Host: "h1", Endpoint: "e1", Process: "process-a"}
		l, err := b.store.AcquireLease(ctx, mine, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		ended, err := b.store.Attend(ctx, mine.Process)
		if err != nil {
			t.Fatal(err)
		}
		if !b.store.Postgres() {
			if s, err := other.Session(ctx, mine.Process); ended != nil || s != store.SessionUnknown || err != nil {
				t.Fatalf("on SQLite: session %v (%v), ended %v; want none", s, err, ended)
			}
			return
		}
		for process, want := range map[string]store.SessionState{mine.Process: store.SessionLive, "process-never": store.SessionUnknown} {
			if s, err := other.Session(ctx, process); s != want || err != nil {
				t.Fatalf("session of %s: %v, %v; want %v", process, s, err, want)
			}
		}
		// A standby waits on the lease, which would live an hour more.
		waited := make(chan error, 1)
		go func() { waited <- other.WaitLease(ctx, l) }()
		storetest.EndSession(t, b.dsn, mine.Process)
		select {
		case <-ended:
		case <-time.After(30 * time.Second): // a hang guard
			t.Fatal("the process was not told that its session ended")
		}
		select {
		case err := <-waited:
			if err != nil {
				t.Fatalf("the standby's wait: %v", err)
			}
		case <-time.After(30 * time.Second): // a hang guard
			t.Fatal("the standby still waits on the lease of a process whose session ended")
		}
		if s, err := other.Session(ctx, mine.Process); s != store.SessionEnded || err != nil {
			t.Fatalf("session after it ended: %v, %v; want ended", s, err)
		}
		next := locator.Lease{Account: "LV100001", Owner: "b", PID: 2, Host: "h2", Endpoint: "e2", Process: "process-b"}
		took, err := other.TakeOverLease(ctx, next, "a", time.Hour)
		if err != nil || took.Term != l.Term+1 {
			t.Fatalf("take over from the dead process: term %d, %v; want %d", took.Term, err, l.Term+1)
		}
		fenced := b.store.Fenced(store.Fence{Account: l.Account, Owner: l.Owner, Term: l.Term})
		if err := fenced.Create(ctx, newLocate("w1")); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("a write under the dead owner's term: %v", err)
		}
		// A process whose session ended but lives on gets a new one.
		if _, err := b.store.Attend(ctx, mine.Process); err != nil {
			t.Fatal(err)
		}
		if s, err := other.Session(ctx, mine.Process); s != store.SessionLive || err != nil {
			t.Fatalf("session after attending again: %v, %v; want live", s, err)
		}
	})
}

// heldByP1 takes on s, for process p1, an hour's lease of each account of
// accountKeys (pairs of an account and its key pair) and returns their
// terms, in order.
func heldByP1(t *testing.T, s *store.Store, accountKeys ...string) []store.Term {
	t.Helper()
	var terms []store.Term
	for i := 0; i+1 < len(accountKeys); i += 2 {
		acct, key := accountKeys[i], accountKeys[i+1]
		l, err := s.AcquireLease(t.Context(), locator.Lease{Account: acct, Owner: "p1-" + acct, PID: 1, Host: "h", Endpoint: "e", PacingKey: key, Process: "p1"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		terms = append(terms, store.TermOf(l))
	}
	return terms
}

// A renewal never waits behind a take in flight: the lease rows another
// transaction holds for update (a change of owner of an account of their
// key pair, about to commit or roll back) are skipped, neither renewed nor
// lost, and renewed at the next round once the take let them go. Every
// lease of the key pair is skipped, not only the account taken: a renewal
// committed after the take read them lapsed would leave two processes
// owning the key pair. Postgres only (SQLite's one writer has no row
// locks).
func TestRenewalSkipsARowATakeHolds(t *testing.T) {
	t.Parallel()
	a, other, _ := onePostgres(t)
	ctx := t.Context()
	terms := heldByP1(t, a, "LV100001", "K", "LV100002", "K", "LV100003", "K2")
	held, release, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() { ended <- store.HoldForTake(other, "LV100001", "K", held, release) }()
	<-held
	renewed, lost, err := a.RenewLeases(ctx, terms, time.Hour) // bounded by the transaction's 5 s, were it to wait
	if err != nil || renewed[terms[0]] || lost[terms[0]] || renewed[terms[1]] || lost[terms[1]] || !renewed[terms[2]] {
		t.Fatalf("with a take of K in flight: renewed %v, lost %v, %v; want K2's renewed and K's two skipped", renewed, lost, err)
	}
	close(release)
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if renewed, _, err := a.RenewLeases(ctx, terms, time.Hour); err != nil || !renewed[terms[0]] || !renewed[terms[1]] {
		t.Fatalf("the next round: renewed %v, %v; want K's two renewed", renewed, err)
	}
}

// A renewal held up between reading the time and writing (its heartbeat
// descheduled on a loaded machine) while its leases lapsed and another
// process took an account of their key pair renews none of the others:
// one process owns a key pair's accounts at a time (the broker's rate
// limits are per key pair). Judged by the time it read, it renewed them,
// and two processes owned the key pair at once until one stepped down.
// Postgres only (SQLite's one writer excludes the take meanwhile).
func TestLateRenewalLeavesATakenKeyPair(t *testing.T) {
	t.Parallel()
	a, b, _ := onePostgres(t)
	ctx := t.Context()
	terms := heldByP1(t, a, "LV100001", "K", "LV100002", "K")
	read, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	store.OnRenewRead(a, func() { once.Do(func() { close(read); <-resume }) })
	type outcome struct {
		renewed, lost map[store.Term]bool
		err           error
	}
	done := make(chan outcome, 1)
	go func() {
		renewed, lost, err := a.RenewLeases(ctx, terms, time.Hour)
		done <- outcome{renewed, lost, err}
	}()
	<-read
	// Meanwhile both leases lapse (a zero TTL lapses at once) and the
	// other process takes the first account.
	for _, tm := range terms {
		if err := b.RenewLease(ctx, tm.Account, tm.Owner, tm.Term, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.AcquireLease(ctx, locator.Lease{Account: "LV100001", Owner: "p2-LV100001", PID: 2, Host: "h", Endpoint: "e2", PacingKey: "K", Process: "p2"}, time.Hour); err != nil {
		t.Fatalf("the take of a lapsed key pair: %v", err)
	}
	close(resume)
	got := <-done
	if got.err != nil || len(got.renewed) != 0 || !got.lost[terms[0]] || !got.lost[terms[1]] {
		t.Fatalf("the late renewal: renewed %v, lost %v, %v; want both lost", got.renewed, got.lost, got.err)
	}
	if l, err := b.LiveLease(ctx, "LV100002"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the second account: %v, %v; want lapsed (its key pair is p2's)", l, err)
	}
}

// A take that waited behind another take of its key pair (seconds, on a
// loaded database) times its leases from when it holds the lock, not from
// when it began: timed from before, they lapsed that much sooner, or had
// lapsed as they were written, and a desk starting on a loaded database
// lost the leases it had just taken. Postgres only (SQLite's one writer
// has no such wait).
func TestAcquireLeasesTimesItsLeasesOnceItHoldsTheKeyPair(t *testing.T) {
	t.Parallel()
	a, other, _ := onePostgres(t)
	taken, released := takeBehind(t, a, other, "K", []locator.Lease{
		{Account: "A", Owner: "p1-a", PID: 1, Host: "h", Endpoint: "e-a", PacingKey: "K", Process: "p1"},
		{Account: "B", Owner: "p1-b", PID: 1, Host: "h", Endpoint: "e-b", PacingKey: "K", Process: "p1"},
	})
	for _, l := range taken {
		if l.Heartbeat.Before(released) || l.Expires.Before(released.Add(time.Hour)) {
			t.Errorf("%s: taken at %s, lapses at %s; want timed from the lock's release at %s or later", l.Account, l.Heartbeat, l.Expires, released)
		}
	}
}

// takeBehind has a take ls (AcquireLeases, for an hour) while other holds
// key's key-pair lock in a transaction of its own until the take waits
// for it (store.HoldKeyPair), and returns the leases taken, every one of
// ls, and when that lock was given up.
func takeBehind(t *testing.T, a, other *store.Store, key string, ls []locator.Lease) ([]locator.Lease, time.Time) {
	t.Helper()
	type outcome struct {
		taken []locator.Lease
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		taken, _, err := a.AcquireLeases(t.Context(), ls, time.Hour)
		done <- outcome{taken, err}
	}()
	released, err := store.HoldKeyPair(t.Context(), other, key)
	if err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || len(got.taken) != len(ls) {
		t.Fatalf("the take behind the other: %v, %v; want every account", got.taken, got.err)
	}
	return got.taken, released
}

// A take of several key pairs locks each of them (one statement for them
// all, in their order): one of two key pairs held by another take's
// transaction, the second in order, holds the take up until it ends, and
// the take times its leases from then. Postgres only.
func TestAcquireLeasesLocksEachKeyPair(t *testing.T) {
	t.Parallel()
	a, other, _ := onePostgres(t)
	taken, released := takeBehind(t, a, other, "K2", []locator.Lease{
		{Account: "A", Owner: "p1-a", PID: 1, Host: "h", Endpoint: "e-a", PacingKey: "K1", Process: "p1"},
		{Account: "B", Owner: "p1-b", PID: 1, Host: "h", Endpoint: "e-b", PacingKey: "K2", Process: "p1"},
	})
	for _, l := range taken {
		if l.Heartbeat.Before(released) {
			t.Errorf("%s: taken at %s; want once K2's lock was released at %s or later", l.Account, l.Heartbeat, released)
		}
	}
}

// A process whose database session ended (it died) leaves its key pair
// whole to the next AcquireLeases, though its leases would live an hour
// more: every account of the pair is taken at its next term in the one
// statement (one time for all), none left behind for a take of its own,
// and the dead owner can write nothing more. Its leases no longer keep
// another account of the key pair from a take of its own either. While
// the process lives, all are refused. Postgres only (SQLite keeps no
// sessions).
func TestAcquireLeasesTakesADeadProcesssKeyPair(t *testing.T) {
	t.Parallel()
	a, b, dsn := onePostgres(t)
	ctx := t.Context()
	dead, next := "dead-"+t.Name(), "next-"+t.Name()
	leases := func(process string) []locator.Lease {
		var out []locator.Lease
		for _, acct := range []string{"LV100001", "LV100002"} {
			out = append(out, locator.Lease{Account: acct, Owner: process + "-" + acct, PID: 1, Host: "h", Endpoint: "e-" + process, PacingKey: "K", Process: process})
		}
		return out
	}
	old, _, err := a.AcquireLeases(ctx, leases(dead), time.Hour)
	if err != nil || len(old) != 2 {
		t.Fatalf("the first process's take: %v, %v; want both", old, err)
	}
	if taken, refused, err := b.AcquireLeases(ctx, leases(next), time.Hour); err != nil || len(taken) != 0 || len(refused) != 2 {
		t.Fatalf("while the first process lives: taken %v, refused %v, %v; want both refused", taken, refused, err)
	}
	third := locator.Lease{Account: "LV100003", Owner: next + "-LV100003", PID: 2, Host: "h", Endpoint: "e-" + next, PacingKey: "K", Process: next}
	var pair *store.KeyPairHeldError
	if _, err := b.AcquireLease(ctx, third, time.Hour); !errors.As(err, &pair) {
		t.Fatalf("another account of the key pair while the first process lives: %v; want a KeyPairHeldError", err)
	}
	storetest.EndSession(t, dsn, dead)
	if _, err := b.AcquireLease(ctx, third, time.Hour); err != nil {
		t.Fatalf("another account of the key pair once the first process's session ended: %v", err)
	}
	taken, refused, err := b.AcquireLeases(ctx, leases(next), time.Hour)
	if err != nil || len(taken) != 2 || len(refused) != 0 {
		t.Fatalf("once its session ended: taken %v, refused %v, %v; want both taken", taken, refused, err)
	}
	for i, l := range taken {
		if l.Term != old[i].Term+1 || !l.Since.Equal(taken[0].Since) {
			t.Errorf("%s taken at term %d since %v; want term %d, since %v as the other (one statement)", l.Account, l.Term, l.Since, old[i].Term+1, taken[0].Since)
		}
		if got, err := b.LiveLease(ctx, l.Account); err != nil || got.Owner != l.Owner || got.Term != l.Term {
			t.Errorf("%s's lease %+v, %v; want the next process's term %d", l.Account, got, err, l.Term)
		}
		fenced := a.Fenced(store.Fence{Account: old[i].Account, Owner: old[i].Owner, Term: old[i].Term})
		if err := fenced.Create(ctx, newLocate("w-"+l.Account)); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("a write under the dead owner's term of %s: %v; want ErrLeaseLost", l.Account, err)
		}
	}
}

// LiveLeasesByPID counts only live leases, by their owner's process.
func TestLiveLeasesByPID(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for i, acct := range []string{"A", "B", "C"} {
			l := locator.Lease{Account: acct, Owner: "o-" + acct, PID: 1 + i%2, Host: "h", Endpoint: "e-" + acct, PacingKey: "K" + acct, Process: "p"}
			if _, err := b.store.AcquireLease(ctx, l, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.store.RenewLease(ctx, "C", "o-C", 1, 0); err != nil { // lapsed now
			t.Fatal(err)
		}
		got, err := b.store.LiveLeasesByPID(ctx)
		if err != nil || len(got) != 2 || got[1] != 1 || got[2] != 1 {
			t.Errorf("LiveLeasesByPID() = %v, %v; want pid 1: 1 (C lapsed), pid 2: 1", got, err)
		}
	})
}

// onePostgres is two stores on one new Postgres database, as two processes
// open it (their lease times real, their records on a fake clock), and
// the database's URL.
func onePostgres(t *testing.T) (a, b *store.Store, dsn string) {
	t.Helper()
	dsn = storetest.Postgres(t)
	clk := clock.NewFake(time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC))
	return mustOpen(t, dsn, clk), mustOpen(t, dsn, clk), dsn
}

// An owner takes on the lease its fleet took for its account with the
// others of its key pair (AcquireLeases) in one statement: in its term,
// with its endpoint, address and pin written and its time renewed. A
// lease that lapsed, moved to another owner or is another process's is
// not taken on (ErrLeaseLost), and nothing is written: the owner then
// takes the account as any other would.
func TestTakeOnLease(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		lease := func(acct, owner, process string) locator.Lease {
			return locator.Lease{Account: acct, Owner: owner, PID: 1, Host: "h", Endpoint: "fleet", PacingKey: "K", Process: process}
		}
		taken, _, err := b.store.AcquireLeases(ctx, []locator.Lease{lease("A", "p1-a", "p1"), lease("B", "p1-b", "p1")}, time.Second)
		if err != nil || len(taken) != 2 {
			t.Fatalf("the fleet's take: %+v, %v", taken, err)
		}
		want := lease("A", "p1-a", "p1")
		want.PID, want.Endpoint, want.Address, want.Pin = 2, "a.sock", "10.0.0.1:7000", "pin-a"
		got, err := b.store.TakeOnLease(ctx, want, time.Hour)
		if err != nil || got.Term != taken[0].Term || got.Endpoint != "a.sock" || got.Address != want.Address || got.Pin != "pin-a" || got.PID != 2 ||
			!got.Since.Equal(taken[0].Since) || !got.Expires.After(taken[0].Expires) {
			t.Fatalf("taken on: %+v, %v; want term %d since %v, the owner's endpoint, address, pin and pid, and renewed past %v",
				got, err, taken[0].Term, taken[0].Since, taken[0].Expires)
		}
		// Both times are the database's as it writes them (one clock
		// read each, on Postgres microseconds apart).
		if d := got.Expires.Sub(got.Heartbeat); d < time.Hour || d > time.Hour+time.Millisecond || got.Heartbeat.Before(taken[0].Heartbeat) {
			t.Fatalf("taken on at %v until %v (%v); want until an hour after, from no sooner than the take's %v", got.Heartbeat, got.Expires, d, taken[0].Heartbeat)
		}
		if l, err := b.store.LiveLease(ctx, "A"); err != nil || *l != got {
			t.Fatalf("stored: %+v, %v; want %+v", l, err, got)
		}
		other := lease("B", "p1-b", "p2")
		if _, err := b.store.TakeOnLease(ctx, other, time.Hour); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("another process takes on B: %v; want ErrLeaseLost", err)
		}
		if err := b.store.RenewLease(ctx, "B", "p1-b", taken[1].Term, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.TakeOnLease(ctx, lease("B", "p1-b", "p1"), time.Hour); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("B lapsed: %v; want ErrLeaseLost", err)
		}
		if _, err := b.store.AcquireLease(ctx, lease("B", "p1-b2", "p1"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.TakeOnLease(ctx, lease("B", "p1-b", "p1"), time.Hour); !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("B moved to another owner: %v; want ErrLeaseLost", err)
		}
		if l, err := b.store.LiveLease(ctx, "B"); err != nil || l.Owner != "p1-b2" || l.Endpoint != "fleet" {
			t.Fatalf("B after the refused take-ons: %+v, %v; want p1-b2's, unchanged", l, err)
		}
	})
}
