package ledger

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// UnusedFilter narrows Unused to one symbol and one row type (empty: all).
type UnusedFilter struct {
	Symbol string
	Type   brokercode.LocateType
}

func (f UnusedFilter) keeps(symbol string, typ brokercode.LocateType) bool {
	return (f.Symbol == "" || f.Symbol == symbol) && (f.Type == "" || f.Type == typ)
}

// Unused is the one definition of located shares not in use, which
// `locator credit-back --all` and the credit-back-unused job sell back
// (spec "Short locates" rule 5 and "Locate types"):
//
//   - Locate and PreBorrow rows: available, less the shares working
//     Sell/Open orders on the symbol will need (workflow.Available: shares
//     already sold short are out of `available`), rounded down to whole
//     lots of 100 (the sell's quantity step);
//   - SingleUse rows (the .SU side of a Reg SHO pair): the same, but only
//     if no share of the row was used to open a short (singleUseUsed: none
//     tied to a short now, and every share this store's SingleUse locates
//     filled since dayStart, the start of the trading day, still available
//     or credited back).
//
// A symbol with a locate in flight is left alone (its shares are wanted),
// and so is a row with a credit-back open in the store or queued at the
// broker (toBeSold > 0), so nothing is sold twice. It reads the inventory
// and the order book and sends nothing. Rows are planned and skipped in
// symbol order; those filter leaves out are neither.
func Unused(ctx context.Context, c *brokerclient.Client, st *store.Store, account string, dayStart time.Time, filter UnusedFilter) ([]locator.Credit, []locator.Skip, error) {
	rows, _, err := c.Locates.Inventory(ctx, account)
	if err != nil {
		return nil, nil, fmt.Errorf("inventory: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	book, _, err := c.Orders.Book(ctx, account)
	if err != nil {
		return nil, nil, fmt.Errorf("order book (working short sells hold located shares): %w", err)
	}
	u, err := usesOf(ctx, st, account, dayStart, rows, BookOrders(book))
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
	plan, skipped := u.plan(rows, filter)
	return plan, skipped, nil
}

// inventoryUses is what keeps located shares from being unused: working
// short sells (hold, by symbol), open credit-backs (busy, by symbol and
// type), locates in flight (wanted, by symbol) and the day's SingleUse
// locates (suDay, by symbol).
type inventoryUses struct {
	hold   map[string]int64
	busy   map[string]string
	wanted map[string]string
	suDay  map[string]singleUseDay
}

// usesOf gathers the uses of rows' shares from the order book and the store.
func usesOf(ctx context.Context, st *store.Store, account string, dayStart time.Time, rows []brokerclient.InventoryRow, orders []workflow.BookOrder) (*inventoryUses, error) {
	// Working short sells hold located shares: the one definition of
	// available shares (workflow.Available) decides which.
	u := &inventoryUses{hold: map[string]int64{}, busy: map[string]string{}, wanted: map[string]string{}}
	for _, row := range rows {
		if _, ok := u.hold[row.Symbol]; !ok {
			u.hold[row.Symbol] = workflow.WorkingShortSells(orders, row.Symbol)
		}
	}
	open, err := st.List(ctx, store.Filter{Account: account, Kind: states.CreditBack, Open: true})
	if err != nil {
		return nil, err
	}
	for _, w := range open {
		u.busy[w.Symbol+" "+w.LocateType] = w.ID
	}
	// A locate in flight means someone wants the symbol located now: its
	// shares are not "unused".
	locating, err := st.List(ctx, store.Filter{Account: account, Kind: states.Locate, Open: true})
	if err != nil {
		return nil, err
	}
	for _, w := range locating {
		u.wanted[w.Symbol] = w.ID
	}
	if u.suDay, err = singleUseToday(ctx, st, account, dayStart); err != nil {
		return nil, err
	}
	return u, nil
}

// plan goes through rows in order: the whole lots no use keeps are
// credits, the rows a use keeps are skips (both only where filter keeps
// them).
func (u *inventoryUses) plan(rows []brokerclient.InventoryRow, filter UnusedFilter) ([]locator.Credit, []locator.Skip) {
	var plan []locator.Credit
	var skipped []locator.Skip
	skip := func(row brokerclient.InventoryRow, why string) {
		if filter.keeps(row.Symbol, row.Type()) {
			skipped = append(skipped, locator.Skip{Symbol: row.Symbol, Type: row.Type(), Reason: why})
		}
	}
	hold, busy, wanted, suDay := u.hold, u.busy, u.wanted, u.suDay
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
			if avail < brokercode.LocateLot {
				skip(row, fmt.Sprintf("%d held for working short sells", h))
				continue
			}
		}
		shares := avail / brokercode.LocateLot * brokercode.LocateLot
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
		case shares < brokercode.LocateLot:
			continue // nothing, or less than a lot: not worth a line
		}
		if typ == brokercode.LocateTypeSingleUse {
			if why := singleUseUsed(row, suDay[row.Symbol]); why != "" {
				skip(row, "SingleUse already used ("+why+")")
				continue
			}
		}
		if filter.keeps(row.Symbol, typ) {
			plan = append(plan, locator.Credit{Symbol: row.Symbol, Type: typ, Shares: shares})
		}
	}
	return plan, skipped
}

// singleUseDay is what this store's workflows did to one symbol's
// SingleUse row since the start of the trading day: shares filled by its
// locates and shares credited back by its credit-backs.
type singleUseDay struct {
	filled, credited int64
}

// singleUseToday sums, per symbol, the SingleUse shares the store's locates
// of account filled, and its credit-backs credited, since dayStart.
// Located inventory lasts the trading day it was bought in (spec "Locate
// types": SingleUse is not reusable; brokersim drops the rows at the
// rollover), so a lot bought before dayStart is no part of today's row.
func singleUseToday(ctx context.Context, st *store.Store, account string, dayStart time.Time) (map[string]singleUseDay, error) {
	out := map[string]singleUseDay{}
	for _, kind := range []states.Kind{states.Locate, states.CreditBack} {
		ws, err := st.List(ctx, store.Filter{Account: account, Kind: kind, Since: dayStart})
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if w.LocateType != string(brokercode.LocateTypeSingleUse) {
				continue
			}
			d := out[w.Symbol]
			switch w.State {
			case states.Filled:
				d.filled += w.Quantity
			case states.Credited:
				d.credited += w.Quantity
			}
			out[w.Symbol] = d
		}
	}
	return out, nil
}

// singleUseUsed says how a SingleUse row was used to open a short, or ""
// when no share of it was (spec "Short locates" rule 5). The row is read
// when nothing is queued for credit-back (toBeSold 0), so no share of it is
// locked by a sell: its unavailable shares are tied to open shorts, and
// each share filled today is available, credited back, or was used by a
// short (tied now, or consumed by one since covered: SingleUse shares do
// not come back). Shares credited back are the more of the broker's sold
// (which starts again when an emptied row goes) and this store's
// credit-backs: both count only credits that cleared, so neither makes
// the shares used fewer than they are.
func singleUseUsed(row brokerclient.InventoryRow, day singleUseDay) string {
	credited := max(row.Sold, day.credited)
	used := day.filled - credited - row.Available
	var why []string
	if row.Unavailable > 0 {
		why = append(why, fmt.Sprintf("%d unavailable", row.Unavailable))
	}
	if used > 0 {
		why = append(why, fmt.Sprintf("%d filled today, %d sold back, %d available: %d opened shorts", day.filled, credited, row.Available, used))
	}
	return strings.Join(why, ", ")
}
