package account

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locatorhq/locator/workflow"
)

// FollowAll follows every workflow started at once, showing their changes
// from their start one at a time, and returns their ends by index (nil for one not started,
// or not followed to its end), and why each of those started could not be
// followed to its end, naming it (nil when all were); when ctx ended
// first (a Ctrl-C, an agent's cancelled call), each was withdrawn
// (FollowOrWithdraw) and the error is ctx's. A nil show shows nothing, as
// for Follow.
func FollowAll(ctx context.Context, a Account, started []Started, show func(Update)) ([]*workflow.Workflow, error) {
	var mu sync.Mutex // one line at a time
	var one func(Update)
	if show != nil {
		one = func(u Update) {
			mu.Lock()
			defer mu.Unlock()
			show(u)
		}
	}
	ws := make([]*workflow.Workflow, len(started))
	errs := make([]error, len(started))
	var wg sync.WaitGroup
	for i, st := range started {
		if st.ID == "" {
			continue
		}
		wg.Go(func() {
			var err error
			if ws[i], err = FollowOrWithdraw(ctx, a, FollowRequest{ID: st.ID, FromStart: true}, one); err != nil && ctx.Err() == nil {
				errs[i] = Wrap(KindOf(err), fmt.Sprintf("%s %s was not followed to its end (see 'locator status %s'): %v", st.Symbol, st.ID, st.ID, err), err)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		for i, st := range started {
			if st.ID != "" && ws[i] == nil {
				return ws, err
			}
		}
	}
	return ws, errors.Join(errs...)
}

// FollowOrWithdraw waits for the end of the workflow req follows, showing
// each change. Interrupted,
// it withdraws the request (an open offer is cancelled at the broker) on a
// context that outlives the interrupt, and waits (bounded) for the broker
// to confirm, so that nothing the caller asked for is left open.
func FollowOrWithdraw(ctx context.Context, a Account, req FollowRequest, show func(Update)) (*workflow.Workflow, error) {
	id := req.ID
	w, err := a.Follow(ctx, req, show)
	if err != nil && ctx.Err() != nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		if a.Cancel(wctx, CancelRequest{ID: id, Interrupt: true}) == nil {
			a.Follow(wctx, FollowRequest{ID: id}, nil)
		}
	}
	return w, err
}
