package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
)

// Locate ensures at least req.Quantity located shares of req.Symbol: an
// easy-to-borrow symbol ends "not_needed" and inventory that already covers
// the quantity ends "covered", both without a quote; otherwise the shortfall,
// rounded up to 100, is queued for a quote.
func (e *Engine) Locate(ctx context.Context, req Request) (*Handle, error) {
	if err := brokerclient.ValidateSymbol(req.Symbol); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if req.Quantity <= 0 || req.Quantity%100 != 0 {
		return nil, fmt.Errorf("%w: quantity %d: want a positive multiple of 100", ErrInput, req.Quantity)
	}
	if req.Policy.MaxPrice.IsNegative() || req.Policy.MaxCost.IsNegative() {
		return nil, fmt.Errorf("%w: price and cost caps must not be negative", ErrInput)
	}
	etb, _, err := e.client.Orders.EasyToBorrow(ctx, e.cfg.Account, req.Symbol)
	if err != nil {
		return nil, fmt.Errorf("easy-to-borrow check: %w", err)
	}
	w := e.newWorkflow(states.Locate, req.Symbol, req.Quantity)
	w.Policy = req.Policy
	if err := e.store.Create(ctx, w); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.track(w)
	e.mu.Unlock()
	h := &Handle{ID: w.ID, e: e}
	if etb {
		_, err := e.apply(w, store.Change{To: states.NotNeeded, Event: states.Skip, Reason: req.Symbol + " is easy to borrow"}, nil)
		return h, err
	}
	rows, err := e.readInventory(ctx)
	if err != nil {
		e.apply(w, store.Change{To: states.Failed, Event: states.Fail, Reason: "inventory read failed: " + err.Error()}, nil)
		return h, err
	}
	if have := brokerclient.Available(rows, req.Symbol); have >= req.Quantity {
		_, err := e.apply(w, store.Change{To: states.Covered, Event: states.Cover,
			Reason: fmt.Sprintf("inventory holds %d available", have)}, nil)
		return h, err
	}
	e.mu.Lock()
	e.queue = append(e.queue, w.ID)
	e.mu.Unlock()
	e.wakeDispatcher()
	return h, nil
}

// CreditBack returns shares of symbol's typ inventory row (spec "Short
// locates" rule 5). It refuses, sending nothing, when the row does not hold
// that many available shares.
func (e *Engine) CreditBack(ctx context.Context, symbol string, shares int64, typ brokerclient.LocateType) (*Handle, error) {
	if err := brokerclient.ValidateSymbol(symbol); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if err := brokerclient.ValidateLocateQuantity(shares); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if typ == brokerclient.LocateTypeIntraDay {
		typ = brokerclient.LocateTypeLocate
	}
	if typ != brokerclient.LocateTypeLocate && typ != brokerclient.LocateTypePreBorrow && typ != brokerclient.LocateTypeSingleUse {
		return nil, fmt.Errorf("%w: type %q: want Locate, PreBorrow or SingleUse", ErrInput, typ)
	}
	rows, err := e.readInventory(ctx)
	if err != nil {
		return nil, err
	}
	var have int64
	for _, r := range rows {
		if r.Symbol == symbol && r.Type() == typ {
			have += r.Available
		}
	}
	if have < shares {
		return nil, fmt.Errorf("%w: %s %s inventory has %d available, fewer than %d", ErrInput, symbol, typ, have, shares)
	}
	w := e.newWorkflow(states.CreditBack, symbol, shares)
	w.Quantity, w.LocateType = shares, string(typ)
	if err := e.store.Create(ctx, w); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.track(w)
	e.mu.Unlock()
	e.sendSell(w.ID)
	return &Handle{ID: w.ID, e: e}, nil
}

// Cancel cancels an unfinished workflow: one not yet sent ends at once;
// a sent quote or sell is cancelled at the broker and ends when history
// shows it (status 52).
func (e *Engine) Cancel(ctx context.Context, id string) error {
	w := e.get(id)
	if w == nil {
		if stored, err := e.store.Get(ctx, id); err == nil {
			return fmt.Errorf("%w: %s is %s", ErrNotOpen, id, stored.State)
		}
		return fmt.Errorf("%w: unknown workflow %s", ErrNotOpen, id)
	}
	switch w.State {
	case states.Requested:
		e.mu.Lock()
		e.removeQueued(id)
		e.mu.Unlock()
		_, err := e.apply(w, store.Change{To: states.Canceled, Event: states.Cancel, Reason: "cancelled before sending"}, nil)
		return err
	case states.Quoting, states.Pending, states.Offered, states.Submitted, states.New:
		saved, err := e.apply(w, store.Change{To: states.Canceling, Event: states.Cancel, Reason: "cancel requested"}, nil)
		if err != nil {
			return err
		}
		e.sendCancel(saved)
		return nil
	}
	return fmt.Errorf("%w: %s is %s and cannot be cancelled now", ErrNotOpen, id, w.State)
}

// removeQueued drops id from the quote queue; e.mu held.
func (e *Engine) removeQueued(id string) {
	for i, q := range e.queue {
		if q == id {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			return
		}
	}
}

// readInventory reads the account's locate inventory and keeps a snapshot.
func (e *Engine) readInventory(ctx context.Context) ([]brokerclient.InventoryRow, error) {
	rows, _, err := e.client.Locates.Inventory(ctx, e.cfg.Account)
	if err != nil {
		return nil, err
	}
	e.onInventory(rows)
	return rows, nil
}

// onInventory keeps the latest inventory and persists a snapshot.
func (e *Engine) onInventory(rows []brokerclient.InventoryRow) {
	e.mu.Lock()
	e.inventory = rows
	e.mu.Unlock()
	if err := e.store.SaveInventory(context.Background(), e.cfg.Account, rawJSON(rows)); err != nil {
		e.log.Warn("inventory snapshot not saved", "err", err)
	}
}

// Inventory returns the latest inventory read.
func (e *Engine) Inventory() []brokerclient.InventoryRow {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]brokerclient.InventoryRow(nil), e.inventory...)
}

// writeOutcome classifies the error of a quote or sell that left: a sync
// refusal ends the workflow as rejected; an unknown outcome leaves it to be
// settled from history; anything else is logged and left to the timers.
func (e *Engine) writeOutcome(w *store.Workflow, op string, err error) {
	var unknown *brokerclient.OutcomeUnknownError
	switch {
	case err == nil:
	case errors.As(err, &unknown):
		e.log.Warn(op+" outcome unknown; settling from history", "id", w.ID, "quoteReqID", w.QuoteReqID)
	case errors.Is(err, brokerclient.ErrBadRequest), errors.Is(err, brokerclient.ErrNotFound), errors.Is(err, brokerclient.ErrInvalidInput):
		e.apply(w, store.Change{To: states.Rejected, Event: states.RowRejected, Reason: "broker refused the " + op + ": " + err.Error()}, nil)
	default:
		e.log.Warn(op+" failed", "id", w.ID, "err", err)
	}
}
