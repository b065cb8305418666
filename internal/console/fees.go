package console

import (
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/market"
)

// FeeReport prints a fee reconciliation (ledger.Check): a table for
// people, one JSON object a line (the summary last), or one CSV table of
// fees, credits and day totals.
func FeeReport(out Printer, r *locator.FeeReport, synced locator.SyncResult, grace time.Duration) {
	switch out.Format {
	case JSON:
		feeJSON(out, r, synced, grace)
	case CSV:
		feeCSV(out, r)
	default:
		feeTable(out, r, synced, grace)
	}
}

// feeHours shows a duration in whole hours when it is one ("96h").
func feeHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// sizePrice shows a share price with at least two decimals.
func sizePrice(d decimal.Decimal) string {
	if d.Exponent() >= -2 {
		return d.StringFixed(2)
	}
	return d.String()
}

// feeAmount shows a money value, or "-" when there is none.
func feeAmount(d decimal.Decimal, ok bool) string {
	if !ok {
		return "-"
	}
	return Money(d)
}

// feeLineStatus is a line's status as a person reads it.
func feeLineStatus(l locator.FeeLine) string {
	switch l.Status {
	case locator.FeeWrongAmount:
		d := Money(l.Difference())
		if l.Difference().IsPositive() {
			d = "+" + d
		}
		return "wrong amount (" + d + ")"
	case locator.FeePending:
		return "pending until " + market.DayMinute(l.Due)
	case locator.FeeMissing:
		return "missing since " + market.DayMinute(l.Due)
	}
	return string(l.Status)
}

func feeTable(out Printer, r *locator.FeeReport, synced locator.SyncResult, grace time.Duration) {
	w := out.W
	fmt.Fprintf(w, "Locate fees of %s, %s to %s (ledger: %d rows read, %d new; grace %s)\n\n", r.Account,
		r.Since.Format(time.DateOnly), r.Today.Format(time.DateOnly), synced.Fetched, synced.Inserted, feeHours(grace))
	if len(r.Lines) == 0 {
		fmt.Fprintln(w, "No filled locates, credit-backs or locate fees in this period.")
	} else {
		var rows [][]string
		for _, l := range r.Lines {
			shares, symbol, note := "-", l.Symbol, ""
			if l.WorkflowID != "" {
				shares = strconv.FormatInt(l.Shares, 10)
			}
			if symbol == "" {
				symbol = "?"
			}
			if l.Status == locator.FeeUnexplained || l.Status == locator.FeeWrongAmount {
				note = l.Note
			}
			rows = append(rows, []string{l.Date.Format(time.DateOnly), string(l.Kind), symbol, shares,
				feeAmount(l.Expected, l.WorkflowID != "" && l.ExpectedKnown), feeAmount(l.Charged, !l.LedgerDate.IsZero()), feeLineStatus(l), note})
		}
		out.Table([]string{"DATE", "TYPE", "SYMBOL", "SHARES", "EXPECTED", "CHARGED", "STATUS", "LEDGER NOTE"}, rows, nil)
	}
	if len(r.Days) > 0 {
		fmt.Fprintln(w)
		var rows [][]string
		for _, d := range r.Days {
			broker, check := "-", string(d.Status)
			if d.BrokerTotal != nil {
				broker = Money(*d.BrokerTotal)
			}
			rows = append(rows, []string{d.Date.Format(time.DateOnly), Money(d.ExpectedFees), Money(d.Charged),
				Money(d.ExpectedCredits), Money(d.Credited), broker, check})
		}
		out.Table([]string{"DAY", "FEES EXPECTED", "CHARGED", "CREDITS EXPECTED", "CREDITED", "totalLocateCosts", "CHECK"}, rows, nil)
	}
	n := r.Counts()
	fmt.Fprintf(w, "\n%d matched, %d pending, %d missing, %d wrong amount, %d unexplained",
		n[locator.FeeMatched], n[locator.FeePending], n[locator.FeeMissing], n[locator.FeeWrongAmount], n[locator.FeeUnexplained])
	if p := r.Problems(); p > 0 {
		fmt.Fprintf(w, ": %d to look into", p)
	}
	fmt.Fprintln(w)
}

// feeLineJSON and feeDayJSON are the --json objects, one per line; the last
// line is the summary.
type feeLineJSON struct {
	Type          string `json:"type"` // fee or credit
	Date          string `json:"date"`
	Symbol        string `json:"symbol"`
	Shares        int64  `json:"shares"`
	Expected      string `json:"expected"`
	ExpectedKnown bool   `json:"expectedKnown"`
	Charged       string `json:"charged"`
	Status        string `json:"status"`
	LedgerDate    string `json:"ledgerDate,omitempty"`
	Note          string `json:"note,omitempty"`
	WorkflowID    string `json:"workflowId,omitempty"`
	QuoteReqID    string `json:"quoteReqID,omitempty"`
	At            string `json:"at,omitempty"`
	Due           string `json:"due,omitempty"`
}

type feeDayJSON struct {
	Type            string `json:"type"` // day
	Date            string `json:"date"`
	ExpectedFees    string `json:"expectedFees"`
	Charged         string `json:"charged"`
	ExpectedCredits string `json:"expectedCredits"`
	Credited        string `json:"credited"`
	PendingFees     string `json:"pendingFees"`
	BrokerTotal     string `json:"totalLocateCosts,omitempty"`
	Check           string `json:"check,omitempty"`
}

type feeSummaryJSON struct {
	Type     string         `json:"type"` // summary
	Account  string         `json:"account"`
	Since    string         `json:"since"`
	Today    string         `json:"today"`
	Grace    string         `json:"grace"`
	Fetched  int            `json:"fetched"`
	Inserted int            `json:"inserted"`
	Counts   map[string]int `json:"counts"`
	Problems int            `json:"problems"`
}

func feeJSON(out Printer, r *locator.FeeReport, synced locator.SyncResult, grace time.Duration) {
	for _, l := range r.Lines {
		o := feeLineJSON{Type: string(l.Kind), Date: l.Date.Format(time.DateOnly), Symbol: l.Symbol, Shares: l.Shares,
			Expected: Money(l.Expected), ExpectedKnown: l.ExpectedKnown, Charged: Money(l.Charged), Status: string(l.Status),
			Note: l.Note, WorkflowID: l.WorkflowID, QuoteReqID: l.QuoteReqID}
		if !l.LedgerDate.IsZero() {
			o.LedgerDate = l.LedgerDate.Format(time.DateOnly)
		}
		if l.WorkflowID != "" {
			o.At, o.Due = l.At.UTC().Format(time.RFC3339), l.Due.UTC().Format(time.RFC3339)
		}
		out.Event(o, "")
	}
	for _, d := range r.Days {
		o := feeDayJSON{Type: "day", Date: d.Date.Format(time.DateOnly), ExpectedFees: Money(d.ExpectedFees), Charged: Money(d.Charged),
			ExpectedCredits: Money(d.ExpectedCredits), Credited: Money(d.Credited), PendingFees: Money(d.PendingFees), Check: string(d.Status)}
		if d.BrokerTotal != nil {
			o.BrokerTotal = Money(*d.BrokerTotal)
		}
		out.Event(o, "")
	}
	counts := map[string]int{}
	for k, v := range r.Counts() {
		counts[string(k)] = v
	}
	out.Event(feeSummaryJSON{Type: "summary", Account: r.Account, Since: r.Since.Format(time.DateOnly), Today: r.Today.Format(time.DateOnly),
		Grace: feeHours(grace), Fetched: synced.Fetched, Inserted: synced.Inserted, Counts: counts, Problems: r.Problems()}, "")
}

// feeCSV prints fees, credits and day totals as one CSV table, a row
// each, the kind in the type column.
func feeCSV(out Printer, r *locator.FeeReport) {
	var rows [][]string
	for _, l := range r.Lines {
		shares, expected, ledgerDate := "", "", ""
		if l.WorkflowID != "" {
			shares = strconv.FormatInt(l.Shares, 10)
			if l.ExpectedKnown {
				expected = Money(l.Expected)
			}
		}
		if !l.LedgerDate.IsZero() {
			ledgerDate = l.LedgerDate.Format(time.DateOnly)
		}
		rows = append(rows, []string{l.Date.Format(time.DateOnly), string(l.Kind), l.Symbol, shares, expected, Money(l.Charged), "", "",
			string(l.Status), ledgerDate, l.WorkflowID, l.QuoteReqID, l.Note})
	}
	for _, d := range r.Days {
		broker := ""
		if d.BrokerTotal != nil {
			broker = Money(*d.BrokerTotal)
		}
		rows = append(rows, []string{d.Date.Format(time.DateOnly), "day", "", "", Money(d.ExpectedFees), Money(d.Charged), Money(d.Credited), broker,
			string(d.Status), "", "", "", ""})
	}
	out.Table([]string{"date", "type", "symbol", "shares", "expected", "charged", "credited", "total_locate_costs", "status", "ledger_date", "workflow_id", "quote_req_id", "note"}, rows, nil)
}
