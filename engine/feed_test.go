package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// floodedBatch runs a batch of n locates (about four updates each) to
// its end while a subscriber made before it reads nothing, and returns
// the subscription and every update the engine published, in order. That
// every locate ends proves a reader that reads nothing never stalls the
// engine.
func floodedBatch(t *testing.T, n, backlog int) (<-chan engine.Update, []engine.Update) {
	t.Helper()
	var symbols []string
	b := setup(t, setupOpt{scenario: batchSymbols(n, &symbols), backlog: backlog})
	updates := b.engine.Subscribe(t.Context())
	reqs := make([]engine.Request, len(symbols))
	for i, sym := range symbols {
		reqs[i] = engine.Request{Symbol: sym, Quantity: 500, Policy: auto("0.02")}
	}
	hs, err := b.engine.LocateAll(t.Context(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for _, h := range hs {
		w, err := b.engine.Wait(ctx, h.ID)
		if err != nil {
			t.Fatalf("wait %s: %v", h.ID, err)
		}
		expect(t, w, states.Filled)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	flood := 1024 // more than the 256 and 1024 earlier designs held
	if backlog > 0 {
		flood = backlog
	}
	if len(b.updates) <= flood {
		t.Fatalf("%d updates published: too few to flood the subscriber", len(b.updates))
	}
	return updates, append([]engine.Update(nil), b.updates...)
}

// key names one update exactly: what changed, to which version, by what.
func key(u engine.Update) string {
	switch {
	case u.Workflow != nil:
		return fmt.Sprintf("%s v%d %s-%s>%s %v %v", u.Workflow.ID, u.Workflow.Version, u.From, u.Event, u.Workflow.State, u.Offer != nil, u.QueuedUntil)
	case u.Order != nil:
		return fmt.Sprintf("%s v%d %s-%s>%s", u.Order.ClientOrderID, u.Order.Version, u.From, u.Event, u.Order.State)
	}
	return fmt.Sprintf("%+v", u)
}

// Updates to a subscriber are never dropped, merged or
// reordered. A subscriber that reads nothing while a batch of 300 locates
// runs gets afterwards every update the engine published, in the order
// published, none skipped (the subscription used to drop what did not fit
// 256 slots, then to merge a workflow's queued updates past 1024, so a
// follower could miss changes).
func TestFloodedSubscriberGetsEveryUpdate(t *testing.T) {
	t.Parallel()
	updates, published := floodedBatch(t, 300, 0)
	for i, want := range published {
		select {
		case u, ok := <-updates:
			if !ok {
				t.Fatalf("the subscription closed after %d of %d updates", i, len(published))
			}
			if key(u) != key(want) {
				t.Fatalf("update %d: got %s, published %s", i, key(u), key(want))
			}
		case <-t.Context().Done():
			t.Fatalf("update %d of %d never delivered", i, len(published))
		}
	}
	t.Logf("%d updates published, all delivered in order to the reader that fell behind", len(published))
}

// A subscriber that leaves more than Config.Backlog updates unread gets
// exactly the first Backlog of them, in order, then one update with
// FellBehind set and the end of its channel: it knows where its exact
// stream stopped instead of waiting on updates it will never get, and the
// engine's memory for it stays bounded.
func TestSubscriberPastItsBacklogIsToldItFellBehind(t *testing.T) {
	t.Parallel()
	const backlog = 100
	updates, published := floodedBatch(t, 40, backlog)
	var got []engine.Update
	for u := range updates {
		got = append(got, u)
	}
	if len(got) != backlog+1 || !got[backlog].FellBehind {
		t.Fatalf("%d updates delivered, the last %+v: want %d then FellBehind", len(got), got[len(got)-1], backlog)
	}
	for i, u := range got[:backlog] {
		if u.FellBehind || key(u) != key(published[i]) {
			t.Fatalf("update %d: got %s, published %s", i, key(u), key(published[i]))
		}
	}
}
