package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

type testBundle struct {
	dsn   string
	clock *clock.Fake
	store *store.Store
}

// forEachDriver runs test on a fresh database of each driver (the store
// conformance suite: every test here runs on SQLite and on Postgres).
func forEachDriver(t *testing.T, test func(t *testing.T, b *testBundle)) {
	t.Parallel()
	for _, d := range storetest.Drivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			b := &testBundle{dsn: storetest.DSN(t, d), clock: clock.NewFake(time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC))}
			b.store = mustOpen(t, b.dsn, b.clock)
			test(t, b)
		})
	}
}

func mustOpen(t *testing.T, path string, clk clock.Clock) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), path, clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newLocate(id string) *workflow.Workflow {
	return &workflow.Workflow{
		ID: id, Kind: states.Locate, Account: "LV100001", Symbol: "HTBX", Requested: 250,
		QuoteReqID: "q-" + id, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.02"), AutoAccept: true},
	}
}

// commit steps w with in and commits the result on s.
func commit(t *testing.T, s *store.Store, w *workflow.Workflow, in workflow.Input, now time.Time) (*workflow.Workflow, error) {
	t.Helper()
	step := workflow.StepWorkflow(w, in, workflow.Env{Now: now})
	if step.Err != nil || step.Next == nil {
		t.Fatalf("step %T from %s: %+v", in, w.State, step)
	}
	return s.Commit(context.Background(), w, step.Next, step.Transition)
}

func TestCreateApplyAndLog(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if err := b.store.Create(ctx, newLocate("w1")); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(2 * time.Second)
		created, err := b.store.Get(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		w, err := commit(t, b.store, created, workflow.QuoteTurn{Available: 0}, b.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if w.State != states.Quoting || w.Version != 2 || !w.SentAt.Equal(b.clock.Now()) || w.Quantity != 300 {
			t.Errorf("after send: %+v", w)
		}
		// Compare-and-set: a change from a state the workflow has left fails.
		_, err = commit(t, b.store, created, workflow.QuoteTurn{Available: 0}, b.clock.Now())
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("stale change: %v, want ErrConflict", err)
		}
		w, err = commit(t, b.store, w, workflow.Rows{Latest: "q-w1", Raw: []byte(`{"locateStatus":65}`), Legs: map[string]workflow.Leg{
			"q-w1": {Status: brokercode.LocateStatusOffered, Price: decimal.RequireFromString("0.0150"), Type: 1, Shares: 300},
		}}, b.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.store.ByQuoteReqID(ctx, "q-w1.SU")
		if err != nil {
			t.Fatal(err)
		}
		if got.Legs["q-w1"].Price.String() != "0.015" || !got.ExpiresAt.Equal(w.ExpiresAt) || got.Policy.MaxPrice.String() != "0.02" || !got.Policy.AutoAccept {
			t.Errorf("round trip: %+v", got)
		}
		log, err := b.store.Transitions(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 3 || log[0].To != states.Requested || log[1].Event != states.Send || log[2].RawRow != `{"locateStatus":65}` {
			t.Errorf("log %+v", log)
		}
	})
}

// A quote sent again under a new quoteReqID is saved with
// the lost one's id, and either id finds the workflow.
func TestRequoteKeepsBothIDs(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if err := b.store.Create(ctx, newLocate("w1")); err != nil {
			t.Fatal(err)
		}
		w, err := b.store.Get(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		if w, err = commit(t, b.store, w, workflow.QuoteTurn{}, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(workflow.DefaultRules.SettleGrace + time.Second)
		if w, err = commit(t, b.store, w, workflow.Tick{}, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if w.State != states.Requoting || w.LostQuoteReqID != "q-w1" || w.QuoteReqID == "q-w1" {
			t.Fatalf("after the requote: %s, quote %s, lost %s", w.State, w.QuoteReqID, w.LostQuoteReqID)
		}
		for _, id := range []string{"q-w1", w.QuoteReqID + ".SU"} {
			got, err := b.store.ByQuoteReqID(ctx, id)
			if err != nil {
				t.Fatalf("by %s: %v", id, err)
			}
			if got.ID != "w1" || got.QuoteReqID != w.QuoteReqID || got.LostQuoteReqID != "q-w1" {
				t.Errorf("by %s: %+v", id, got)
			}
		}
		if _, err := b.store.ByQuoteReqID(ctx, ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("by an empty id: %v, want ErrNotFound", err)
		}
	})
}

// Two goroutines race to move the same workflow: exactly one wins.
func TestCompareAndSetUnderConcurrency(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if err := b.store.Create(ctx, newLocate("w1")); err != nil {
			t.Fatal(err)
		}
		created, err := b.store.Get(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		other := mustOpen(t, b.dsn, b.clock) // a second process on the same file
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, conflicts := 0, 0
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := b.store
				if i%2 == 1 {
					s = other
				}
				_, err := commit(t, s, created, workflow.QuoteTurn{}, b.clock.Now())
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrConflict):
					conflicts++
				default:
					t.Errorf("unexpected: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 || conflicts != 19 {
			t.Errorf("wins %d conflicts %d, want 1 and 19", wins, conflicts)
		}
	})
}

func TestListAndReopen(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for _, id := range []string{"a", "b", "c"} {
			if err := b.store.Create(ctx, newLocate(id)); err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(time.Second)
		}
		wb, err := b.store.Get(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := commit(t, b.store, wb, workflow.Begin{Available: 300}, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.store.SaveInventory(ctx, "LV100001", []byte(`[{"symbol":"HTBX","available":300}]`)); err != nil {
			t.Fatal(err)
		}
		b.store.Close()

		s := mustOpen(t, b.dsn, b.clock) // migrations run again: nothing to do
		open, err := s.List(ctx, store.Filter{Account: "LV100001", Open: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != 2 || open[0].ID != "a" || open[1].ID != "c" {
			t.Errorf("open workflows %v", ids(open))
		}
		newest, _ := s.List(ctx, store.Filter{Limit: 1})
		if len(newest) != 1 || newest[0].ID != "c" {
			t.Errorf("newest %v", ids(newest))
		}
		rows, at, err := s.LatestInventory(ctx, "LV100001")
		if err != nil || string(rows) != `[{"symbol":"HTBX","available":300}]` || at.IsZero() {
			t.Errorf("inventory %s %v %v", rows, at, err)
		}
		if _, err := s.Get(ctx, "zzz"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown id: %v", err)
		}
		if err := s.Create(ctx, newLocate("a")); err == nil {
			t.Error("duplicate id accepted")
		}
	})
}

func ids(ws []*workflow.Workflow) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}

// The last request on a key pair is kept across owners: the latest wins.
// It is written only under an owner's current term: an unfenced
// store is refused, and once another owner took the account the stepped-
// down owner's write fails with ErrLeaseLost and leaves the row as it was.
func TestLastRequest(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if at, err := b.store.LastRequest(ctx, "k1"); err != nil || !at.IsZero() {
			t.Fatalf("none recorded: %v %v", at, err)
		}
		a := locator.Lease{Account: "LV100001", Owner: "a", PID: 1, Host: "h1", Endpoint: "e1"}
		if _, err := b.store.AcquireLease(ctx, a, time.Hour); err != nil {
			t.Fatal(err)
		}
		owner := b.store.Fenced(store.Fence{Account: "LV100001", Owner: "a", Term: 1})
		later := b.clock.Now()
		if err := b.store.SetLastRequest(ctx, "k1", later.Add(time.Hour)); err == nil {
			t.Error("an unfenced store wrote the pacing row")
		}
		for _, at := range []time.Time{later, later.Add(-time.Second)} {
			if err := owner.SetLastRequest(ctx, "k1", at); err != nil {
				t.Fatal(err)
			}
		}
		// a stalls: its lease lapses, b takes term 2, and a's last write
		// (a later time, which would win) is fenced off.
		if err := b.store.RenewLease(ctx, "LV100001", "a", 1, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.AcquireLease(ctx, locator.Lease{Account: "LV100001", Owner: "b", PID: 2, Host: "h2", Endpoint: "e2"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := owner.SetLastRequest(ctx, "k1", later.Add(time.Minute)); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("a stepped-down owner's pacing write: %v, want ErrLeaseLost", err)
		}
		if at, err := b.store.LastRequest(ctx, "k1"); err != nil || !at.Equal(later) {
			t.Errorf("LastRequest %v %v, want the later %v", at, err, later)
		}
		if at, _ := b.store.LastRequest(ctx, "k2"); !at.IsZero() {
			t.Errorf("another key pair: %v", at)
		}
	})
}
