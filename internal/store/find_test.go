package store_test

import (
	"errors"
	"testing"

	"github.com/locatorhq/locator/internal/store"
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
