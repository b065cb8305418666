package local

// The questions an Account puts to its callers: who listens for a caller's
// questions, how long an offer waits for its asker to come back, and the
// withdrawal of a question answered elsewhere first.

import (
	"context"
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
// answered elsewhere first (see withdrawWhenAnswered).
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
	// The engine's updates are watched while the question is out, and only
	// then: an idle account holds no subscription (its feed and its reader
	// were two goroutines of each owned account's nine). Watched from before
	// the store is asked below, so that no change slips between.
	go l.withdrawWhenAnswered(ctx, cancel, id, l.subscribe(ctx))
	// An answer that came before the question was out (the dashboard's,
	// as the offer showed) was published before the question could be
	// withdrawn: it is not put at all, or it waited on a person until the
	// offer's deadline, which virtual time never reached while it waited
	// (TestActionsBothWays hung 60 s in one run in five).
	if w, err := l.st.Get(ctx, id); err == nil && w.State != states.Offered {
		return false
	}
	return fn(ctx, q)
}

// withdrawWhenAnswered withdraws the question on workflow id (cancels it
// with account.ErrAnsweredElsewhere) once the workflow leaves Offered
// (answered elsewhere, expired, cancelled), as updates tell, until ctx
// ends. Behind on its subscription, it subscribes again and asks the store.
func (l *Account) withdrawWhenAnswered(ctx context.Context, withdraw context.CancelCauseFunc, id string, updates <-chan engine.Update) {
	for {
		u, ok := <-updates
		switch {
		case !ok:
			return
		case u.FellBehind:
			updates = l.subscribe(ctx) // before the read: no change slips between
			if w, err := l.st.Get(ctx, id); err == nil && w.State != states.Offered {
				withdraw(account.ErrAnsweredElsewhere)
				return
			}
		case u.Workflow != nil && u.Workflow.ID == id && u.Workflow.State != states.Offered:
			withdraw(account.ErrAnsweredElsewhere)
			return
		}
	}
}
