package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// TestFindKeepsToItsAccount proves Find is scoped to its account: with two
// accounts in one database (a fleet's), a workflow of one is never found
// from the other, whether named by its id, its quoteReqID or a prefix of
// its id, while its own account (and the whole database, account "") finds
// it by each.
func TestFindKeepsToItsAccount(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		mine := newLocate("wf-mine-1")
		other := newLocate("wf-other-1")
		other.Account = "LV200002"
		for _, w := range []*workflow.Workflow{mine, other} {
			if err := b.store.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		refs := map[string]string{"id": other.ID, "quoteReqID": other.QuoteReqID, "prefix": "wf-other"}
		for name, ref := range refs {
			if w, err := b.store.Find(ctx, mine.Account, ref); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Find(%s, %s %q) = %v, %v; want ErrNotFound", mine.Account, name, ref, w, err)
			}
			for _, account := range []string{other.Account, ""} {
				w, err := b.store.Find(ctx, account, ref)
				if err != nil || w.ID != other.ID {
					t.Errorf("Find(%q, %s %q) = %v, %v; want %s", account, name, ref, w, err, other.ID)
				}
			}
		}
		// A prefix both accounts share names only the caller's own.
		w, err := b.store.Find(ctx, mine.Account, "wf-")
		if err != nil || w.ID != mine.ID {
			t.Errorf("Find(%s, prefix wf-) = %v, %v; want %s", mine.Account, w, err, mine.ID)
		}
	})
}

// A workflow created long ago that quoted a moment ago (a batch's queue, a
// quote sent again) is among those updated since, not those created since:
// the engine rebuilds each symbol's quote spacing from the former at a
// restart (spec "Limits": 30 s per symbol per account).
func TestListUpdatedSince(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		if err := b.store.Create(ctx, newLocate("w1")); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(70 * time.Second)
		created, err := b.store.Get(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := commit(t, b.store, created, workflow.QuoteTurn{Available: 0}, b.clock.Now()); err != nil {
			t.Fatal(err)
		}
		minute := b.clock.Now().Add(-time.Minute)
		if ws, err := b.store.List(ctx, store.Filter{UpdatedSince: minute}); err != nil || len(ws) != 1 || ws[0].ID != "w1" {
			t.Errorf("updated in the last minute: %v, %v; want w1", ws, err)
		}
		if ws, err := b.store.List(ctx, store.Filter{Since: minute}); err != nil || len(ws) != 0 {
			t.Errorf("created in the last minute: %v, %v; want none", ws, err)
		}
	})
}

// An account's workflows under any spelling of its id (broker ids are
// case-insensitive, spec "Accounts"; a workflow keeps its caller's
// spelling) are listed with AnyCase, and no other account's: the cash
// ledger's check of one account reads only its own fills (at 10,000
// accounts it read every account's at each sync).
func TestListAnyCase(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		for id, acct := range map[string]string{"upper": "LV100001", "lower": "lv100001", "other": "LV100002"} {
			w := newLocate(id)
			w.Account = acct
			if err := b.store.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		ws, err := b.store.List(ctx, store.Filter{Account: "Lv100001", AnyCase: true, Kind: states.Locate, Since: b.clock.Now().Add(-time.Hour)})
		if got := ids(ws); err != nil || !slices.Equal(got, []string{"lower", "upper"}) && !slices.Equal(got, []string{"upper", "lower"}) {
			t.Errorf("Lv100001 in any case: %v, %v; want lower and upper", got, err)
		}
		if ws, err := b.store.List(ctx, store.Filter{Account: "lv100001"}); err != nil || len(ws) != 1 || ws[0].ID != "lower" {
			t.Errorf("lv100001 exactly: %v, %v; want lower", ids(ws), err)
		}
	})
}
