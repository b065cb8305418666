package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// Locate is the body of a locate job: for each symbol, ensure j.Quantity
// located shares under j.Policy, accepting within it without asking. It is
// safe to run again (the next tick, or after a restart): a workflow an
// earlier run left open for one of its symbols is waited for rather than
// duplicated, and the engine's ensure semantics then answer "covered" from
// the inventory, so nothing is quoted twice. The requests go to the engine
// as one batch in the config's order (the engine quotes them in that order)
// and are followed together. It succeeds when every symbol ends filled,
// covered or not needed.
func (r *Runner) Locate(ctx context.Context, j Job) (string, error) {
	parts := make([]outcome, len(j.Symbols))
	for i, sym := range j.Symbols {
		parts[i].label = sym
	}
	// Adopt what an earlier run left open for these symbols (the engine
	// resumed it at Start): wait for it instead of queueing a second
	// request.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, w := range r.Engine.Active() {
		i := slices.Index(j.Symbols, w.Symbol)
		if w.Kind != states.Locate || i < 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := r.Engine.Wait(ctx, w.ID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				parts[i].err = fmt.Errorf("waiting for %s left open by an earlier run: %w", w.ID, err)
				return
			}
			parts[i].note = strings.TrimSpace(parts[i].note + " " + fmt.Sprintf("after %s %s", done.ID, done.State))
		}()
	}
	wg.Wait()
	// The rest go to the engine as one batch, which checks them while it
	// quotes.
	var reqs []engine.Request
	var at []int
	for i, sym := range j.Symbols {
		if parts[i].err != nil {
			continue
		}
		if r.draining() || ctx.Err() != nil {
			parts[i].err = fmt.Errorf("not started: shutting down: %w", context.Canceled)
			continue
		}
		reqs = append(reqs, engine.Request{Symbol: sym, Quantity: j.Quantity, Policy: j.Policy})
		at = append(at, i)
	}
	handles := make([]*engine.Handle, len(j.Symbols))
	if len(reqs) > 0 {
		hs, err := r.Engine.LocateAll(ctx, reqs)
		var batch *engine.BatchError
		for k, i := range at {
			switch {
			case errors.As(err, &batch):
				handles[i], parts[i].err = hs[k], batch.Errs[k]
			case err != nil:
				parts[i].err = err
			default:
				handles[i] = hs[k]
			}
		}
	}
	for i, h := range handles {
		if h == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := h.Wait(ctx)
			if err != nil {
				parts[i].err = fmt.Errorf("%s: %w", h.ID, err)
				return
			}
			parts[i].w = w
			switch w.State {
			case states.Filled, states.Covered, states.NotNeeded:
				parts[i].ok = true
			}
		}()
	}
	wg.Wait()
	return summarize(parts, "no symbols")
}
