package engine

import (
	"context"
	"fmt"

	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// flowKind is the locate workflows' part in the pipeline (see kind).
type flowKind struct{}

func (flowKind) name() string                                     { return "workflow" }
func (flowKind) id(w *Workflow) string                            { return w.ID }
func (flowKind) state(w *Workflow) states.State                   { return w.State }
func (flowKind) open(l *loop, id string) *Workflow                { return l.open[id] }
func (flowKind) latest(g *group) map[string]*Workflow             { return g.flows }
func (flowKind) abandon(reason string) workflow.Input             { return workflow.Abandon{Reason: reason} }
func (flowKind) effect(l *loop, w *Workflow, eff workflow.Effect) { l.effect(w, eff) }

func (flowKind) pure(l *loop, w *Workflow, in workflow.Input) stepped[Workflow, workflow.Input] {
	s := workflow.StepWorkflow(w, in, l.env(w.ID))
	if s.Err != nil {
		if _, isRows := in.(workflow.Rows); !isRows {
			l.e.log.Debug("step refused", "id", w.ID, "state", w.State, "input", fmt.Sprintf("%T", in), "err", s.Err)
		}
		return stepped[Workflow, workflow.Input]{err: s.Err}
	}
	out := stepped[Workflow, workflow.Input]{tr: s.Transition, effects: s.Effects, then: s.Then, offer: s.Offer}
	if s.Next != nil {
		n := *s.Next
		n.Version = w.Version + 1
		out.next = &n
	}
	return out
}

func (flowKind) stage(b *batch, prev, next *Workflow, tr *workflow.Transition) {
	b.flows = append(b.flows, store.Step{Prev: prev, Next: next, Transition: tr})
}

func (flowKind) take(b *batch) *Workflow {
	w := b.savedFlows[0]
	b.savedFlows = b.savedFlows[1:]
	return w
}

func (flowKind) commit(ctx context.Context, st *store.Store, prev, next *Workflow, tr *workflow.Transition) (*Workflow, error) {
	return st.Commit(ctx, prev, next, tr)
}

func (flowKind) get(ctx context.Context, st *store.Store, id string) (*Workflow, error) {
	return st.Get(ctx, id)
}

// install marks a quote about to be handed to a worker as not sent yet
// (install must not read history for it: see updateHot), then installs.
func (flowKind) install(l *loop, w *Workflow, from states.State, s stepped[Workflow, workflow.Input]) {
	for _, eff := range s.effects {
		if _, ok := eff.(workflow.SendQuote); ok {
			l.quoting[w.ID] = true
		}
	}
	l.install(w, from, s.tr, s.offer)
}
