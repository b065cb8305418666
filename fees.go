package locator

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
)

// The fee check's report and the credit-back plans are made by package
// ledger (ledger.Check, ledger.Unused) and handed out by the account API
// (Account.Fees, Account.CreditBack).

// FeeStatus is the outcome of reconciling one locate fee or credit.
type FeeStatus string

// Statuses of a reconciled line.
const (
	// FeeMatched: the ledger row is there, within a cent of the expected
	// amount (a credit's: at most it and a cent, see ledger's fits).
	FeeMatched FeeStatus = "matched"
	// FeePending: no ledger row yet, but the grace period has not passed
	// (the spec: a fee row may appear later than the fill).
	FeePending FeeStatus = "pending"
	// FeeMissing: no ledger row, and the grace period has passed.
	FeeMissing FeeStatus = "missing"
	// FeeWrongAmount: a ledger row that belongs to the workflow differs
	// from the expected amount by more than a cent (a credit's: exceeds it).
	FeeWrongAmount FeeStatus = "wrong amount"
	// FeeUnexplained: a `Locate Fees` ledger row with no locate or
	// credit-back in the store behind it.
	FeeUnexplained FeeStatus = "unexplained"
)

// Problem reports whether the status needs a person: missing, wrong amount
// or unexplained. Matched and pending do not.
func (s FeeStatus) Problem() bool {
	return s == FeeMissing || s == FeeWrongAmount || s == FeeUnexplained
}

// FeeLineKind says whether a line is a charge or a credit.
type FeeLineKind string

// Line kinds.
const (
	// LineFee is a locate fee: a `Locate Fees` withdraw.
	LineFee FeeLineKind = "fee"
	// LineCredit is a credit-back refund: a `Locate Fees` deposit.
	LineCredit FeeLineKind = "credit"
)

// FeeLine is one reconciled fee or credit: a workflow with its ledger row, a
// workflow still without one, or a ledger row without a workflow.
type FeeLine struct {
	Kind FeeLineKind
	// Date is the trade date (Eastern) of the fill or credit; for an
	// unexplained row, the ledger row's date.
	Date   time.Time
	Symbol string
	Shares int64
	// Expected is price × shares for a workflow; zero for an unexplained row.
	Expected decimal.Decimal
	// ExpectedKnown is false for a credit-back whose price the store does not
	// know; such a credit matches a deposit of any amount.
	ExpectedKnown bool
	// Charged is the ledger amount (positive, for fees and credits alike);
	// zero when no row was found.
	Charged decimal.Decimal
	Status  FeeStatus
	// WorkflowID and QuoteReqID identify the workflow; empty for an
	// unexplained row.
	WorkflowID string
	QuoteReqID string
	// At is when the workflow filled or was credited.
	At time.Time
	// Due is when a missing row stops being pending (At + grace).
	Due time.Time
	// LedgerDate and Note describe the ledger row, when there is one.
	LedgerDate time.Time
	Note       string
}

// Difference is Charged − Expected (zero unless the amount is wrong).
func (l FeeLine) Difference() decimal.Decimal {
	if l.Status != FeeWrongAmount {
		return decimal.Zero
	}
	return l.Charged.Sub(l.Expected)
}

// FeeDayStatus compares a day's ledger charges with the broker's own total.
type FeeDayStatus string

// Day statuses. Only today has a broker total (totalLocateCosts is a today
// counter); earlier days are DayNoTotal.
const (
	DayNoTotal FeeDayStatus = ""
	// DayAgrees: totalLocateCosts equals the day's ledger charges (gross, or
	// net of credits).
	DayAgrees FeeDayStatus = "agrees"
	// DayPending: totalLocateCosts equals the charges once the fees still
	// pending are counted; the ledger is behind.
	DayPending FeeDayStatus = "pending"
	// DayDiffers: totalLocateCosts matches neither.
	DayDiffers FeeDayStatus = "differs"
)

// FeeDay is one trade date's totals.
type FeeDay struct {
	Date time.Time
	// ExpectedFees sums price × shares of the locates filled that day.
	ExpectedFees decimal.Decimal
	// Charged sums the day's `Locate Fees` withdraws in the ledger.
	Charged decimal.Decimal
	// ExpectedCredits sums the known refunds of the day's credit-backs.
	ExpectedCredits decimal.Decimal
	// Credited sums the day's `Locate Fees` deposits.
	Credited decimal.Decimal
	// PendingFees sums the expected fees of the day still pending.
	PendingFees decimal.Decimal
	// BrokerTotal is the account's totalLocateCosts; set for today only.
	BrokerTotal *decimal.Decimal
	Status      FeeDayStatus
}

// FeeReport is the fee check: how each locate fee and credit of a window reconciled with the cash ledger (ledger.Check, Account.Fees).
type FeeReport struct {
	Account string
	// Since and Today bound the report (trade dates, inclusive).
	Since, Today time.Time
	Now          time.Time
	Grace        time.Duration
	// Lines are the fees and credits, by date, then symbol.
	Lines []FeeLine
	// Days are the per-day totals of the days with any line, oldest first.
	Days []FeeDay
}

// Counts returns how many lines have each status.
func (r *FeeReport) Counts() map[FeeStatus]int {
	out := map[FeeStatus]int{}
	for _, l := range r.Lines {
		out[l.Status]++
	}
	return out
}

// Problems counts what needs a person: missing, wrong and unexplained lines,
// and a day whose broker total differs from its ledger.
func (r *FeeReport) Problems() int {
	n := 0
	for _, l := range r.Lines {
		if l.Status.Problem() {
			n++
		}
	}
	for _, d := range r.Days {
		if d.Status == DayDiffers {
			n++
		}
	}
	return n
}

// String is a one-line summary, for logs.
func (r *FeeReport) String() string {
	c := r.Counts()
	return fmt.Sprintf("%s %s..%s: %d matched, %d pending, %d missing, %d wrong amount, %d unexplained",
		r.Account, r.Since.Format(time.DateOnly), r.Today.Format(time.DateOnly),
		c[FeeMatched], c[FeePending], c[FeeMissing], c[FeeWrongAmount], c[FeeUnexplained])
}

// FeeWindow is the trade dates a fee check covers, through the broker's
// today: from Since, or, when Since is zero, the last Days trade dates.
type FeeWindow struct {
	Since time.Time
	Days  int
}

// SyncResult says what a Sync did.
type SyncResult struct {
	// Fetched counts the rows the broker returned for the window.
	Fetched int
	// Inserted counts the rows that were not stored yet.
	Inserted int
}

// Credit is one credit-back the unused rule plans: Shares of the
// (Symbol, Type) inventory row.
type Credit struct {
	Symbol string                `json:"symbol"`
	Type   brokercode.LocateType `json:"type"`
	Shares int64                 `json:"shares"`
}

// Skip is an inventory row the unused rule leaves alone on purpose, and
// why.
type Skip struct {
	Symbol string                `json:"symbol"`
	Type   brokercode.LocateType `json:"type"`
	Reason string                `json:"reason"`
}
