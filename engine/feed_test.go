package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// Issue 26: a subscriber that reads nothing while a batch of 300 locates
// runs (over a thousand updates, more than its queue holds before it
// coalesces) neither stalls the engine (every locate ends while it reads
// nothing) nor misses a workflow's end: reading afterwards, it gets every
// workflow's final update, and each workflow's updates in the order they
// happened. The subscription used to drop what did not fit its 256 slots,
// so a follower could wait forever for an end already past.
func TestFloodedSubscriberGetsEveryEnd(t *testing.T) {
	t.Parallel()
	var symbols []string
	b := setup(t, setupOpt{scenario: batchSymbols(300, &symbols)})
	sctx, stop := context.WithCancel(t.Context())
	defer stop()
	updates := b.engine.Subscribe(sctx)
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
	open := map[string]bool{}
	for _, h := range hs {
		w, err := b.engine.Wait(ctx, h.ID)
		if err != nil {
			t.Fatalf("wait %s: %v", h.ID, err)
		}
		expect(t, w, states.Filled)
		open[h.ID] = true
	}
	b.mu.Lock()
	published := len(b.updates)
	b.mu.Unlock()
	if published <= 1024 {
		t.Fatalf("%d updates published: too few to flood the subscriber", published)
	}

	// The slow reader reads now.
	got, last := 0, map[string]int64{}
	for len(open) > 0 {
		select {
		case u, ok := <-updates:
			if !ok {
				t.Fatalf("the subscription closed with %d workflows' ends unseen", len(open))
			}
			got++
			w := u.Workflow
			if w == nil {
				continue
			}
			if w.Version < last[w.ID] {
				t.Errorf("%s: version %d after %d", w.ID, w.Version, last[w.ID])
			}
			last[w.ID] = w.Version
			if w.Terminal() {
				delete(open, w.ID)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d workflows' ends never delivered (%d of %d updates read)", len(open), len(hs), got, published)
		}
	}
	t.Logf("%d updates published, %d delivered to the reader that fell behind", published, got)
}
