package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/safetext"
)

// Record is one row of a report as `locator report` prints it (-o json:
// one per line; -o csv: CSVHeader's columns). Money is in dollars as
// decimal strings, two decimals; prices per 100 shares and utilisation
// four. Type is "day" (a symbol on a date), "symbol" (a symbol over the
// range), "date" (a date over all symbols) or "total".
type Record struct {
	Type         string         `json:"type"`
	Account      string         `json:"account"`
	Date         string         `json:"date,omitempty"`
	Symbol       string         `json:"symbol,omitempty"`
	Located      int64          `json:"located"`
	Shorted      int64          `json:"shorted"`
	Credited     int64          `json:"credited"`
	Utilisation  *string        `json:"utilisation"`
	Spend        string         `json:"spend"`
	Recovery     string         `json:"recovery"`
	NetSpend     string         `json:"netSpend"`
	ForgoneSpend string         `json:"forgoneSpend"`
	PricePer100  *string        `json:"pricePer100"`
	PriceTrend   *string        `json:"priceTrend,omitempty"`
	ShortPnL     string         `json:"shortPnl"`
	NetPnL       string         `json:"netPnl"`
	FeeStatus    string         `json:"feeStatus"`
	Fees         map[string]int `json:"fees"`
}

// CSVHeader names the CSV columns of a Record, in order.
var CSVHeader = []string{"type", "date", "symbol", "located", "shorted", "credited", "utilisation", "spend", "recovery",
	"netSpend", "forgoneSpend", "pricePer100", "priceTrend", "shortPnl", "netPnl", "feeStatus"}

// Records lists report r's rows in print order: the day rows, then the
// symbols', the dates' and the total.
func Records(r *locator.Report) []Record {
	var out []Record
	add := func(typ string, row locator.ReportRow) {
		rec := Record{Type: typ, Account: r.Account, Symbol: row.Symbol, Located: row.Located, Shorted: row.Shorted,
			Credited: row.Credited, Utilisation: fixed(row.Utilisation, 4), Spend: row.Spend.StringFixed(2),
			Recovery: row.Recovery.StringFixed(2), NetSpend: row.NetSpend.StringFixed(2), ForgoneSpend: row.ForgoneSpend.StringFixed(2),
			PricePer100: fixed(row.PricePer100, 4), PriceTrend: fixed(row.PriceTrend, 4), ShortPnL: row.ShortPnL.StringFixed(2),
			NetPnL: row.NetPnL.StringFixed(2), FeeStatus: row.FeeStatus, Fees: map[string]int{}}
		if !row.Date.IsZero() {
			rec.Date = row.Date.Format(time.DateOnly)
		}
		for s, n := range row.Fees {
			if n > 0 {
				rec.Fees[strings.ReplaceAll(string(s), " ", "_")] = n
			}
		}
		out = append(out, rec)
	}
	for _, row := range r.Days {
		add("day", row)
	}
	for _, row := range r.Symbols {
		add("symbol", row)
	}
	for _, row := range r.Dates {
		add("date", row)
	}
	add("total", r.Total)
	return out
}

// CSV is the record under CSVHeader.
func (rec Record) CSV() []string {
	return []string{rec.Type, rec.Date, rec.Symbol, i64(rec.Located), i64(rec.Shorted), i64(rec.Credited), str(rec.Utilisation),
		rec.Spend, rec.Recovery, rec.NetSpend, rec.ForgoneSpend, str(rec.PricePer100), str(rec.PriceTrend), rec.ShortPnL, rec.NetPnL, rec.FeeStatus}
}

func fixed(d *decimal.Decimal, places int32) *string {
	if d == nil {
		return nil
	}
	s := d.StringFixed(places)
	return &s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// AuditRecord is one row of the audit trail as `locator audit` exports it
// (-o json: one per line; -o csv: AuditCSVHeader's columns, which are
// stable). Times are RFC 3339 in UTC, on the broker's clock; date is the
// New York trade date. Several covers are joined with "|" in CSV.
type AuditRecord struct {
	Date          string        `json:"date"`
	SentAt        string        `json:"sentAt"`
	ClientOrderID string        `json:"clientOrderId"`
	Source        string        `json:"source"`
	Symbol        string        `json:"symbol"`
	Quantity      int64         `json:"quantity"`
	Executed      int64         `json:"executed"`
	OrderStatus   string        `json:"orderStatus"`
	Covered       bool          `json:"covered"`
	CoverKind     string        `json:"coverKind"`
	CoveredShares int64         `json:"coveredShares"`
	Covers        []CoverRecord `json:"covers"`
	Flag          string        `json:"flag"`
}

// CoverRecord is one cover of an AuditRecord.
type CoverRecord struct {
	Kind       string `json:"kind"`
	WorkflowID string `json:"workflowId"`
	QuoteReqID string `json:"quoteReqID,omitempty"`
	Shares     int64  `json:"shares"`
	At         string `json:"at"`
}

// AuditCSVHeader names the audit's CSV columns, in order.
var AuditCSVHeader = []string{"date", "sentAt", "clientOrderId", "source", "symbol", "quantity", "executed", "orderStatus",
	"covered", "coverKind", "coveredShares", "coverWorkflowIds", "coverQuoteReqIds", "coverTimes", "flag"}

// AuditRecords lists trail t's rows, in the order the orders were sent.
func AuditRecords(t *locator.AuditTrail) []AuditRecord {
	out := make([]AuditRecord, 0, len(t.Rows))
	for _, r := range t.Rows {
		rec := AuditRecord{Date: r.Date.Format(time.DateOnly), SentAt: r.SentAt.UTC().Format(time.RFC3339Nano), ClientOrderID: r.ClientOrderID,
			Source: r.Source, Symbol: r.Symbol, Quantity: r.Quantity, Executed: r.Executed, OrderStatus: r.OrderStatus,
			Covered: r.Covered, CoveredShares: r.CoveredShares(), Covers: []CoverRecord{}, Flag: r.Flag}
		for _, c := range r.Covers {
			rec.CoverKind = c.Kind
			rec.Covers = append(rec.Covers, CoverRecord{Kind: c.Kind, WorkflowID: c.WorkflowID, QuoteReqID: c.QuoteReqID,
				Shares: c.Shares, At: c.At.UTC().Format(time.RFC3339Nano)})
		}
		out = append(out, rec)
	}
	return out
}

// CSV is the record under AuditCSVHeader.
func (rec AuditRecord) CSV() []string {
	var ids, quotes, times []string
	for _, c := range rec.Covers {
		ids, quotes, times = append(ids, c.WorkflowID), append(quotes, c.QuoteReqID), append(times, c.At)
	}
	return []string{rec.Date, rec.SentAt, rec.ClientOrderID, rec.Source, rec.Symbol, i64(rec.Quantity), i64(rec.Executed),
		rec.OrderStatus, strconv.FormatBool(rec.Covered), rec.CoverKind, i64(rec.CoveredShares), strings.Join(ids, "|"),
		strings.Join(quotes, "|"), strings.Join(times, "|"), rec.Flag}
}

// WriteTrail writes the trail into dir as audit-FROM_TO.csv (under
// AuditCSVHeader) and audit-FROM_TO.jsonl (one AuditRecord a line), FROM
// and TO being its range's dates, and returns the two paths.
func WriteTrail(t *locator.AuditTrail, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, "audit-"+t.Range.From.Format(time.DateOnly)+"_"+t.Range.To.Format(time.DateOnly))
	var c, j bytes.Buffer
	cw := csv.NewWriter(&c)
	cw.Write(AuditCSVHeader)
	enc := json.NewEncoder(&j)
	for _, rec := range AuditRecords(t) {
		cw.Write(safetext.CSVRecord(rec.CSV()))
		if err := enc.Encode(rec); err != nil {
			return nil, err
		}
	}
	cw.Flush()
	files := []string{base + ".csv", base + ".jsonl"}
	for i, b := range [][]byte{c.Bytes(), j.Bytes()} {
		if err := os.WriteFile(files[i], b, 0o644); err != nil {
			return nil, err
		}
	}
	return files, nil
}
