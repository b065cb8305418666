package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// groupBundle is a loop that is never run: the test takes its steps by
// hand and looks at the store and the write mailbox.
func groupBundle(t *testing.T) (*loop, *store.Store, *clock.Fake) {
	t.Helper()
	return groupBundleAt(t, filepath.Join(t.TempDir(), "group.db"))
}

// groupBundleAt is groupBundle on the SQLite file at path.
func groupBundleAt(t *testing.T, path string) (*loop, *store.Store, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC))
	st, err := store.Open(t.Context(), path, clk)
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

// writesQueued counts the writes queued (an engine not started runs
// none) and forgets them.
func writesQueued(l *loop) int {
	p := l.e.writes
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.jobs)
	p.jobs = nil
	return n
}

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

func createOrder(t *testing.T, l *loop, st *store.Store, symbol string) *Order {
	t.Helper()
	o := &Order{ClientOrderID: "co-" + symbol, Account: "LV100001", Symbol: symbol, Side: "Sell", OpenClose: "Open",
		OrderType: "Limit", TimeInForce: "Day", Quantity: 10, LimitPrice: decimal.RequireFromString("10.00")}
	if err := st.CreateOrder(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	l.orders.track(o)
	return o
}

// An order's step takes the workflows' pipeline: it
// commits in the batch's one transaction, its transition is logged, and
// its placement leaves only after the commit.
func TestOrderStepsCommitWithTheBatch(t *testing.T) {
	t.Parallel()
	l, st, _ := groupBundle(t)
	a, o := createLocate(t, l, st, "AAAA"), createOrder(t, l, st, "BBBB")
	l.grouped(func() {
		l.step(a, workflow.QuoteTurn{})
		l.orders.step(l, o, workflow.OrderSend{})
		if n := writesQueued(l); n != 0 {
			t.Errorf("%d writes left before their records committed", n)
		}
		if got, _ := st.GetOrder(context.Background(), o.ClientOrderID); got.State != states.OrderIntent {
			t.Errorf("order stored %s mid-batch, want intent", got.State)
		}
	})
	got, err := st.GetOrder(t.Context(), o.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != states.OrderSent || got.Version != 2 || l.orders.open[o.ClientOrderID].State != states.OrderSent {
		t.Errorf("order stored %s v%d, held %s; want sent v2", got.State, got.Version, l.orders.open[o.ClientOrderID].State)
	}
	log, err := st.OrderTransitions(t.Context(), o.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].To != states.OrderIntent || log[1].From != states.OrderIntent || log[1].To != states.OrderSent || log[1].Event != states.Send {
		t.Errorf("order log %+v, want create then intent -> sent", log)
	}
	if n := writesQueued(l); n != 2 {
		t.Errorf("%d writes handed to the workers after the commit, want the quote and the placement", n)
	}
}

// An order whose record cannot be saved takes the
// workflows' retry path: its input is tried again a second apart, then it
// is given up (workflow.Abandon), and nothing is sent meanwhile.
func TestOrderRecordNotSavedIsRetriedThenAbandoned(t *testing.T) {
	t.Parallel()
	l, st, clk := groupBundle(t)
	o := createOrder(t, l, st, "BBBB")
	st.Close() // the database fails from here on
	l.orders.step(l, o, workflow.OrderSend{})
	for attempt := 1; attempt <= persistRetries+1; attempt++ {
		if len(l.retries) != 1 {
			t.Fatalf("attempt %d: retries %+v, want the order's input once", attempt, l.retries)
		}
		if _, ok := l.retries[0].in.(workflow.OrderInput); !ok {
			t.Fatalf("attempt %d: retrying %T, want an order's input", attempt, l.retries[0].in)
		}
		_, abandon := l.retries[0].in.(workflow.Abandon)
		if want := attempt > persistRetries; abandon != want {
			t.Fatalf("attempt %d: retrying %T, want Abandon %v", attempt, l.retries[0].in, want)
		}
		clk.Advance(time.Second)
		l.due()
	}
	if n := writesQueued(l); n != 0 {
		t.Errorf("%d writes left for an order whose record was never saved", n)
	}
}
