package engine

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The loop is the one registry of live workflows. Every row of
// a history read reaches it (the poller knows no workflow), it routes a
// workflow's rows by quoteReqID, and a row of no open workflow (another
// process's quote, a finished one's) is left alone. After many workflows
// have finished, a long-lived loop holds nothing for them.
func TestRegistryForgetsFinishedWorkflows(t *testing.T) {
	t.Parallel()
	l, st, clk := groupBundle(t)
	const n = 200
	finish := func(i int) {
		w := createLocate(t, l, st, fmt.Sprintf("S%03d", i))
		l.step(w, workflow.QuoteTurn{})
		l.handle(t.Context(), writtenEv{id: w.ID, sym: w.Symbol, in: workflow.Written{Op: workflow.OpQuote, Outcome: workflow.Done, At: clk.Now()}})
		if got := l.open[w.ID]; got == nil || got.State != states.Pending && got.State != states.Quoting {
			t.Fatalf("%s after its quote: %v, want open, quoting or pending", w.ID, got)
		}
		// One read: a stranger's row, the workflow's rejection, a
		// finished workflow's row again.
		rows := []brokerclient.HistoryRow{
			{QuoteReqID: "STRANGER" + w.ID, Symbol: w.Symbol, LocateStatus: brokercode.LocateStatusOffered},
			{QuoteReqID: w.QuoteReqID, Symbol: w.Symbol, LocateStatus: brokercode.LocateStatusRejected, LocateError: 56},
		}
		l.handle(t.Context(), rowsEv{rows: rows})
		l.handle(t.Context(), rowsEv{rows: rows})
		got, err := st.Get(t.Context(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Terminal() {
			t.Fatalf("%s is %s after its rejected row, want it finished", w.ID, got.State)
		}
		if n := writesQueued(l); n != 1 {
			t.Fatalf("%s: %d writes, want its one quote", w.ID, n)
		}
	}
	for i := range n {
		finish(i)
	}
	// Past every symbol's quote spacing, one more: the spacing of the
	// symbols quoted before is over, and none of them is held.
	clk.Advance(time.Minute)
	finish(n)
	if len(l.lastQuote) != 1 {
		t.Errorf("the loop spaces %d symbols' quotes a minute after they left, want only the last one's", len(l.lastQuote))
	}
	sizes := map[string]int{
		"open": len(l.open), "byQuote": len(l.byQuote), "busy": len(l.busy), "books": len(l.books),
		"askers": len(l.askers), "waiters": len(l.waiters), "queue": len(l.queue), "quoting": len(l.quoting),
		"retries": len(l.retries),
	}
	for name, size := range sizes {
		if size != 0 {
			t.Errorf("after %d finished workflows the loop's %s holds %d entries, want 0", n, name, size)
		}
	}
}

// An idle account's inventory reads (every 5 s) write a
// snapshot only when the inventory changed, not one row per read: three
// reads of the same rows and one changed leave two snapshots. The next
// owner's first read (a restart, a takeover's thousands) compares with the
// last snapshot saved: the same rows save none, others one.
func TestInventorySavedWhenChanged(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "inventory.db")
	same := []brokerclient.InventoryRow{{AccountID: "LV100001", Symbol: "HTBX", Available: 300, LocateType: 3}}
	changed := []brokerclient.InventoryRow{{AccountID: "LV100001", Symbol: "HTBX", Available: 200, LocateType: 3}}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, run := range []struct {
		reads [][]brokerclient.InventoryRow
		want  int
	}{
		{[][]brokerclient.InventoryRow{same, same, same, changed}, 2},
		{[][]brokerclient.InventoryRow{changed}, 2},
		{[][]brokerclient.InventoryRow{same}, 3},
	} {
		l, _, clk := groupBundleAt(t, path)
		for _, rows := range run.reads {
			clk.Advance(5 * time.Second)
			l.handle(t.Context(), inventoryEv{rows: rows, at: clk.Now()})
		}
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM inventory_snapshots WHERE account = ?`, "LV100001").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != run.want {
			t.Errorf("%d inventory snapshots after a start's %d reads; want %d", n, len(run.reads), run.want)
		}
	}
}
