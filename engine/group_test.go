package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// groupBundle is a loop that is never run: the test takes its steps by
// hand and looks at the store and the write mailbox.
func groupBundle(t *testing.T) (*loop, *store.Store, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC))
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "group.db"), clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	client, err := brokerclient.NewClient(brokerclient.WithBaseURL("http://127.0.0.1:1"), brokerclient.WithCredentials("K", "S"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Client: client, Store: st, Clock: clk, Account: "LV100001"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := e.load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return l, st, clk
}

func createLocate(t *testing.T, l *loop, st *store.Store, symbol string) *Workflow {
	t.Helper()
	w := l.e.newWorkflow(states.Locate, "", symbol, 100)
	w.Policy = workflow.Policy{AutoAccept: true}
	if err := st.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	l.track(w)
	return w
}

func writesQueued(l *loop) int { return len(l.e.writes.take()) }

// The steps of one batch of events commit together, and their effects
// leave only after the commit.
func TestGroupedStepsCommitTogetherThenRelease(t *testing.T) {
	t.Parallel()
	l, st, _ := groupBundle(t)
	a, b := createLocate(t, l, st, "AAAA"), createLocate(t, l, st, "BBBB")
	l.grouped(func() {
		l.step(a, workflow.QuoteTurn{})
		l.step(b, workflow.QuoteTurn{})
		if n := writesQueued(l); n != 0 {
			t.Errorf("%d quotes left before their records committed", n)
		}
		if got, _ := st.Get(context.Background(), a.ID); got.State != states.Requested {
			t.Errorf("%s is %s in the store mid-batch, want requested", a.ID, got.State)
		}
	})
	for _, w := range []*Workflow{a, b} {
		if got, _ := st.Get(t.Context(), w.ID); got.State != states.Quoting || got.Version != 2 {
			t.Errorf("%s stored %s v%d, want quoting v2", w.ID, got.State, got.Version)
		}
		if l.open[w.ID].State != states.Quoting {
			t.Errorf("%s held as %s, want quoting", w.ID, l.open[w.ID].State)
		}
	}
	if n := writesQueued(l); n != 2 {
		t.Errorf("%d quotes handed to the workers after the commit, want 2", n)
	}
}

// When one workflow of a batch was moved by another process, the grouped
// transaction fails as a whole; the others are then committed one by one
// and the moved one takes the stored record, with no effect for it.
func TestGroupedCommitFallsBackPerWorkflow(t *testing.T) {
	t.Parallel()
	l, st, clk := groupBundle(t)
	a, b := createLocate(t, l, st, "AAAA"), createLocate(t, l, st, "BBBB")
	moved := workflow.StepWorkflow(b, workflow.Abandon{Reason: "another process"}, workflow.Env{Now: clk.Now()})
	if _, err := st.Commit(t.Context(), b, moved.Next, moved.Transition); err != nil {
		t.Fatal(err)
	}
	l.grouped(func() {
		l.step(a, workflow.QuoteTurn{})
		l.step(b, workflow.QuoteTurn{})
	})
	if got, _ := st.Get(t.Context(), a.ID); got.State != states.Quoting {
		t.Errorf("%s stored %s, want quoting", a.ID, got.State)
	}
	if l.open[b.ID] != nil {
		t.Errorf("%s still open here; want the stored (failed) record taken", b.ID)
	}
	if n := writesQueued(l); n != 1 {
		t.Errorf("%d quotes handed to the workers, want 1 (none for the moved workflow)", n)
	}
}

// The latest inventory stands in for a read only while it is young and no
// change of the symbol's inventory came near it.
func TestFreshFor(t *testing.T) {
	t.Parallel()
	l, _, clk := groupBundle(t)
	if l.freshFor([]string{"AAAA"}) {
		t.Error("no inventory read yet, but fresh")
	}
	l.inventory, l.invAt = []brokerclient.InventoryRow{}, clk.Now()
	l.touched["BBBB"] = clk.Now().Add(-time.Second)
	l.touched["CCCC"] = clk.Now().Add(-time.Minute)
	for _, tc := range []struct {
		symbols []string
		after   time.Duration
		want    bool
	}{
		{[]string{"AAAA"}, 0, true},
		{[]string{"AAAA", "CCCC"}, 0, true},
		{[]string{"AAAA", "BBBB"}, 0, false}, // BBBB filled while the read may have been in flight
		{[]string{"AAAA"}, inventoryFresh + time.Millisecond, false},
	} {
		clk.Advance(tc.after)
		if got := l.freshFor(tc.symbols); got != tc.want {
			t.Errorf("freshFor(%v) %s after the read = %v, want %v", tc.symbols, tc.after, got, tc.want)
		}
	}
}
