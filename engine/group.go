package engine

import (
	"context"
	"errors"
	"time"

	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// group holds the steps of workflows and orders taken while the loop
// handles one batch of events, so that all their records commit in one
// transaction (one fsync) and only then do their effects leave: the
// write-ahead rule holds for every one.
type group struct {
	steps  []groupStep
	next   map[string]*Workflow // workflow id → its record after the batch's latest step
	orders map[string]*Order    // clientOrderId → its record after the batch's latest step
	after  []func()             // replies that must wait for the commit
}

// groupStep is one step awaiting the batch's commit: a workflow's, or, with
// order set, an order's. next is nil for a step that only has effects.
type groupStep struct {
	prev, next *Workflow
	in         workflow.Input
	attempt    int
	s          workflow.Step
	order      *orderStep
}

// orderStep is an order's step in a batch.
type orderStep struct {
	prev, next *Order
	in         workflow.OrderInput
	s          workflow.OrderStep
}

// latest is w as the batch's steps left it so far.
func (g *group) latest(w *Workflow) *Workflow {
	if n := g.next[w.ID]; n != nil {
		return n
	}
	return w
}

// latestOrder is o as the batch's steps left it so far.
func (g *group) latestOrder(o *Order) *Order {
	if n := g.orders[o.ClientOrderID]; n != nil {
		return n
	}
	return o
}

// then runs fn once the batch's records are committed.
func (g *group) then(fn func()) { g.after = append(g.after, fn) }

// add keeps a step for the batch's commit and returns the record the
// workflow's next step in the batch starts from.
func (g *group) add(w *Workflow, in workflow.Input, attempt int, s workflow.Step) *Workflow {
	st := groupStep{prev: w, in: in, attempt: attempt, s: s}
	if s.Next != nil {
		n := *s.Next
		n.Version = w.Version + 1 // what the commit gives it, so a second step's compare-and-set matches
		st.next = &n
		g.next[w.ID] = &n
		w = &n
	}
	g.steps = append(g.steps, st)
	return w
}

// addOrder is add for an order's step.
func (g *group) addOrder(o *Order, in workflow.OrderInput, attempt int, s workflow.OrderStep) {
	st := &orderStep{prev: o, in: in, s: s}
	if s.Next != nil {
		n := *s.Next
		n.Version = o.Version + 1
		st.next = &n
		g.orders[o.ClientOrderID] = &n
	}
	g.steps = append(g.steps, groupStep{attempt: attempt, order: st})
}

// id is the step's workflow id or clientOrderId.
func (st groupStep) id() string {
	if st.order != nil {
		return st.order.prev.ClientOrderID
	}
	return st.prev.ID
}

// saves says whether the step has a record to commit.
func (st groupStep) saves() bool {
	if st.order != nil {
		return st.order.next != nil
	}
	return st.next != nil
}

// grouped handles a batch of events (fn) with their steps' commits grouped,
// then commits them and releases their effects in order.
func (l *loop) grouped(fn func()) {
	l.group = &group{next: map[string]*Workflow{}, orders: map[string]*Order{}}
	fn()
	g := l.group
	l.group = nil
	defer func() {
		for _, fn := range g.after {
			fn()
		}
	}()
	var commits []store.Step
	var orders []store.OrderStep
	for _, st := range g.steps {
		switch {
		case !st.saves():
		case st.order != nil:
			orders = append(orders, store.OrderStep{Prev: st.order.prev, Next: st.order.next, Transition: st.order.s.Transition})
		default:
			commits = append(commits, store.Step{Prev: st.prev, Next: st.next, Transition: st.s.Transition})
		}
	}
	if len(commits)+len(orders) > 1 {
		saved, savedOrders, err := l.e.store.CommitBatch(context.Background(), commits, orders)
		if err == nil {
			for _, st := range g.steps {
				if st.order != nil && st.saves() {
					l.release(st, nil, savedOrders[0])
					savedOrders = savedOrders[1:]
				} else if st.saves() {
					l.release(st, saved[0], nil)
					saved = saved[1:]
				} else {
					l.release(st, nil, nil)
				}
			}
			return
		}
		l.e.log.Warn("grouped commit failed; committing one by one", "steps", len(commits)+len(orders), "err", err)
	}
	l.commitEach(g.steps)
}

// commitEach commits a batch's steps one at a time (a single one, or after
// the grouped transaction failed): a workflow or order whose record cannot
// be saved takes none of its later steps in the batch, and its input is
// tried again as persistFailed says.
func (l *loop) commitEach(steps []groupStep) {
	failed := map[string]bool{}
	for _, st := range steps {
		if failed[st.id()] {
			continue
		}
		var saved *Workflow
		var savedOrder *Order
		var err error
		switch {
		case !st.saves():
		case st.order != nil:
			savedOrder, err = l.e.store.CommitOrder(context.Background(), st.order.prev, st.order.next, st.order.s.Transition)
		default:
			saved, err = l.e.store.Commit(context.Background(), st.prev, st.next, st.s.Transition)
		}
		if err != nil {
			failed[st.id()] = true
			l.persistFailed(st, err)
			continue
		}
		l.release(st, saved, savedOrder)
	}
}

// release installs a committed step's saved record (nil for a step with
// nothing to save) and carries out its effects in order.
func (l *loop) release(st groupStep, saved *Workflow, savedOrder *Order) {
	if o := st.order; o != nil {
		cur := o.prev
		if savedOrder != nil {
			l.orders.install(l, savedOrder, o.prev.State, o.s.Transition)
			cur = savedOrder
		}
		for _, eff := range o.s.Effects {
			l.orders.effect(l, cur, eff)
		}
		return
	}
	cur := st.prev
	if saved != nil {
		// A quote about to be handed to a worker is not sent yet: install
		// must not read history for it (see updateHot).
		for _, eff := range st.s.Effects {
			if _, ok := eff.(workflow.SendQuote); ok {
				l.quoting[saved.ID] = true
			}
		}
		l.install(saved, st.prev.State, st.s.Transition, st.s.Offer)
		cur = saved
	}
	for _, eff := range st.s.Effects {
		l.effect(cur, eff)
	}
}

// persistFailed handles a record that could not be saved: another process
// moved the workflow or order (take the stored truth and tell its
// waiters), or the database failed (try the input again a second later,
// then give up on it with the reason: workflow.Abandon). Nothing is
// stranded and no effect left.
func (l *loop) persistFailed(st groupStep, err error) {
	ctx := context.Background()
	if errors.Is(err, store.ErrConflict) {
		var gerr error
		if st.order != nil {
			var cur *Order
			if cur, gerr = l.e.store.GetOrder(ctx, st.id()); gerr == nil {
				l.e.log.Info("order moved by another process; taking the stored record", "clientOrderId", cur.ClientOrderID, "state", cur.State)
				l.orders.install(l, cur, st.order.prev.State, nil)
				return
			}
		} else {
			var cur *Workflow
			if cur, gerr = l.e.store.Get(ctx, st.id()); gerr == nil {
				l.e.log.Info("workflow moved by another process; taking the stored record", "id", cur.ID, "state", cur.State)
				l.install(cur, st.prev.State, nil, nil)
				return
			}
		}
		err = gerr
	}
	r := retry{id: st.id(), in: st.in, attempt: st.attempt + 1, at: l.e.clock.Now().Add(time.Second)}
	if st.order != nil {
		r.in, r.orderIn = nil, st.order.in
	}
	if st.attempt >= persistRetries && !r.abandoning() {
		give := workflow.Abandon{Reason: "its record could not be saved: " + err.Error()}
		r.in, r.attempt = give, 1
		if st.order != nil {
			r.in, r.orderIn = nil, give
		}
	}
	l.e.log.Error("record not saved; trying again", "id", r.id, "attempt", r.attempt, "err", err)
	l.retries = append(l.retries, r)
}
