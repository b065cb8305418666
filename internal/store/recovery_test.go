package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Recoveries reads what each account's owner starts from, for many
// accounts in one go: its open workflows, those updated since the time
// asked (ended or not), its open orders, its refused and MAC-pending
// flags, its latest check (with the key pair it was made with) and its
// last inventory snapshot, every account named having one, each only its
// own.
func TestRecoveries(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		locate := func(id, account string, end bool) {
			t.Helper()
			w := &workflow.Workflow{ID: id, Kind: states.Locate, Account: account, Symbol: "HTBX", Requested: 100, QuoteReqID: id + "-q",
				Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05"), AutoAccept: true}}
			if err := b.store.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			if end {
				ended := *w
				ended.State = states.Failed
				if _, err := b.store.Commit(ctx, w, &ended, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		locate("wf-long-ended", "A", true)
		b.clock.Advance(time.Hour)
		since := b.clock.Now()
		locate("wf-open", "A", false)
		locate("wf-ended", "A", true)
		locate("wf-b", "B", false)
		order := &workflow.Order{ClientOrderID: "ord-a", Account: "A", Symbol: "HTBX", Side: "Sell", OpenClose: "Open",
			OrderType: "Limit", TimeInForce: "Day", Quantity: 100, LimitPrice: decimal.RequireFromString("10")}
		if err := b.store.CreateOrder(ctx, order); err != nil {
			t.Fatal(err)
		}
		if err := b.store.SetRefused(ctx, "B", []locator.RefusedRow{{Kind: "workflow", ID: "wf-x", Symbol: "HTBX", Reason: "r"}}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ acct, key, env string }{{"A", "K", "paper"}, {"A", "K", "paper"}, {"B", "K", "paper"}, {"B", "K2", "live"}} {
			if err := b.store.NoteEnvChecked(ctx, c.acct, c.key, c.env); err != nil {
				t.Fatal(err)
			}
		}
		for _, rows := range []string{`[{"symbol":"HTBX","available":300}]`, `[{"symbol":"HTBX","available":200}]`} {
			if err := b.store.SaveInventory(ctx, "A", []byte(rows)); err != nil {
				t.Fatal(err)
			}
		}
		recs, err := b.store.Recoveries(ctx, []string{"A", "B", "C"}, since)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(ws []*workflow.Workflow) []string {
			var out []string
			for _, w := range ws {
				out = append(out, w.ID)
			}
			return out
		}
		a, bb, c := recs["A"], recs["B"], recs["C"]
		if got := ids(a.Open); !slices.Equal(got, []string{"wf-open"}) {
			t.Errorf("A open %v; want [wf-open]", got)
		}
		if got := ids(a.Recent); !slices.Equal(got, []string{"wf-ended", "wf-open"}) {
			t.Errorf("A updated since %v; want [wf-ended wf-open] (oldest first, then by id), not the one ended an hour before", got)
		}
		if len(a.Orders) != 1 || a.Orders[0].ClientOrderID != "ord-a" {
			t.Errorf("A orders %+v; want ord-a", a.Orders)
		}
		if a.Refused || !bb.Refused {
			t.Errorf("refused listed: A %v, B %v; want B's only", a.Refused, bb.Refused)
		}
		if a.Checked != (store.EnvCheck{PacingKey: "K", Env: "paper"}) || bb.Checked != (store.EnvCheck{PacingKey: "K2", Env: "live"}) {
			t.Errorf("checks A %+v, B %+v; want A's with K, B's latest with K2", a.Checked, bb.Checked)
		}
		if got := string(a.Inventory); got != `[{"symbol":"HTBX","available":200}]` || bb.Inventory != nil {
			t.Errorf("last inventory snapshots: A %s, B %s; want A's latest, none of B", got, bb.Inventory)
		}
		if got := ids(bb.Open); !slices.Equal(got, []string{"wf-b"}) {
			t.Errorf("B open %v; want [wf-b]", got)
		}
		if c == nil || len(c.Open)+len(c.Recent)+len(c.Orders) != 0 || c.Refused || c.MACsPending || c.Checked != (store.EnvCheck{}) || c.Inventory != nil {
			t.Errorf("C, of which nothing is stored: %+v; want an empty recovery", c)
		}
	})
}
