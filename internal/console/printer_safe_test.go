package console_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/console"
)

// What a table shows comes from the broker, the database or a command
// line, and none of it acts on the reader's terminal or spreadsheet: a
// lease's host with an escape sequence, a reason with a newline and a
// bidirectional override, a broker symbol written as a formula.
func TestPrinterShowsOutsideTextSafely(t *testing.T) {
	header := []string{"SYMBOL", "HOST", "REASON"}
	rows := [][]string{{`=HYPERLINK("http://evil","x")`, "vm\x1b]0;owned\x07", "first\nsecond \u202e05.21"}}
	var table, csv, notes bytes.Buffer
	console.Printer{W: &table, Format: console.Table}.Table(header, rows, nil)
	console.Printer{W: &csv, Notes: &notes, Format: console.CSV}.Table(header, rows, nil)
	console.Printer{W: &table, Format: console.Table}.Event(nil, "owner \x1b[2Jon vm")
	if out := table.String(); strings.ContainsAny(out, "\x1b\x07\u202e") || strings.Count(out, "\n") != 3 {
		t.Errorf("the table acts on the terminal or breaks its rows:\n%q", out)
	}
	if out := csv.String(); !strings.Contains(out, `'=HYPERLINK`) {
		t.Errorf("the CSV leaves the formula to run:\n%s", out)
	}
}
