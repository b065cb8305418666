package console

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/report"
)

// Report prints a spend report (report.Run): its records a line each in
// JSON or CSV (report.CSVHeader's columns), or one table per kind of row
// for people.
func Report(out Printer, r *locator.Report) {
	recs := report.Records(r)
	if out.Format == Table {
		reportTable(out, r, recs)
		return
	}
	var rows [][]string
	var objs []any
	for _, rec := range recs {
		objs = append(objs, rec)
		rows = append(rows, rec.CSV())
	}
	out.Table(report.CSVHeader, rows, objs)
}

// reportTable shows the report for people: one table per kind of row.
func reportTable(out Printer, r *locator.Report, recs []report.Record) {
	w := out.W
	fmt.Fprintf(w, "Locates of %s, %s (New York trade dates, the broker's calendar)\n", r.Account, r.Range)
	header := []string{"LOCATED", "SHORTED", "CREDITED", "UTIL", "SPEND", "RECOVERY", "NET SPEND", "FORGONE", "PER 100", "SHORT P&L", "NET P&L", "FEES"}
	for _, part := range []struct{ typ, title, key string }{
		{"symbol", "By symbol", "SYMBOL"}, {"date", "By day", "DATE"}, {"day", "By symbol and day", "DATE SYMBOL"}, {"total", "Total", ""},
	} {
		var rows [][]string
		for _, rec := range recs {
			if rec.Type != part.typ {
				continue
			}
			row := []string{strconv.FormatInt(rec.Located, 10), strconv.FormatInt(rec.Shorted, 10), strconv.FormatInt(rec.Credited, 10),
				dash(rec.Utilisation), rec.Spend, rec.Recovery, rec.NetSpend, rec.ForgoneSpend, dash(rec.PricePer100),
				rec.ShortPnL, rec.NetPnL, rec.FeeStatus}
			switch part.typ {
			case "symbol":
				row = append([]string{rec.Symbol}, row...)
				if rec.PriceTrend != nil {
					row[9] += " (" + signed(*rec.PriceTrend) + ")"
				}
			case "date":
				row = append([]string{rec.Date}, row...)
			case "day":
				row = append([]string{rec.Date + " " + rec.Symbol}, row...)
			}
			rows = append(rows, row)
		}
		h := header
		if part.key != "" {
			h = append([]string{part.key}, header...)
		}
		fmt.Fprintf(w, "\n%s\n", part.title)
		out.Table(h, rows, nil)
	}
}

func dash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// signed shows a change with its sign.
func signed(s string) string {
	if !strings.HasPrefix(s, "-") {
		return "+" + s
	}
	return s
}

// planJSON is a suggestion as -o json prints it; prices are per share.
type planJSON struct {
	Symbol      string `json:"symbol"`
	Suggested   int64  `json:"suggested"`
	MaxDay      int64  `json:"maxDay"`
	Shorted     int64  `json:"shorted"`
	DaysShorted int    `json:"daysShorted"`
	Days        int    `json:"days"`
	Offers      int    `json:"offers"`
	MinPrice    string `json:"minPrice"`
	MaxPrice    string `json:"maxPrice"`
}

// priceOrDash shows a locate price with four decimals, "-" when none.
func priceOrDash(d *decimal.Decimal) string {
	if d == nil {
		return "-"
	}
	return Price4(*d)
}

// Plan prints locate suggestions (report.Plan), a row each.
func Plan(out Printer, plan []locator.Suggestion) {
	var rows [][]string
	var objs []any
	for _, s := range plan {
		rows = append(rows, []string{s.Symbol, strconv.FormatInt(s.Suggested, 10), strconv.FormatInt(s.MaxDay, 10),
			strconv.FormatInt(s.Shorted, 10), fmt.Sprintf("%d/%d", s.DaysShorted, s.Days), strconv.Itoa(s.Offers),
			priceOrDash(s.MinPrice), priceOrDash(s.MaxPrice)})
		objs = append(objs, planJSON{Symbol: s.Symbol, Suggested: s.Suggested, MaxDay: s.MaxDay, Shorted: s.Shorted,
			DaysShorted: s.DaysShorted, Days: s.Days, Offers: s.Offers, MinPrice: priceOrDash(s.MinPrice), MaxPrice: priceOrDash(s.MaxPrice)})
	}
	out.Table([]string{"SYMBOL", "LOCATE", "MOST IN A DAY", "SHORTED", "DAYS SHORTED", "OFFERS", "MIN PRICE", "MAX PRICE"}, rows, objs)
}

// Audit prints an audit trail (report.AuditBook): a record a short sale,
// after a line naming the account and the range for people.
func Audit(out Printer, trail *locator.AuditTrail) {
	var rows [][]string
	var objs []any
	for _, rec := range report.AuditRecords(trail) {
		rows, objs = append(rows, rec.CSV()), append(objs, rec)
	}
	if out.Format == Table {
		fmt.Fprintf(out.W, "Short sales of %s, %s (times UTC on the broker's clock, New York trade dates)\n\n", trail.Account, trail.Range)
	}
	out.Table(report.AuditCSVHeader, rows, objs)
}
