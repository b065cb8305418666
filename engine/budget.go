package engine

import (
	"context"
	"time"

	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// spentToday is what the account's locates spent in the broker's trading
// day so far: filled, or accepted and not settled yet (in all, and of
// symbol). pending, when given, are records a batch of steps has made and
// not yet committed: they count as they will be.
func (e *Engine) spentToday(ctx context.Context, symbol string, pending map[string]*Workflow) (workflow.Spent, error) {
	ws, err := e.store.List(ctx, store.Filter{Account: e.cfg.Account, Kind: states.Locate, Since: market.SessionStart(e.brokerNow())})
	if err != nil {
		return workflow.Spent{}, err
	}
	byID := map[string]*Workflow{}
	for _, w := range ws {
		byID[w.ID] = w
	}
	for id, w := range pending {
		if w.Kind == states.Locate {
			byID[id] = w
		}
	}
	all := make([]*Workflow, 0, len(byID))
	for _, w := range byID {
		all = append(all, w)
	}
	return workflow.SpentBy(all, symbol), nil
}

// BudgetLeft is what the account's locate budget leaves of today (nil
// when it has none).
func (e *Engine) BudgetLeft(ctx context.Context) (*workflow.BudgetLeft, error) {
	return BudgetLeftOn(ctx, e.store, e.cfg.Account, e.cfg.Budget, e.brokerNow())
}

// BudgetLeftOn is what budget b leaves of account's trading day at now
// (nil when b is not set), from the day's locates in st: the owner's
// (Engine.BudgetLeft), and a reader's that finds no owner running.
func BudgetLeftOn(ctx context.Context, st *store.Store, account string, b workflow.Budget, now time.Time) (*workflow.BudgetLeft, error) {
	if !b.Set() {
		return nil, nil
	}
	ws, err := st.List(ctx, store.Filter{Account: account, Kind: states.Locate, Since: market.On(now).Date})
	if err != nil {
		return nil, err
	}
	l := b.Left(ws)
	return &l, nil
}
