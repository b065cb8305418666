package store_test

import (
	"testing"
	"time"
)

// An offer is noticed once, and its links are used once, as a store
// opened again (a restart) still says.
func TestOfferLinksOnce(t *testing.T) {
	forEachDriver(t, testOfferLinksOnce)
}

func testOfferLinksOnce(t *testing.T, b *testBundle) {
	ctx := t.Context()
	first, err := b.store.NoticeOffer(ctx, "LV100001", "wf-1", "q-1")
	if err != nil || !first {
		t.Fatalf("first notice: %v, %v; want true", first, err)
	}
	if again, err := b.store.NoticeOffer(ctx, "LV100001", "wf-1", "q-1"); err != nil || again {
		t.Fatalf("second notice: %v, %v; want false", again, err)
	}
	if other, err := b.store.NoticeOffer(ctx, "LV100001", "wf-1", "q-2"); err != nil || !other {
		t.Fatalf("another leg's notice: %v, %v; want true", other, err)
	}
	usedAt := b.clock.Now()
	if _, first, err := b.store.UseOfferLink(ctx, "LV100001", "wf-1", "q-1", "approve"); err != nil || !first {
		t.Fatalf("first use: %v, %v; want true", first, err)
	}
	b.clock.Advance(time.Second)
	reopened := mustOpen(t, b.dsn, b.clock)
	prev, first, err := reopened.UseOfferLink(ctx, "LV100001", "wf-1", "q-1", "decline")
	if err != nil || first || prev.Answer != "approve" || !prev.At.Equal(usedAt) {
		t.Fatalf("second use after reopening: %+v, %v, %v; want the first use (approve at %s)", prev, first, err, usedAt)
	}
	if again, err := reopened.NoticeOffer(ctx, "LV100001", "wf-1", "q-1"); err != nil || again {
		t.Fatalf("notice after reopening: %v, %v; want false", again, err)
	}
	// A link of an offer this database never noticed (another owner's
	// database sent it) is used once all the same.
	if _, first, err := reopened.UseOfferLink(ctx, "LV100001", "wf-2", "q-9", "decline"); err != nil || !first {
		t.Fatalf("use of an offer never noticed: %v, %v; want true", first, err)
	}
	if _, first, err := reopened.UseOfferLink(ctx, "LV100001", "wf-2", "q-9", "decline"); err != nil || first {
		t.Fatalf("second use of an offer never noticed: %v, %v; want false", first, err)
	}
}
