package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// ParseRange reads --from and --to; zero dates are left to the library's
// defaults, which need the broker's today.
func ParseRange(from, to string) (locator.DateRange, error) {
	var r locator.DateRange
	for _, f := range []struct {
		name, v string
		t       *time.Time
	}{{"--from", from, &r.From}, {"--to", to, &r.To}} {
		if f.v == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, f.v)
		if err != nil {
			return r, fmt.Errorf("%s %q: want a date YYYY-MM-DD", f.name, f.v)
		}
		*f.t = d
	}
	if err := CheckRange(r); err != nil {
		return r, fmt.Errorf("--from %q --to %q: %w", from, to, err)
	}
	return r, nil
}

// CheckRange refuses a range a report or an audit cannot take
// (brokercode.ErrInput): a last date without a first, or before it. A zero
// range, or a zero last date, is left to the defaults, which need the
// broker's today.
func CheckRange(r locator.DateRange) error {
	switch {
	case r.From.IsZero() && !r.To.IsZero():
		return brokercode.Invalid("range", "a last date needs a first date")
	case !r.To.IsZero() && r.To.Before(r.From):
		return brokercode.Invalid("range", "the last date %s is before the first %s", r.To.Format(time.DateOnly), r.From.Format(time.DateOnly))
	}
	return nil
}

// DefaultDays is how many trading days a report covers by default.
const DefaultDays = 20

// LastTradingDays is the range of the n trading days of the NYSE calendar
// ending on the trade date today (included when the exchange trades).
func LastTradingDays(today time.Time, n int) locator.DateRange {
	r := locator.DateRange{From: today, To: today}
	for d, seen := today, 0; seen < n; d = d.AddDate(0, 0, -1) {
		if market.IsTradingDay(time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, market.NewYork)) {
			seen++
			r.From = d
		}
	}
	return r
}

// Options are what Build needs besides the store.
type Options struct {
	Account string
	Range   locator.DateRange
	// Now is the broker's time (for pending fees).
	Now time.Time
	// Skew is the broker's clock offset (brokerclient.Client.ClockSkew):
	// the store's times are this machine's, and are moved by it.
	Skew time.Duration
	// Grace is the fee grace of the reconciliation (ledger.FeeGrace when 0).
	Grace time.Duration
}

// FeeWindow is the fee check `locator report` has run first (the account
// API's Fees: the ledger synced and the fees reconciled by the account's
// owner, which alone writes its database): from rng's first date, or, as
// that needs the broker's today, over 45 calendar days, which always hold
// DefaultDays trading days.
func FeeWindow(rng locator.DateRange) locator.FeeWindow {
	return locator.FeeWindow{Since: rng.From, Days: 45}
}

// Run is the rest of what `locator report` does: Build on the broker's
// clock, told by fees, the fee check over FeeWindow(rng) made at hostNow
// by this machine's clock. A zero rng is the last DefaultDays trading days
// to the broker's today; a zero rng.To is the broker's today.
func Run(ctx context.Context, st *store.Store, account string, fees *locator.FeeReport, hostNow time.Time, rng locator.DateRange) (*locator.Report, error) {
	today := fees.Today
	switch {
	case rng.From.IsZero():
		rng = LastTradingDays(today, DefaultDays)
	case rng.To.IsZero():
		rng.To = today
	}
	return Build(ctx, st, Options{Account: account, Range: rng, Now: fees.Now, Skew: fees.Now.Sub(hostNow)})
}

// Build computes the report from the store alone: the reconciled fee and
// credit lines of the synced ledger (ledger.ReconcileStored) for located
// and credited shares and the money; the expired and declined locate
// workflows for the offers forgone; locator's orders for the shares
// shorted and the P&L of the shorts covered.
func Build(ctx context.Context, st *store.Store, o Options) (*locator.Report, error) {
	switch {
	case strings.TrimSpace(o.Account) == "":
		return nil, fmt.Errorf("report: account is empty")
	case o.Range.From.IsZero() || o.Range.To.IsZero() || o.Range.To.Before(o.Range.From):
		return nil, fmt.Errorf("report: range %s: want a first date on or before the last", o.Range)
	}
	if o.Grace == 0 {
		o.Grace = ledger.FeeGrace
	}
	b := &builder{rng: o.Range, cells: map[cellKey]*cell{}}
	rec, err := ledger.ReconcileStored(ctx, st, o.Account, o.Range.From, latest(o.Now, o.Range.From), o.Skew, o.Grace)
	if err != nil {
		return nil, err
	}
	for _, l := range rec.Lines {
		b.fee(l)
	}
	ws, err := st.List(ctx, store.Filter{Kind: states.Locate, Since: o.Range.From.Add(-o.Skew).AddDate(0, 0, -2)})
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if !strings.EqualFold(w.Account, o.Account) || (w.State != states.Expired && w.State != states.Declined) {
			continue
		}
		at, err := ledger.ReachedAt(ctx, st, w)
		if err != nil {
			return nil, err
		}
		if f := b.cell(w.Symbol, ledger.TradeDate(at.Add(o.Skew))); f != nil {
			f.ForgoneSpend = f.ForgoneSpend.Add(w.OfferPrice().Mul(decimal.NewFromInt(w.Quantity)))
		}
	}
	orders, err := st.Orders(ctx, store.OrderFilter{})
	if err != nil {
		return nil, err
	}
	orders = slices.DeleteFunc(orders, func(x *workflow.Order) bool { return !strings.EqualFold(x.Account, o.Account) })
	b.shorts(orders, o.Skew)
	r := b.report()
	r.Account, r.Range, r.Now = strings.ToUpper(o.Account), o.Range, o.Now
	return r, nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

type cellKey struct {
	symbol string
	date   time.Time
}

type builder struct {
	rng   locator.DateRange
	cells map[cellKey]*cell
}

// cell is a bucket's figures as they are summed, with what its derived
// figures are worked out from.
type cell struct {
	locator.Figures
	cost decimal.Decimal // Σ price × shares of the fills, for PricePer100
}

func newCell() *cell { return &cell{Figures: locator.Figures{Fees: map[locator.FeeStatus]int{}}} }

// cell is the bucket of symbol on date, nil outside the range.
func (b *builder) cell(symbol string, date time.Time) *cell {
	if !b.rng.Contains(date) {
		return nil
	}
	k := cellKey{symbol, date}
	f := b.cells[k]
	if f == nil {
		f = newCell()
		b.cells[k] = f
	}
	return f
}

// fee books one reconciled line: the shares of its workflow and its money,
// the ledger's amount once posted, else the expected one.
func (b *builder) fee(l locator.FeeLine) {
	symbol := l.Symbol
	if symbol == "" {
		symbol = "?"
	}
	f := b.cell(symbol, l.Date)
	if f == nil {
		return
	}
	f.Fees[l.Status]++
	amount := l.Charged
	if l.LedgerDate.IsZero() {
		amount = l.Expected
	}
	switch l.Kind {
	case locator.LineFee:
		f.Spend = f.Spend.Add(amount)
		if l.WorkflowID != "" {
			f.Located += l.Shares
			f.cost = f.cost.Add(l.Expected)
		}
	case locator.LineCredit:
		f.Recovery = f.Recovery.Add(amount)
		if l.WorkflowID != "" {
			f.Credited += l.Shares
		}
	}
}

// openShort is a short sale's shares not yet covered, at its price.
type openShort struct {
	shares int64
	price  decimal.Decimal
}

// shorts books locator's filled short sales and the realized P&L of their
// covers: per symbol, covers take the oldest open shorts first (all of
// them, before the range too, so a cover in it finds its short).
func (b *builder) shorts(orders []*workflow.Order, skew time.Duration) {
	filled := slices.Clone(orders)
	filled = slices.DeleteFunc(filled, func(o *workflow.Order) bool { return o.Executed <= 0 })
	slices.SortStableFunc(filled, func(x, y *workflow.Order) int { return x.UpdatedAt.Compare(y.UpdatedAt) })
	open := map[string][]openShort{}
	for _, o := range filled {
		// The broker's time of the fill when locator has it, else when
		// locator recorded it, on the broker's clock.
		date := ledger.TradeDate(o.UpdatedAt.Add(skew))
		if !o.ExecutedAt.IsZero() {
			date = ledger.TradeDate(o.ExecutedAt)
		}
		switch {
		case o.Side == string(brokerclient.SideSell) && o.OpenClose == string(brokerclient.OpenCloseOpen):
			open[o.Symbol] = append(open[o.Symbol], openShort{o.Executed, o.PriceAvg})
			if f := b.cell(o.Symbol, date); f != nil {
				f.Shorted += o.Executed
			}
		case o.Side == string(brokerclient.SideBuy) && o.OpenClose == string(brokerclient.OpenCloseClose):
			pnl := decimal.Zero
			left := o.Executed
			q := open[o.Symbol]
			for left > 0 && len(q) > 0 {
				n := min(left, q[0].shares)
				pnl = pnl.Add(q[0].price.Sub(o.PriceAvg).Mul(decimal.NewFromInt(n)))
				left -= n
				if q[0].shares -= n; q[0].shares == 0 {
					q = q[1:]
				}
			}
			open[o.Symbol] = q
			if f := b.cell(o.Symbol, date); f != nil {
				f.ShortPnL = f.ShortPnL.Add(pnl)
			}
		}
	}
}

// report sums the cells into the rows and finishes every row's ratios.
func (b *builder) report() *locator.Report {
	r := &locator.Report{}
	total := newCell()
	bySymbol := map[string]*cell{}
	byDate := map[time.Time]*cell{}
	keys := make([]cellKey, 0, len(b.cells))
	for k := range b.cells {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y cellKey) int {
		if c := x.date.Compare(y.date); c != 0 {
			return c
		}
		return strings.Compare(x.symbol, y.symbol)
	})
	for _, k := range keys {
		f := b.cells[k]
		f.finish()
		r.Days = append(r.Days, locator.ReportRow{Symbol: k.symbol, Date: k.date, Figures: f.Figures})
		if bySymbol[k.symbol] == nil {
			bySymbol[k.symbol] = newCell()
		}
		if byDate[k.date] == nil {
			byDate[k.date] = newCell()
		}
		bySymbol[k.symbol].add(f)
		byDate[k.date].add(f)
		total.add(f)
	}
	for symbol, f := range bySymbol {
		f.finish()
		r.Symbols = append(r.Symbols, locator.ReportRow{Symbol: symbol, Figures: f.Figures, PriceTrend: trend(r.Days, symbol)})
	}
	slices.SortFunc(r.Symbols, func(x, y locator.ReportRow) int { return strings.Compare(x.Symbol, y.Symbol) })
	for date, f := range byDate {
		f.finish()
		r.Dates = append(r.Dates, locator.ReportRow{Date: date, Figures: f.Figures})
	}
	slices.SortFunc(r.Dates, func(x, y locator.ReportRow) int { return x.Date.Compare(y.Date) })
	total.finish()
	r.Total = locator.ReportRow{Figures: total.Figures, PriceTrend: trend(r.Dates, "")}
	return r
}

// trend is the change of PricePer100 from the first of rows (by date) of
// symbol that carries one to the last; nil unless two do.
func trend(rows []locator.ReportRow, symbol string) *decimal.Decimal {
	var first, last *decimal.Decimal
	n := 0
	for _, row := range rows {
		if row.Symbol == symbol && row.PricePer100 != nil {
			if first == nil {
				first = row.PricePer100
			}
			last = row.PricePer100
			n++
		}
	}
	if n < 2 {
		return nil
	}
	d := last.Sub(*first)
	return &d
}

// add sums a cell into a total.
func (f *cell) add(c *cell) {
	f.Located += c.Located
	f.Shorted += c.Shorted
	f.Credited += c.Credited
	f.Spend = f.Spend.Add(c.Spend)
	f.Recovery = f.Recovery.Add(c.Recovery)
	f.ForgoneSpend = f.ForgoneSpend.Add(c.ForgoneSpend)
	f.ShortPnL = f.ShortPnL.Add(c.ShortPnL)
	f.cost = f.cost.Add(c.cost)
	for s, n := range c.Fees {
		f.Fees[s] += n
	}
}

// finish works out the figures derived from the sums.
func (f *cell) finish() {
	f.NetSpend = f.Spend.Sub(f.Recovery)
	f.NetPnL = f.ShortPnL.Sub(f.NetSpend)
	f.Utilisation, f.PricePer100 = nil, nil
	if f.Located > 0 {
		located := decimal.NewFromInt(f.Located)
		u := decimal.NewFromInt(f.Shorted).DivRound(located, 4)
		p := f.cost.Mul(decimal.NewFromInt(100)).DivRound(located, 4)
		f.Utilisation, f.PricePer100 = &u, &p
	}
	f.FeeStatus = ""
	for s, n := range f.Fees {
		switch {
		case n == 0:
		case s.Problem():
			f.FeeStatus = "problem"
		case s == locator.FeePending && f.FeeStatus != "problem":
			f.FeeStatus = "pending"
		case f.FeeStatus == "":
			f.FeeStatus = "matched"
		}
	}
}
