package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// AuditOptions are what Audit needs besides the store.
type AuditOptions struct {
	Account string
	Range   locator.DateRange
	// Skew is the broker's clock offset, added to the store's times where
	// the broker's own are not known.
	Skew time.Duration
	// Seen are orders read from the broker's order book: short sales among
	// them that locator did not place are audited too, and those it did
	// are timed by the book.
	Seen []brokerclient.Order
}

// AuditBook is what `locator audit` and the audit job do once they have
// read the broker's order book of the session through the account (the
// short sales seen there, and skew, the broker's clock offset its answer
// told): Audit over rng (a zero rng: the last days trading days to the
// broker's today, DefaultDays when days is 0; a zero rng.To: today).
func AuditBook(ctx context.Context, st *store.Store, account string, book []brokerclient.Order, skew time.Duration, hostNow time.Time, rng locator.DateRange, days int) (*locator.AuditTrail, error) {
	today := ledger.TradeDate(hostNow.Add(skew))
	switch {
	case rng.From.IsZero():
		rng = LastTradingDays(today, cmp.Or(days, DefaultDays))
	case rng.To.IsZero():
		rng.To = today
	}
	return Audit(ctx, st, AuditOptions{Account: account, Range: rng, Skew: skew, Seen: book})
}

// auditEvent is one thing that changes what covers a symbol's short sales
// on a day: a locate filled, an easy-to-borrow check, a credit-back, a
// short sale sent, a short sale executed, a cover filled.
type auditEvent struct {
	at     time.Time
	symbol string
	kind   string // "locate", "etb", "credit", "short", "exec", "cover"
	w      *workflow.Workflow
	shares int64
	row    *locator.AuditRow // short, exec
}

// eventRank orders events of the same millisecond.
var eventRank = map[string]int{"locate": 0, "etb": 0, "cover": 1, "credit": 2, "short": 3, "exec": 4}

// Audit matches every short sale (Sell/Open) locator placed, and every one
// in o.Seen it did not, to what covered it when it was sent, on the broker's
// clock and within the broker's trading day (a locate covers the day it
// was filled, spec "Locate types", and the day ends at the 8 PM rollover,
// market.SessionStart):
//
//   - an easy-to-borrow check answered earlier that day covers it whole;
//   - otherwise located shares do, oldest locate first: each filled locate
//     adds its shares, a credit-back takes its shares away, a short sale's
//     executed shares are tied from its execution until a cover (Buy/Close)
//     fills and returns them (Locate and PreBorrow shares are reusable
//     within the day, SingleUse shares are not: they stay used);
//   - a short whose quantity exceeds the shares free when it was sent is
//     flagged, whatever the broker did with it (it may have rejected it);
//   - so is one whose executed shares exceed the shares free when it
//     executed: a working short sale whose located shares were credited
//     back (or taken by another short) before it filled.
//
// Both sides are on the broker's clock wherever the broker told the time:
// a locate counts from its fill (its history row's updatedDate), a short
// from its startTime in the book and its execution from its lastUpdated
// (the last fill's time; a partly filled order cancelled later is judged
// at the cancel), a cover from its lastUpdated; the times
// locator recorded, shifted by the skew's estimate (good to about a
// second), stand in only where the broker's are not known (an
// easy-to-borrow check; an order no longer in the book).
//
// Short sales never sent (a write-ahead record with no answer) are left
// out: nothing reached the market.
func Audit(ctx context.Context, st *store.Store, o AuditOptions) (*locator.AuditTrail, error) {
	if strings.TrimSpace(o.Account) == "" {
		return nil, fmt.Errorf("audit: account is empty")
	}
	mine := func(account string) bool { return strings.EqualFold(account, o.Account) }
	t := &locator.AuditTrail{Account: strings.ToUpper(o.Account), Range: o.Range}
	evs, err := workflowEvents(ctx, st, o, mine)
	if err != nil {
		return nil, err
	}
	shorts, err := orderEvents(ctx, st, o, mine)
	if err != nil {
		return nil, err
	}
	evs = append(evs, shorts...)
	// Times are compared to the millisecond, the coarsest precision of the
	// broker's timestamps (spec "Cross-cutting conventions": 3 to 7
	// digits); within one, what adds cover goes before what uses it.
	slices.SortStableFunc(evs, func(x, y auditEvent) int {
		return cmp.Or(x.at.Truncate(time.Millisecond).Compare(y.at.Truncate(time.Millisecond)), cmp.Compare(eventRank[x.kind], eventRank[y.kind]))
	})
	days := map[cellKey]*coverDay{}
	var rows []*locator.AuditRow
	for _, ev := range evs {
		// Cover lasts the broker's trading day, to its 8 PM rollover.
		k := cellKey{ev.symbol, market.SessionStart(ev.at)}
		d := days[k]
		if d == nil {
			d = &coverDay{}
			days[k] = d
		}
		d.apply(ev)
		if ev.kind == "short" && o.Range.Contains(ev.row.Date) {
			rows = append(rows, ev.row)
		}
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, *r)
	}
	return t, nil
}

// workflowEvents are the cover events of the account's workflows (mine):
// locates filled or not needed, credit-backs done, each at the time the
// broker made it (brokerReachedAt).
func workflowEvents(ctx context.Context, st *store.Store, o AuditOptions, mine func(string) bool) ([]auditEvent, error) {
	var evs []auditEvent
	ws, err := st.List(ctx, store.Filter{Since: o.Range.From.Add(-o.Skew).AddDate(0, 0, -2)})
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		var kind string
		switch {
		case !mine(w.Account):
		case w.Kind == states.Locate && w.State == states.Filled:
			kind = "locate"
		case w.Kind == states.Locate && w.State == states.NotNeeded:
			kind = "etb"
		case w.Kind == states.CreditBack && w.State == states.Credited:
			kind = "credit"
		}
		if kind == "" {
			continue
		}
		at, err := brokerReachedAt(ctx, st, w, o.Skew)
		if err != nil {
			return nil, err
		}
		evs = append(evs, auditEvent{at: at, symbol: w.Symbol, kind: kind, w: w, shares: w.Quantity})
	}
	return evs, nil
}

// brokerReachedAt is when w reached its state on the broker's clock: the
// updatedDate of the history row that took it there (the leg accepted of
// a locate, the credit-back's row), as the broker's order times are, so a
// short sale sent right after a fill is never put before it by an error
// of the skew's estimate (good to about a second: the Date header's). A
// workflow with no such row (an easy-to-borrow check; a row with no zone;
// one recorded before legs carried their time) falls back to when locator
// saw it there, shifted by skew: never earlier than the broker did it,
// up to the estimate's error.
func brokerReachedAt(ctx context.Context, st *store.Store, w *workflow.Workflow, skew time.Duration) (time.Time, error) {
	if leg, ok := w.Legs[cmp.Or(w.AcceptedID, w.QuoteReqID)]; ok && w.State != states.NotNeeded && !leg.At.IsZero() {
		return leg.At, nil
	}
	at, err := ledger.ReachedAt(ctx, st, w)
	return at.Add(skew), err
}

// orderEvents are the account's short sales sent (by locator, or seen at
// the broker and never placed by locator) and its covering buys.
func orderEvents(ctx context.Context, st *store.Store, o AuditOptions, mine func(string) bool) ([]auditEvent, error) {
	var evs []auditEvent
	orders, err := st.Orders(ctx, store.OrderFilter{})
	if err != nil {
		return nil, err
	}
	book := map[string]brokerclient.Order{}
	for _, x := range o.Seen {
		book[x.ClientOrderID] = x
	}
	// brokerTime is t of an order in the book, on the broker's clock, else
	// mine (this machine's) shifted by the skew.
	brokerTime := func(t brokerclient.Time, mine time.Time) time.Time {
		if t.IsZero() || t.NoZone || t.DateOnly {
			return mine.Add(o.Skew)
		}
		return t.Time
	}
	placed := map[string]bool{}
	for _, x := range orders {
		if !mine(x.Account) {
			continue
		}
		placed[x.ClientOrderID], placed[x.LookupID()] = true, true
		seen := book[x.LookupID()]
		switch {
		case x.SentAt.IsZero() || x.State == states.OrderIntent:
		case x.Side == string(brokerclient.SideSell) && x.OpenClose == string(brokerclient.OpenCloseOpen):
			at := brokerTime(seen.StartTime, x.SentAt)
			// The book, when it holds the order, is the broker's word now
			// (a fill locator has not heard of yet included).
			executed, status := x.Executed, x.OrderStatus
			if seen.ClientOrderID != "" {
				executed, status = seen.Executed, string(seen.OrderStatus)
			}
			evs = append(evs, shortEvents(at, brokerTime(seen.LastUpdated, x.UpdatedAt), x.Symbol, &locator.AuditRow{
				Date: ledger.TradeDate(at), SentAt: at, ClientOrderID: x.LookupID(), Source: locator.SourceLocator, Symbol: x.Symbol,
				Quantity: x.Quantity, Executed: executed, OrderStatus: status})...)
		case x.Side == string(brokerclient.SideBuy) && x.OpenClose == string(brokerclient.OpenCloseClose) && x.Executed > 0:
			evs = append(evs, auditEvent{at: brokerTime(seen.LastUpdated, x.UpdatedAt), symbol: x.Symbol, kind: "cover", shares: x.Executed})
		}
	}
	for _, x := range o.Seen {
		if placed[x.ClientOrderID] || x.Side != brokerclient.SideSell || x.OpenClose != brokerclient.OpenCloseOpen {
			continue
		}
		at := x.StartTime.Time
		evs = append(evs, shortEvents(at, brokerTime(x.LastUpdated, at), x.Symbol, &locator.AuditRow{
			Date: ledger.TradeDate(at), SentAt: at, ClientOrderID: x.ClientOrderID, Source: locator.SourceBroker, Symbol: x.Symbol,
			Quantity: x.OrderQuantity, Executed: x.Executed, OrderStatus: string(x.OrderStatus)})...)
	}
	return evs, nil
}

// shortEvents are a short sale's sending at sent and, once it executed,
// its execution at executed (never before its sending).
func shortEvents(sent, executed time.Time, symbol string, row *locator.AuditRow) []auditEvent {
	evs := []auditEvent{{at: sent, symbol: symbol, kind: "short", row: row}}
	if row.Executed > 0 {
		evs = append(evs, auditEvent{at: later(executed, sent), symbol: symbol, kind: "exec", shares: row.Executed, row: row})
	}
	return evs
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// lot is a locate's shares on its day: how many are free, how many tied.
type lot struct {
	w    *workflow.Workflow
	at   time.Time
	free int64
}

// reusable reports whether the lot's shares come back when the short
// they covered is covered: Locate and PreBorrow shares do, SingleUse
// shares once used to open a short never (spec "Locate types").
func (l *lot) reusable() bool {
	return l.w.LocateType != string(brokercode.LocateTypeSingleUse)
}

// coverDay is what covers one symbol's short sales on one trade date.
type coverDay struct {
	etb  *auditEvent
	lots []*lot
	tied []tie // shares of short sales, oldest first, until covered
}

// tie is shares of a short sale taken from a lot.
type tie struct {
	lot    *lot
	shares int64
}

func (d *coverDay) apply(ev auditEvent) {
	switch ev.kind {
	case "locate":
		d.lots = append(d.lots, &lot{w: ev.w, at: ev.at, free: ev.shares})
	case "etb":
		if d.etb == nil {
			e := ev
			d.etb = &e
		}
	case "credit":
		left := ev.shares
		for _, l := range d.lots {
			n := min(left, l.free)
			l.free -= n
			left -= n
		}
	case "cover":
		left := ev.shares
		for left > 0 && len(d.tied) > 0 {
			n := min(left, d.tied[0].shares)
			if d.tied[0].lot.reusable() {
				d.tied[0].lot.free += n
			}
			left -= n
			if d.tied[0].shares -= n; d.tied[0].shares == 0 {
				d.tied = d.tied[1:]
			}
		}
	case "short":
		d.short(ev)
	case "exec":
		d.exec(ev)
	}
}

// short decides the cover of a short sale when it was sent.
func (d *coverDay) short(ev auditEvent) {
	r := ev.row
	if d.etb != nil {
		r.Covered = true
		r.Covers = []locator.AuditCover{{Kind: locator.CoverEasyToBorrow, WorkflowID: d.etb.w.ID, At: d.etb.at}}
		return
	}
	need := r.Quantity
	for _, l := range d.lots {
		if need == 0 {
			break
		}
		n := min(need, l.free)
		if n == 0 {
			continue
		}
		need -= n
		r.Covers = append(r.Covers, locator.AuditCover{Kind: locator.CoverLocate, WorkflowID: l.w.ID, QuoteReqID: cmp.Or(l.w.AcceptedID, l.w.QuoteReqID), Shares: n, At: l.at})
	}
	r.Covered = need == 0
	if !r.Covered {
		r.Flag = fmt.Sprintf("%d of %d shares had no locate or easy-to-borrow check when sent", need, r.Quantity)
	}
}

// exec ties a short sale's executed shares, oldest lot first, and flags
// the sale when fewer were free then than it executed (an easy-to-borrow
// check of the day covers them all).
func (d *coverDay) exec(ev auditEvent) {
	if d.etb != nil {
		return
	}
	left := ev.shares
	for _, l := range d.lots {
		if n := min(left, l.free); n > 0 {
			l.free -= n
			left -= n
			d.tied = append(d.tied, tie{l, n})
		}
	}
	if r := ev.row; left > 0 && r.Covered {
		r.Covered = false
		r.Flag = fmt.Sprintf("%d of %d executed shares had no located shares free when they executed at %s (credited back or used since it was sent)",
			left, ev.shares, ev.at.In(market.NewYork).Format("15:04:05 MST"))
	}
}
