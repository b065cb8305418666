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
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
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
//     already sold short are out of `available`) beyond the available
//     shares of a used SingleUse row of the symbol, which the broker fills
//     them from once the reusable ones are gone, rounded down to whole
//     lots of 100 (the sell's quantity step);
//   - SingleUse rows (the .SU side of a Reg SHO pair): the same, but only
//     if no share of the row was used to open a short (singleUseUsed: none
//     tied to a short now, and either every share this store's SingleUse
//     locates filled since dayStart, the start of the trading day, still
//     available or credited back, or the row was emptied, and so dropped
//     by the broker, before its latest lots and no cover came since).
//
// A symbol with a locate in flight is left alone (its shares are wanted),
// and so is a row with a credit-back open in the store or queued at the
// broker (toBeSold > 0), so nothing is sold twice. It reads the inventory,
// the order book and, when a SingleUse row needs it, the locate history,
// and sends nothing. Rows are planned and skipped in symbol order; those
// filter leaves out are neither.
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
	if u.needsHistory(rows) {
		hist, _, err := c.Locates.History(ctx, account)
		if err != nil {
			return nil, nil, fmt.Errorf("locate history (when the SingleUse lots were located): %w", err)
		}
		u.suLots = singleUseLots(hist)
		u.covers = coverTimes(book)
	}
	// Shorts draw on reusable rows before SingleUse ones: hold back from
	// those first (after a used SingleUse row, see plan).
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
// locates (suDay, by symbol). When the day's sums do not clear a SingleUse
// row, the broker's SingleUse lots of the day (suLots) and the times of
// the day's covers (covers), both by symbol, tell whether the row was
// emptied since a short used it (emptiedSince).
type inventoryUses struct {
	hold   map[string]int64
	busy   map[string]string
	wanted map[string]string
	suDay  map[string]singleUseDay
	suLots map[string][]singleUseLot
	covers map[string][]brokerclient.Time
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
// them). Working short sells are held back first on the available shares
// of a SingleUse row already used to open a short, which may not be
// credited back whatever is done (spec "Short locates" rule 5): once the
// reusable rows are credited back the broker fills the short from them,
// so holding reusable shares for it as well would leave them unsold.
func (u *inventoryUses) plan(rows []brokerclient.InventoryRow, filter UnusedFilter) ([]locator.Credit, []locator.Skip) {
	var plan []locator.Credit
	var skipped []locator.Skip
	skip := func(row brokerclient.InventoryRow, why string) {
		if filter.keeps(row.Symbol, row.Type()) {
			skipped = append(skipped, locator.Skip{Symbol: row.Symbol, Type: row.Type(), Reason: why})
		}
	}
	hold, busy, wanted := u.hold, u.busy, u.wanted
	used := make([]string, len(rows)) // how a SingleUse row was used, "" when it was not
	for i, row := range rows {
		if row.Type() == brokercode.LocateTypeSingleUse && row.ToBeSold == 0 {
			used[i] = u.singleUseUsed(row)
		}
		if used[i] != "" {
			hold[row.Symbol] -= min(hold[row.Symbol], row.Available)
		}
	}
	for i, row := range rows {
		typ := row.Type()
		if typ != brokercode.LocateTypeLocate && typ != brokercode.LocateTypePreBorrow && typ != brokercode.LocateTypeSingleUse {
			skip(row, fmt.Sprintf("locate type %d cannot be credited back", row.LocateType))
			continue
		}
		avail := row.Available
		if h := min(hold[row.Symbol], avail); h > 0 && used[i] == "" {
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
		case used[i] != "":
			skip(row, "SingleUse already used ("+used[i]+")")
			continue
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

// singleUseUsed says how the SingleUse row was used to open a short, or ""
// when it was not or has been emptied since (emptiedSince).
func (u *inventoryUses) singleUseUsed(row brokerclient.InventoryRow) string {
	if why := singleUseUsed(row, u.suDay[row.Symbol]); why != "" && !u.emptiedSince(row) {
		return why
	}
	return ""
}

// needsHistory reports whether a SingleUse row with shares and none tied
// is not cleared by the day's sums (singleUseUsed), so that whether it was
// emptied since a short used it (emptiedSince) must be read.
func (u *inventoryUses) needsHistory(rows []brokerclient.InventoryRow) bool {
	for _, row := range rows {
		if row.Type() == brokercode.LocateTypeSingleUse && row.Available >= brokercode.LocateLot && row.Unavailable == 0 &&
			row.ToBeSold == 0 && singleUseUsed(row, u.suDay[row.Symbol]) != "" {
			return true
		}
	}
	return false
}

// singleUseLot is one SingleUse lot the broker filled on the account
// today: its shares and when its quote reached the broker (on the
// broker's clock, no later than the fill).
type singleUseLot struct {
	shares int64
	quoted brokerclient.Time
}

// singleUseLots lists, per symbol and oldest first, the account's filled
// SingleUse lots in the broker's locate history (the trading day's rows,
// whoever located them). Quotes of one symbol are one at a time (spec
// "Short locates" rule 4), so quote order is fill order.
func singleUseLots(hist []brokerclient.HistoryRow) map[string][]singleUseLot {
	out := map[string][]singleUseLot{}
	for _, h := range hist {
		if h.Type() == brokercode.LocateTypeSingleUse && h.LocateStatus == brokercode.LocateStatusFilled && h.FilledShares > 0 {
			out[h.Symbol] = append(out[h.Symbol], singleUseLot{shares: h.FilledShares, quoted: h.CreatedDate})
		}
	}
	for _, lots := range out {
		sort.SliceStable(lots, func(i, k int) bool { return lots[i].quoted.Before(lots[k].quoted.Time) })
	}
	return out
}

// coverTimes lists, per symbol, when each of the order book's buys that
// did not open a position and executed shares (a cover: it releases the
// shares a short tied, and consumes SingleUse ones) last changed: no
// earlier than its last execution.
func coverTimes(book []brokerclient.Order) map[string][]brokerclient.Time {
	out := map[string][]brokerclient.Time{}
	for _, o := range book {
		if o.Side == brokerclient.SideBuy && o.OpenClose != brokerclient.OpenCloseOpen && o.Executed > 0 {
			out[o.Symbol] = append(out[o.Symbol], o.LastUpdated)
		}
	}
	return out
}

// emptiedSince reports whether the SingleUse row, none of it tied to a
// short (unavailable 0, nothing queued), holds only lots located after it
// was last emptied and opened no short since (spec "Short locates" rule
// 5; the broker drops a row once nothing is left in it, available,
// unavailable or queued, and starts a new one, sold 0, with the next
// lot). That holds when, for some lot k of the day, the shares of lot k
// and the lots after it less the row's sold equal its available, and no
// cover executed since lot k was quoted: with no share consumed since,
// the row held nothing just before lot k (what it held then, plus any of
// its sold from before lot k, is the shortfall), so the row began at lot
// k or later, and a short drawing on it since would show as unavailable
// or as a cover. A cover whose time cannot be compared with the lot's
// counts as after it.
func (u *inventoryUses) emptiedSince(row brokerclient.InventoryRow) bool {
	if row.Unavailable != 0 || row.ToBeSold != 0 {
		return false
	}
	lots, covers := u.suLots[row.Symbol], u.covers[row.Symbol]
	var since int64 // shares of lot k and the lots after it
	for k := len(lots) - 1; k >= 0; k-- {
		since += lots[k].shares
		if since-row.Sold != row.Available {
			continue
		}
		for _, c := range covers {
			if c.IsZero() || c.NoZone != lots[k].quoted.NoZone || !c.Before(lots[k].quoted.Time) {
				return false
			}
		}
		return true
	}
	return false
}
