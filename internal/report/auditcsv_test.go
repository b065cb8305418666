package report_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/market"
)

// `locator audit`'s CSV keeps the columns docs/trading.md documents
// as stable, by name and in order (camelCase, as its JSON records), and
// its times stay RFC 3339 in UTC on the broker's clock, as documented,
// rather than the tables' New York times: the trail is a record kept
// beside the broker's own, compared with it to the millisecond, not a
// screen. A time with no sub-second part is written without one.
func TestAuditCSVAsDocumented(t *testing.T) {
	page, err := os.ReadFile("../../docs/trading.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	start := strings.Index(text, "**`locator audit`**")
	end := strings.Index(text[start:], "<!-- sample: file docs/report/audit-last-day.csv -->")
	if start < 0 || end < 0 {
		t.Fatal("docs/trading.md: the audit's section or its sample not found")
	}
	var documented []string
	for _, row := range regexp.MustCompile("(?m)^\\| (`[^|]+`) \\|").FindAllStringSubmatch(text[start:start+end], -1) {
		for _, name := range regexp.MustCompile("`([a-zA-Z]+)`").FindAllStringSubmatch(row[1], -1) {
			documented = append(documented, name[1])
		}
	}
	if !slices.Equal(documented, report.AuditCSVHeader) {
		t.Errorf("audit CSV columns %v, docs/trading.md documents %v", report.AuditCSVHeader, documented)
	}
	sent := time.Date(2026, 10, 28, 10, 0, 5, 526_000_000, market.NewYork)
	trail := &locator.AuditTrail{Rows: []locator.AuditRow{{Date: time.Date(2026, 10, 28, 0, 0, 0, 0, market.NewYork), SentAt: sent,
		ClientOrderID: "c1", Source: "locator", Symbol: "HTBX", Quantity: 100, Covered: true}}}
	rec := report.AuditRecords(trail)[0].CSV()
	if rec[0] != "2026-10-28" || rec[1] != "2026-10-28T14:00:05.526Z" {
		t.Errorf("date and sentAt %q %q, want the New York trade date and RFC 3339 UTC", rec[0], rec[1])
	}
	if at, err := time.Parse(time.RFC3339Nano, rec[1]); err != nil || !at.Equal(sent) {
		t.Errorf("sentAt %q reads back as %v %v, want %v", rec[1], at, err, sent)
	}
}
