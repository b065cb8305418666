package store_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Rows an older locator wrote have no MAC. The migration lists their
// accounts as pending; the first owner of each to start with the key
// (AdoptMACs) MACs that account's open rows once, and from then on a row
// without a MAC stays without one: it is refused, never blessed. An
// account the migration did not list (first used after it) has nothing
// blessed, nor has one of whose rows one already carries the key's MAC.
func TestAdoptMACsOnceAfterTheMigration(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		key := workflow.RowKey("the account's row key")
		locate := func(st *store.Store, id, account string, mac bool) *workflow.Workflow {
			t.Helper()
			w := &workflow.Workflow{ID: id, Kind: states.Locate, Account: account, Symbol: "HTBX", Requested: 100, QuoteReqID: id + "-q",
				Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05"), AutoAccept: true}}
			if mac {
				w.MAC = key.Workflow(w)
			}
			if err := st.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			return w
		}
		old := locate(b.store, "wf-old", "LV100001", false)
		ended := locate(b.store, "wf-ended", "LV100001", false)
		ended2 := *ended
		ended2.State = states.Failed
		if _, err := b.store.Commit(ctx, ended, &ended2, nil); err != nil {
			t.Fatal(err)
		}
		order := &workflow.Order{ClientOrderID: "ord-old", Account: "LV100001", Symbol: "HTBX", Side: "Sell", OpenClose: "Open",
			OrderType: "Limit", TimeInForce: "Day", Quantity: 100, LimitPrice: decimal.RequireFromString("10")}
		if err := b.store.CreateOrder(ctx, order); err != nil {
			t.Fatal(err)
		}
		locate(b.store, "wf-old2", "LV100002", false)
		if err := store.UndoRowMACs(ctx, b.store); err != nil {
			t.Fatal(err)
		}
		st := mustOpen(t, b.dsn, b.clock) // an upgraded locator: the migration runs on the old rows

		// LV100002's owner ran after the upgrade and wrote a row with its MAC:
		// its account is not blessed, whatever the pending list says.
		locate(st, "wf-new2", "LV100002", true)
		if n, err := st.AdoptMACs(ctx, "LV100002", key); err != nil || n != 0 {
			t.Fatalf("LV100002 with a MACed row: blessed %d, %v; want none", n, err)
		}
		if n, err := st.AdoptMACs(ctx, "LV100001", key); err != nil || n != 2 {
			t.Fatalf("LV100001's first start: blessed %d, %v; want its open workflow and order", n, err)
		}
		w, err := st.Get(ctx, old.ID)
		if err != nil || !key.VerifyWorkflow(w) {
			t.Fatalf("the old open workflow after adoption: %+v, %v; want its MAC", w, err)
		}
		o, err := st.GetOrder(ctx, order.ClientOrderID)
		if err != nil || !key.VerifyOrder(o) {
			t.Fatalf("the old open order after adoption: %+v, %v; want its MAC", o, err)
		}
		if w, err := st.Get(ctx, ended.ID); err != nil || w.MAC != "" {
			t.Fatalf("an ended workflow: MAC %q, %v; want none (it is never resumed)", w.MAC, err)
		}

		// A writer's rows after that are never blessed: not on LV100001
		// again, not on LV100002, not on an account first used now.
		for _, f := range []struct{ id, account string }{{"wf-forged", "LV100001"}, {"wf-forged2", "LV100002"}, {"wf-forged3", "LV300001"}} {
			locate(st, f.id, f.account, false)
			if n, err := st.AdoptMACs(ctx, f.account, key); err != nil || n != 0 {
				t.Fatalf("%s after its first start: blessed %d, %v; want none", f.account, n, err)
			}
			if w, err := st.Get(ctx, f.id); err != nil || w.MAC != "" || key.VerifyWorkflow(w) {
				t.Fatalf("%s: MAC %q, %v; want none", f.id, w.MAC, err)
			}
		}
		if w, err := st.Get(ctx, "wf-old2"); err != nil || w.MAC != "" {
			t.Fatalf("LV100002's old row: MAC %q, %v; want none (its account had a MACed row)", w.MAC, err)
		}
	})
}

// What an owner refused at its start is listed for `locator status`, and
// its next start's finding replaces its account's list, not another's.
func TestRefusedRowsReplacedPerAccount(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		set := func(account string, rows ...locator.RefusedRow) {
			t.Helper()
			if err := b.store.SetRefused(ctx, account, rows); err != nil {
				t.Fatal(err)
			}
		}
		set("LV100001", locator.RefusedRow{Kind: "workflow", ID: "wf-a", Symbol: "HTBX", Reason: "r"},
			locator.RefusedRow{Kind: "order", ID: "ord-a", Symbol: "HTBX", Reason: "r"})
		set("LV100002", locator.RefusedRow{Kind: "workflow", ID: "wf-b", Symbol: "AAPL", Reason: "r"})
		set("LV100001", locator.RefusedRow{Kind: "workflow", ID: "wf-c", Symbol: "HTBX", Reason: "r"})
		got, err := b.store.Refused(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.Account+"/"+r.Kind+"/"+r.ID+"/"+r.Symbol)
			if r.At.IsZero() {
				t.Errorf("%s: no time", r.ID)
			}
		}
		want := []string{"LV100001/workflow/wf-c/HTBX", "LV100002/workflow/wf-b/AAPL"}
		if len(ids) != len(want) || ids[0] != want[0] || ids[1] != want[1] {
			t.Fatalf("refused rows %v, want %v", ids, want)
		}
	})
}
