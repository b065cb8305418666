package engine

import (
	"context"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/store"
)

// refusedReason is why a row is refused: its MAC (workflow.RowKey) does not
// verify, so whoever wrote it did not hold the account's secret, or its
// request was changed since.
const refusedReason = "its row does not verify (written or changed without the account's secret): nothing is sent for it"

// adoptMACs authenticates, once, the open rows an earlier version wrote
// without MACs (store.AdoptMACs decides whether they are the account's
// rows from before the migration).
func (e *Engine) adoptMACs(ctx context.Context) error {
	n, err := e.store.AdoptMACs(ctx, e.cfg.Account, e.rows)
	if n > 0 {
		e.log.Info("engine: rows from before row MACs authenticated, once", "account", e.cfg.Account, "rows", n)
	}
	return err
}

// recovery is what Start goes on from: Config.Recovery, or the store's
// Recovery of the account read now. Rows from before row MACs get theirs
// first (adoptMACs), and are read again with them.
func (e *Engine) recovery(ctx context.Context) (*store.Recovery, error) {
	read := func() (*store.Recovery, error) {
		recs, err := e.store.Recoveries(ctx, []string{e.cfg.Account}, RecoverySince(e.cfg, e.clock.Now()))
		if err != nil {
			return nil, err
		}
		return recs[e.cfg.Account], nil
	}
	rec := e.cfg.Recovery
	if rec == nil {
		var err error
		if rec, err = read(); err != nil {
			return nil, err
		}
	}
	if !rec.MACsPending {
		return rec, nil
	}
	if err := e.adoptMACs(ctx); err != nil {
		return nil, err
	}
	return read()
}

// authentic keeps the loaded rows whose MAC verifies: only those are
// resumed, reconciled or looked up. Each other one is logged and recorded
// as refused (store.SetRefused, which `locator status` lists, in place of
// what was listed: listed says some was), and left as it is: the owner
// neither sends for it nor changes it (docs/design.md rule 10).
func (e *Engine) authentic(ctx context.Context, flows []*Workflow, orders []*Order, listed bool) ([]*Workflow, []*Order, error) {
	var refused []locator.RefusedRow
	var okFlows []*Workflow
	for _, w := range flows {
		if e.rows.VerifyWorkflow(w) {
			okFlows = append(okFlows, w)
			continue
		}
		refused = append(refused, locator.RefusedRow{Kind: "workflow", ID: w.ID, Symbol: w.Symbol, Reason: refusedReason})
	}
	var okOrders []*Order
	for _, o := range orders {
		if e.rows.VerifyOrder(o) {
			okOrders = append(okOrders, o)
			continue
		}
		refused = append(refused, locator.RefusedRow{Kind: "order", ID: o.ClientOrderID, Symbol: o.Symbol, Reason: refusedReason})
	}
	for _, r := range refused {
		e.log.Error("engine: row refused", "account", e.cfg.Account, "kind", r.Kind, "id", r.ID, "symbol", r.Symbol, "reason", refusedReason)
	}
	if len(refused) == 0 && !listed {
		return okFlows, okOrders, nil
	}
	return okFlows, okOrders, e.store.SetRefused(ctx, e.cfg.Account, refused)
}
