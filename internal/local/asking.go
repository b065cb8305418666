package local

// The questions an Account puts to its callers: who listens for a caller's
// questions, how long an offer waits for its asker to come back, and the
// withdrawal of a question answered elsewhere first.

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Listen puts the questions of caller id's requests to ask until release
// is called; then its offers wait askerGrace for it to listen again (a
// follower reconnecting) before they are declined.
func (l *Account) Listen(id string, ask func(context.Context, account.Question) bool) (release func()) {
	slot := &asker{ask: ask}
	l.mu.Lock()
	l.askers[id] = slot
	delete(l.left, id)
	l.changedLocked()
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.askers[id] == slot {
			delete(l.askers, id)
			now := l.clk.Now()
			for gone, at := range l.left {
				if now.Sub(at) > leftKept {
					delete(l.left, gone)
				}
			}
			l.left[id] = now
			l.changedLocked()
		}
	}
}

// asker is one listener's slot: a pointer, so that a release only removes
// its own.
type asker struct {
	ask func(context.Context, account.Question) bool
}

func (l *Account) changedLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// ask puts q to caller id and returns the answer. It waits for the caller
// to be there (a follower reconnecting), gives up at ctx's deadline, and
// declines for the caller once it has been gone askerGrace.
func (l *Account) ask(ctx context.Context, id string, q account.Question) bool {
	q.ID = uuid.NewString()
	if d, ok := ctx.Deadline(); ok {
		q.Deadline = d
	}
	l.noticeOffer(ctx, q)
	for {
		l.mu.Lock()
		slot, left, changed := l.askers[id], l.left[id], l.changed
		l.mu.Unlock()
		if slot != nil {
			return l.put(ctx, slot.ask, q)
		}
		var gone <-chan time.Time
		if !left.IsZero() {
			t := l.clk.NewTimer(askerGrace - l.clk.Now().Sub(left))
			defer t.Stop()
			gone = t.C()
		}
		select {
		case <-changed:
		case <-gone:
			if q.Offer != nil {
				l.eng.Answer(context.WithoutCancel(ctx), q.Offer.WorkflowID, engine.Answer{By: workflow.CauseAskerGone, Reason: "the process that asked went away"})
			}
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// put asks fn, withdrawing the question when its workflow's offer is
// answered elsewhere first.
func (l *Account) put(ctx context.Context, fn func(context.Context, account.Question) bool, q account.Question) bool {
	l.mu.Lock()
	l.waiting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
	}()
	if q.Offer == nil {
		return fn(ctx, q)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	id := q.Offer.WorkflowID
	l.mu.Lock()
	l.asking[id] = cancel
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.asking, id)
		l.mu.Unlock()
	}()
	// An answer that came before the question was out (the dashboard's,
	// as the offer showed) was published before withdrawAnswered could
	// find the question: it is not put at all, or it waited on a person
	// until the offer's deadline, which virtual time never reached while
	// it waited (TestActionsBothWays hung 60 s in one run in five).
	if w, err := l.st.Get(ctx, id); err == nil && w.State != states.Offered {
		return false
	}
	return fn(ctx, q)
}

// withdrawAnswered withdraws the question of a workflow that left Offered
// (answered elsewhere, expired, cancelled), until ctx ends. Behind on its
// subscription, it subscribes again and asks the store about each
// question still out.
func (l *Account) withdrawAnswered(ctx context.Context) {
	updates := l.eng.Subscribe(ctx)
	for {
		u, ok := <-updates
		switch {
		case !ok:
			return
		case u.FellBehind:
			updates = l.eng.Subscribe(ctx) // before the reads: no change slips between
			l.mu.Lock()
			out := slices.Collect(maps.Keys(l.asking))
			l.mu.Unlock()
			for _, id := range out {
				if w, err := l.st.Get(ctx, id); err == nil && w.State != states.Offered {
					l.withdraw(id)
				}
			}
		case u.Workflow != nil && u.Workflow.State != states.Offered:
			l.withdraw(u.Workflow.ID)
		}
	}
}

// withdraw withdraws the question of workflow id, if one is out.
func (l *Account) withdraw(id string) {
	l.mu.Lock()
	cancel := l.asking[id]
	l.mu.Unlock()
	if cancel != nil {
		cancel(account.ErrAnsweredElsewhere)
	}
}
