package engine

import (
	"context"
	"errors"
	"time"

	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The one pipeline every record the loop steps goes through, a locate
// workflow's and an order's alike: the pure step (and its follow-up
// inputs), kept for the batch's one commit, then the saved record
// installed and its effects released; a record that could not be saved is
// tried again, then given up. What differs between the kinds is a kind's
// (flowKind in loop.go, orderKind in orders.go).

// kind is what one kind of record brings to the pipeline: T is its record
// (stepped as *T), In its input.
type kind[T any, In any] interface {
	// name is the kind's word in logs.
	name() string
	id(r *T) string
	state(r *T) states.State
	// pure runs the record's pure step at the loop's state.
	pure(l *loop, r *T, in In) stepped[T, In]
	// open is the loop's unfinished record id, nil when there is none.
	open(l *loop, id string) *T
	// latest are the records the batch g's steps have made so far, by id.
	latest(g *group) map[string]*T
	// stage adds a step to the batch's one transaction; take pops its
	// saved record from the transaction's results, in the same order.
	stage(b *batch, prev, next *T, tr *workflow.Transition)
	take(b *batch) *T
	// commit saves one step alone; get reads the stored record.
	commit(ctx context.Context, st *store.Store, prev, next *T, tr *workflow.Transition) (*T, error)
	get(ctx context.Context, st *store.Store, id string) (*T, error)
	// install takes a saved record as the truth; s is the step that made
	// it (empty for a record another process moved).
	install(l *loop, saved *T, from states.State, s stepped[T, In])
	// effect carries out one effect of a committed step.
	effect(l *loop, r *T, eff workflow.Effect)
	// abandon is the input that gives the record up.
	abandon(reason string) In
}

// stepped is a pure step's outcome in the pipeline's terms: next (its
// version one past the record's, as the commit gives it) is nil for a
// step that only has effects; then is a follow-up input, taken at once;
// offer is a workflow's offer, for displays.
type stepped[T any, In any] struct {
	next    *T
	tr      *workflow.Transition
	effects []workflow.Effect
	then    In
	offer   *Offer
	err     error
}

// stepRecord is the one way the loop steps a record: inside a batch of
// events (see grouped), or as a batch of its own outside one. The step's
// record commits with the batch's, and only then do its effects leave; a
// follow-up input is stepped at once from the record the step made.
// attempt counts the tries of an input whose record could not be saved.
func stepRecord[T any, In any](l *loop, k kind[T, In], r *T, in In, attempt int) error {
	if l.group == nil {
		var err error
		l.grouped(func() { err = stepRecord(l, k, r, in, attempt) })
		return err
	}
	latest := k.latest(l.group)
	if n := latest[k.id(r)]; n != nil {
		r = n
	}
	s := k.pure(l, r, in)
	if s.err != nil {
		return s.err
	}
	l.group.steps = append(l.group.steps, &pending[T, In]{k: k, prev: r, in: in, attempt: attempt, s: s})
	if s.next != nil {
		latest[k.id(r)] = s.next
		r = s.next
	}
	if any(s.then) != nil {
		return stepRecord(l, k, r, s.then, 0)
	}
	return nil
}

// latestOf is r as the batch's steps left it so far.
func latestOf[T any, In any](g *group, k kind[T, In], r *T) *T {
	if n := k.latest(g)[k.id(r)]; n != nil {
		return n
	}
	return r
}

// group holds the steps of workflows and orders taken while the loop
// handles one batch of events, so that all their records commit in one
// transaction (one fsync) and only then do their effects leave: the
// write-ahead rule holds for every one.
type group struct {
	steps  []groupStep
	flows  map[string]*Workflow // workflow id → its record after the batch's latest step
	orders map[string]*Order    // clientOrderId → its record after the batch's latest step
	after  []func()             // replies that must wait for the commit
}

// then runs fn once the batch's records are committed.
func (g *group) then(fn func()) { g.after = append(g.after, fn) }

// batch is the batch's one transaction: its steps by kind (store.CommitBatch)
// and, once committed, the saved records.
type batch struct {
	flows       []store.Step
	orders      []store.OrderStep
	savedFlows  []*Workflow
	savedOrders []*Order
}

// groupStep is one step awaiting the batch's commit, of any kind.
type groupStep interface {
	// key names the record among all kinds.
	key() string
	// saves says whether the step has a record to commit.
	saves() bool
	stage(b *batch)
	take(b *batch)
	// commit saves the step alone (nothing for one that only has
	// effects).
	commit(ctx context.Context, st *store.Store) error
	// release installs the saved record and carries out the effects in
	// order.
	release(l *loop)
	// failed handles a record that could not be saved (see
	// pending.failed).
	failed(l *loop, err error)
}

// pending is a groupStep of a record of kind k.
type pending[T any, In any] struct {
	k       kind[T, In]
	prev    *T
	in      In
	attempt int
	s       stepped[T, In]
	saved   *T // once committed
}

func (p *pending[T, In]) key() string    { return p.k.name() + " " + p.k.id(p.prev) }
func (p *pending[T, In]) saves() bool    { return p.s.next != nil }
func (p *pending[T, In]) stage(b *batch) { p.k.stage(b, p.prev, p.s.next, p.s.tr) }
func (p *pending[T, In]) take(b *batch)  { p.saved = p.k.take(b) }

func (p *pending[T, In]) commit(ctx context.Context, st *store.Store) error {
	if !p.saves() {
		return nil
	}
	saved, err := p.k.commit(ctx, st, p.prev, p.s.next, p.s.tr)
	p.saved = saved
	return err
}

func (p *pending[T, In]) release(l *loop) {
	cur := p.prev
	if p.saved != nil {
		p.k.install(l, p.saved, p.k.state(p.prev), p.s)
		cur = p.saved
	}
	for _, eff := range p.s.effects {
		p.k.effect(l, cur, eff)
	}
}

// failed handles a record that could not be saved: another process moved
// it (take the stored truth and tell its waiters), or the database failed
// (try the input again a second later, then give up on it with the
// reason: the kind's abandon). Nothing is stranded and no effect left.
func (p *pending[T, In]) failed(l *loop, err error) {
	k, id := p.k, p.k.id(p.prev)
	if errors.Is(err, store.ErrConflict) {
		cur, gerr := k.get(context.Background(), l.e.store, id)
		if gerr == nil {
			l.e.log.Info(k.name()+" moved by another process; taking the stored record", "id", id, "state", k.state(cur))
			k.install(l, cur, k.state(p.prev), stepped[T, In]{})
			return
		}
		err = gerr
	}
	in, attempt := p.in, p.attempt+1
	if _, giving := any(in).(workflow.Abandon); p.attempt >= persistRetries && !giving {
		in, attempt = k.abandon("its record could not be saved: "+err.Error()), 1
	}
	l.e.log.Error("record not saved; trying again", k.name(), id, "attempt", attempt, "err", err)
	l.retries = append(l.retries, retry{in: in, at: l.e.clock.Now().Add(time.Second), again: func() {
		if r := k.open(l, id); r != nil {
			stepRecord(l, k, r, in, attempt)
		}
	}})
}

// retry is a step to try again after its record could not be saved.
type retry struct {
	in    any // the input tried again: a workflow's or an order's
	at    time.Time
	again func() // steps the record with in, if it is still open
}

// grouped handles a batch of events (fn) with their steps' commits grouped,
// then commits them and releases their effects in order.
func (l *loop) grouped(fn func()) {
	l.group = &group{flows: map[string]*Workflow{}, orders: map[string]*Order{}}
	fn()
	g := l.group
	l.group = nil
	defer func() {
		for _, fn := range g.after {
			fn()
		}
	}()
	var b batch
	saving := 0
	for _, st := range g.steps {
		if st.saves() {
			st.stage(&b)
			saving++
		}
	}
	if saving > 1 {
		var err error
		b.savedFlows, b.savedOrders, err = l.e.store.CommitBatch(context.Background(), b.flows, b.orders)
		if err == nil {
			for _, st := range g.steps {
				if st.saves() {
					st.take(&b)
				}
				st.release(l)
			}
			return
		}
		l.e.log.Warn("grouped commit failed; committing one by one", "steps", saving, "err", err)
	}
	l.commitEach(g.steps)
}

// commitEach commits a batch's steps one at a time (a single one, or after
// the grouped transaction failed): a record that cannot be saved takes
// none of its later steps in the batch, and its input is tried again as
// pending.failed says.
func (l *loop) commitEach(steps []groupStep) {
	failed := map[string]bool{}
	for _, st := range steps {
		if failed[st.key()] {
			continue
		}
		if err := st.commit(context.Background(), l.e.store); err != nil {
			failed[st.key()] = true
			st.failed(l, err)
			continue
		}
		st.release(l)
	}
}
