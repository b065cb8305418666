package engine

import (
	"context"

	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// group holds the steps taken while the loop handles one batch of events,
// so that all their records commit in one transaction (one fsync) and only
// then do their effects leave: the write-ahead rule holds for every one.
type group struct {
	steps []groupStep
	next  map[string]*Workflow // workflow id → its record after the batch's latest step
	after []func()             // replies that must wait for the commit
}

// groupStep is one step awaiting the batch's commit; next is nil for a step
// that only has effects.
type groupStep struct {
	prev, next *Workflow
	in         workflow.Input
	attempt    int
	s          workflow.Step
}

// latest is w as the batch's steps left it so far.
func (g *group) latest(w *Workflow) *Workflow {
	if n := g.next[w.ID]; n != nil {
		return n
	}
	return w
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

// grouped handles a batch of events (fn) with their steps' commits grouped,
// then commits them and releases their effects in order.
func (l *loop) grouped(fn func()) {
	l.group = &group{next: map[string]*Workflow{}}
	fn()
	g := l.group
	l.group = nil
	defer func() {
		for _, fn := range g.after {
			fn()
		}
	}()
	var commits []store.Step
	for _, st := range g.steps {
		if st.next != nil {
			commits = append(commits, store.Step{Prev: st.prev, Next: st.next, Transition: st.s.Transition})
		}
	}
	if len(commits) > 1 {
		saved, err := l.e.store.CommitAll(context.Background(), commits)
		if err == nil {
			i := 0
			for _, st := range g.steps {
				cur := st.prev
				if st.next != nil {
					cur = saved[i]
					i++
					l.install(cur, st.prev.State, st.s.Transition, st.s.Offer)
				}
				l.effects(cur, st.s.Effects)
			}
			return
		}
		l.e.log.Warn("grouped commit failed; committing one by one", "steps", len(commits), "err", err)
	}
	l.commitEach(g.steps)
}

// commitEach commits a batch's steps one at a time (a single one, or after
// the grouped transaction failed): a workflow whose record cannot be saved
// takes none of its later steps in the batch, and its input is tried again
// as persistFailed says.
func (l *loop) commitEach(steps []groupStep) {
	failed := map[string]bool{}
	for _, st := range steps {
		id := st.prev.ID
		if failed[id] {
			continue
		}
		cur := st.prev
		if st.next != nil {
			saved, err := l.e.store.Commit(context.Background(), st.prev, st.next, st.s.Transition)
			if err != nil {
				failed[id] = true
				l.persistFailed(st.prev, st.in, st.attempt, err)
				continue
			}
			l.install(saved, st.prev.State, st.s.Transition, st.s.Offer)
			cur = saved
		}
		l.effects(cur, st.s.Effects)
	}
}

// effects carries out a committed step's effects in order.
func (l *loop) effects(w *Workflow, effs []workflow.Effect) {
	for _, eff := range effs {
		l.effect(w, eff)
	}
}
