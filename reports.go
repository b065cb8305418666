package locator

import (
	"time"

	"github.com/shopspring/decimal"
)

// The reports are made by package report from an account's records (its
// workflows, orders and synced ledger) and handed out by the account API
// (Account.Report, Account.Audit, Account.Plan).

// DateRange is the trade dates a report or an audit covers, From and To
// included, each as midnight UTC of a New York calendar date (the form of
// ledger.TradeDate).
type DateRange struct{ From, To time.Time }

// Contains reports whether the trade date d is in the range.
func (r DateRange) Contains(d time.Time) bool { return !d.Before(r.From) && !d.After(r.To) }

func (r DateRange) String() string {
	return r.From.Format(time.DateOnly) + ".." + r.To.Format(time.DateOnly)
}

// Figures are the numbers of one bucket of a report: a symbol on a day, a
// symbol over the range, a day over all symbols, or the whole range.
type Figures struct {
	// Located is the shares of the locates filled.
	Located int64
	// Shorted is the shares of locator's short sales filled (Sell/Open).
	Shorted int64
	// Credited is the shares credited back.
	Credited int64
	// Utilisation is Shorted ÷ Located, four decimals; nil when nothing
	// was located.
	Utilisation *decimal.Decimal
	// Spend is what the locates cost: each fill's ledger charge once it
	// has posted, its price × shares until then, and `Locate Fees` charges
	// nothing explains.
	Spend decimal.Decimal
	// Recovery is what credit-backs returned, counted the same way.
	Recovery decimal.Decimal
	// NetSpend is Spend − Recovery.
	NetSpend decimal.Decimal
	// ForgoneSpend is price × shares of the offers that expired or were
	// declined: what they would have cost.
	ForgoneSpend decimal.Decimal
	// PricePer100 is the average price of 100 located shares (the fills'
	// price × shares over their shares, × 100); nil when nothing was located.
	PricePer100 *decimal.Decimal
	// ShortPnL is the realized P&L of the short sales covered (first in,
	// first out, on the cover's date).
	ShortPnL decimal.Decimal
	// NetPnL is ShortPnL − NetSpend: the shorts' P&L net of their locates.
	NetPnL decimal.Decimal
	// Fees counts the reconciliation lines by status.
	Fees map[FeeStatus]int
	// FeeStatus sums Fees up: "matched" (all), "pending" (some not posted
	// yet, nothing wrong), "problem" (missing, wrong or unexplained), or
	// "" when there was no fee or credit.
	FeeStatus string
}

// ReportRow is one bucket of a report. Symbol is empty on a day's totals
// over all symbols; Date is zero on a symbol's totals over the range; both
// are empty on the grand total.
type ReportRow struct {
	Symbol string
	Date   time.Time
	Figures
	// PriceTrend is, on a symbol's totals and the grand total, the change
	// of PricePer100 from the first day with a fill to the last; nil with
	// fewer than two such days.
	PriceTrend *decimal.Decimal
}

// Report is what an account's locates cost and what they were used for,
// per symbol, per day and in total, over a range of trade dates.
type Report struct {
	Account string
	Range   DateRange
	// Now is the broker's time the report was made at.
	Now time.Time
	// Days are the buckets of each symbol on each day with activity, by
	// date, then symbol.
	Days []ReportRow
	// Symbols are each symbol's totals, by symbol.
	Symbols []ReportRow
	// Dates are each day's totals over all symbols, by date.
	Dates []ReportRow
	// Total is the whole range.
	Total ReportRow
}

// Sources of an audited short sale.
const (
	// SourceLocator: placed through locator (its orders table).
	SourceLocator = "locator"
	// SourceBroker: seen in the broker's order book, not placed by locator.
	SourceBroker = "broker"
)

// Kinds of cover.
const (
	// CoverLocate: located shares, filled before the short was sent.
	CoverLocate = "locate"
	// CoverEasyToBorrow: an easy-to-borrow check of the day, before it.
	CoverEasyToBorrow = "easy-to-borrow"
)

// AuditCover is one workflow that covered (part of) a short sale.
type AuditCover struct {
	Kind       string
	WorkflowID string
	QuoteReqID string
	// Shares is how many of the short's shares it covered (0 for an
	// easy-to-borrow check, which covers them all).
	Shares int64
	// At is when the locate filled or the check answered, broker's clock.
	At time.Time
}

// AuditRow is one short sale and what covered it when it was sent and
// when it executed.
type AuditRow struct {
	Date          time.Time // trade date the order was sent on
	SentAt        time.Time // broker's clock
	ClientOrderID string
	Source        string
	Symbol        string
	Quantity      int64
	Executed      int64
	OrderStatus   string
	Covers        []AuditCover
	// Covered is false when the covers found for the short at the time it
	// was sent were short of its quantity, or the located shares free when
	// it executed were short of the shares executed: the row is flagged.
	Covered bool
	// Flag says why an uncovered row is flagged; empty when covered.
	Flag string
}

// CoveredShares sums the shares the row's locates covered.
func (r AuditRow) CoveredShares() int64 {
	var n int64
	for _, c := range r.Covers {
		n += c.Shares
	}
	return n
}

// AuditTrail is the Reg SHO audit trail of a range: every short sale of
// the account, with what covered it.
type AuditTrail struct {
	Account string
	Range   DateRange
	Rows    []AuditRow
}

// Flagged counts the rows not covered when sent.
func (t *AuditTrail) Flagged() int {
	n := 0
	for _, r := range t.Rows {
		if !r.Covered {
			n++
		}
	}
	return n
}

// Suggestion is the plan for one symbol of a watchlist: how many shares
// to locate before the open.
type Suggestion struct {
	Symbol string
	// Days is the trading days read; DaysShorted how many had a short.
	Days, DaysShorted int
	// Shorted sums the shares shorted over the days; MaxDay is the most in
	// one day.
	Shorted, MaxDay int64
	// Suggested is the quantity to locate before the open: the most shorted
	// in one day of the window, rounded up to whole lots of 100 (0 when
	// none was shorted).
	Suggested int64
	// Offers counts the offers seen in the window; MinPrice and MaxPrice
	// bound their prices per share (nil without an offer).
	Offers             int
	MinPrice, MaxPrice *decimal.Decimal
}
