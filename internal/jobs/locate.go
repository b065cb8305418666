package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
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
	open, err := r.open(ctx)
	if err != nil {
		return "", err
	}
	// Adopt what an earlier run left open for these symbols (the owner
	// resumed it): wait for it instead of queueing a second request.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, w := range open {
		i := slices.Index(j.Symbols, w.Symbol)
		if w.Kind != states.Locate || i < 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := r.Account.Follow(ctx, account.FollowRequest{ID: w.ID}, nil)
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
	// The rest go to the owner as one batch, which checks them while it
	// quotes.
	var items []account.LocateItem
	var at []int
	for i, sym := range j.Symbols {
		if parts[i].err != nil {
			continue
		}
		if r.draining() || ctx.Err() != nil {
			parts[i].err = fmt.Errorf("not started: shutting down: %w", context.Canceled)
			continue
		}
		items = append(items, account.LocateItem{Symbol: sym, Quantity: j.Quantity, Policy: j.Policy})
		at = append(at, i)
	}
	ids := make([]string, len(j.Symbols))
	if len(items) > 0 {
		res, err := r.Account.Locate(ctx, account.LocateRequest{Items: items})
		for k, i := range at {
			switch {
			case err != nil:
				parts[i].err = err
			case res.Started[k].Refused != nil:
				parts[i].err = res.Started[k].Refused
			default:
				ids[i] = res.Started[k].ID
			}
		}
	}
	for i, id := range ids {
		if id == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := r.Account.Follow(ctx, account.FollowRequest{ID: id}, nil)
			if err != nil {
				parts[i].err = fmt.Errorf("%s: %w", id, err)
				return
			}
			parts[i].w = w
			parts[i].ok = w.Located()
		}()
	}
	wg.Wait()
	return summarize(parts, "no symbols")
}

// open is the account's unfinished workflows, as its owner sees them.
func (r *Runner) open(ctx context.Context) ([]workflow.Workflow, error) {
	st, err := r.Account.Status(ctx, account.StatusRequest{})
	if err != nil {
		return nil, fmt.Errorf("the account's status: %w", err)
	}
	return st.Open, nil
}
