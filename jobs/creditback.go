package jobs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// CreditBackUnused is the body of a credit-back-unused job: it credits back
// every located share not tied to a short (spec "Short locates" rule 5 and
// "Locate types"):
//
//   - Locate and PreBorrow rows: available, less the shares working
//     Sell/Open orders on the symbol will need, rounded down to 100;
//   - SingleUse rows: the same, but only if never used to open a short
//     (unavailable 0, sold 0, and no fewer available than this store's
//     SingleUse fills of the symbol today).
//
// A symbol with a locate in flight is left alone. It never sells a share
// twice: credit-backs this engine has open (left by an earlier run or a
// restart) are waited for first and the inventory read after them, and a
// (symbol, type) with a credit-back open elsewhere in the store or queued at
// the broker (toBeSold > 0) is left alone.
func (r *Runner) CreditBackUnused(ctx context.Context) (string, error) {
	var parts []outcome
	open, err := r.open(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range open {
		if w.Kind != states.CreditBack {
			continue
		}
		done, err := r.Account.Follow(ctx, account.FollowRequest{ID: w.ID}, nil)
		o := outcome{label: fmt.Sprintf("%s %s", w.Symbol, w.LocateType), w: done, err: err, note: "(left open by an earlier run)"}
		o.ok = err == nil && done.State == states.Credited
		if err != nil {
			o.w = nil
		}
		parts = append(parts, o)
		if err != nil {
			return summarize(parts, "")
		}
	}
	plan, skipped, err := r.creditPlan(ctx)
	if err != nil {
		return "", err
	}
	parts = append(parts, skipped...)
	type started struct {
		o  outcome
		id string
	}
	var inflight []started
	for _, p := range plan {
		o := outcome{label: fmt.Sprintf("%s %s", p.symbol, p.typ)}
		if r.draining() {
			o.err = fmt.Errorf("not started: shutting down: %w", context.Canceled)
			parts = append(parts, o)
			continue
		}
		s, err := r.Account.CreditBack(ctx, account.CreditBackRequest{Symbol: p.symbol, Quantity: p.shares, Type: p.typ})
		switch {
		case errors.Is(err, brokercode.ErrInput):
			// The row changed since the plan (a short took shares): what is
			// left is not ours to sell.
			o.ok, o.note = true, "skipped: "+err.Error()
			parts = append(parts, o)
		case err != nil:
			o.err = err
			parts = append(parts, o)
		default:
			inflight = append(inflight, started{o, s.ID})
		}
	}
	for _, s := range inflight {
		w, err := r.Account.Follow(ctx, account.FollowRequest{ID: s.id}, nil)
		s.o.w, s.o.err = w, err
		s.o.ok = err == nil && w.State == states.Credited
		parts = append(parts, s.o)
	}
	return summarize(parts, "nothing to credit back")
}

// credit is one planned credit-back.
type credit struct {
	symbol string
	typ    brokercode.LocateType
	shares int64
}

// creditPlan reads the inventory and the order book and decides what to
// sell; skipped lists rows left alone on purpose, with why.
func (r *Runner) creditPlan(ctx context.Context) ([]credit, []outcome, error) {
	rows, _, err := r.Client.Locates.Inventory(ctx, r.AccountID)
	if err != nil {
		return nil, nil, fmt.Errorf("inventory: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	book, _, err := r.Client.Orders.Book(ctx, r.AccountID)
	if err != nil {
		return nil, nil, fmt.Errorf("order book (working short sells hold located shares): %w", err)
	}
	// Working short sells hold located shares: the one definition of
	// available shares (workflow.Available) decides which.
	orders := ledger.BookOrders(book)
	hold := map[string]int64{}
	for _, row := range rows {
		if _, ok := hold[row.Symbol]; !ok {
			hold[row.Symbol] = workflow.WorkingShortSells(orders, row.Symbol)
		}
	}
	open, err := r.Store.List(ctx, store.Filter{Account: r.AccountID, Kind: states.CreditBack, Open: true})
	if err != nil {
		return nil, nil, err
	}
	busy := map[string]string{}
	for _, w := range open {
		busy[w.Symbol+" "+w.LocateType] = w.ID
	}
	// A locate in flight means someone wants the symbol located now: its
	// shares are not "unused".
	locating, err := r.Store.List(ctx, store.Filter{Account: r.AccountID, Kind: states.Locate, Open: true})
	if err != nil {
		return nil, nil, err
	}
	wanted := map[string]string{}
	for _, w := range locating {
		wanted[w.Symbol] = w.ID
	}
	suFilled, err := r.singleUseFilledToday(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Shorts draw on reusable rows before SingleUse ones: hold back from
	// those first.
	sort.SliceStable(rows, func(i, k int) bool {
		if rows[i].Symbol != rows[k].Symbol {
			return rows[i].Symbol < rows[k].Symbol
		}
		return rows[i].Type() != brokercode.LocateTypeSingleUse && rows[k].Type() == brokercode.LocateTypeSingleUse
	})
	var plan []credit
	var skipped []outcome
	skip := func(row brokerclient.InventoryRow, why string) {
		skipped = append(skipped, outcome{label: fmt.Sprintf("%s %s", row.Symbol, row.Type()), note: "skipped: " + why, ok: true})
	}
	for _, row := range rows {
		typ := row.Type()
		if typ != brokercode.LocateTypeLocate && typ != brokercode.LocateTypePreBorrow && typ != brokercode.LocateTypeSingleUse {
			skip(row, fmt.Sprintf("locate type %d cannot be credited back", row.LocateType))
			continue
		}
		avail := row.Available
		if h := min(hold[row.Symbol], avail); h > 0 {
			hold[row.Symbol] -= h
			avail -= h
			if avail < brokerclient.LocateLot {
				skip(row, fmt.Sprintf("%d held for working short sells", h))
				continue
			}
		}
		shares := avail / brokerclient.LocateLot * brokerclient.LocateLot
		switch {
		case busy[row.Symbol+" "+string(typ)] != "":
			skip(row, "a credit-back is already open ("+busy[row.Symbol+" "+string(typ)]+")")
			continue
		case wanted[row.Symbol] != "":
			skip(row, "a locate of the symbol is in flight ("+wanted[row.Symbol]+")")
			continue
		case row.ToBeSold > 0:
			skip(row, fmt.Sprintf("%d shares already queued for credit-back", row.ToBeSold))
			continue
		case shares < brokerclient.LocateLot:
			continue // nothing, or less than a lot: not worth a line
		}
		if typ == brokercode.LocateTypeSingleUse {
			var used []string
			if row.Unavailable > 0 {
				used = append(used, fmt.Sprintf("%d unavailable", row.Unavailable))
			}
			if row.Sold > 0 {
				used = append(used, fmt.Sprintf("%d sold", row.Sold))
			}
			if got := suFilled[row.Symbol]; row.Available < got {
				used = append(used, fmt.Sprintf("%d available of %d filled today", row.Available, got))
			}
			if len(used) > 0 {
				skip(row, "SingleUse already used ("+strings.Join(used, ", ")+")")
				continue
			}
		}
		plan = append(plan, credit{symbol: row.Symbol, typ: typ, shares: shares})
	}
	return plan, skipped, nil
}

// singleUseFilledToday sums, per symbol, the SingleUse shares this store's
// locates filled since the start of the trading day.
func (r *Runner) singleUseFilledToday(ctx context.Context) (map[string]int64, error) {
	ws, err := r.Store.List(ctx, store.Filter{Account: r.AccountID, Kind: states.Locate, Since: marketDay(r.now())})
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, w := range ws {
		if w.State == states.Filled && w.LocateType == string(brokercode.LocateTypeSingleUse) {
			out[w.Symbol] += w.Quantity
		}
	}
	return out, nil
}
