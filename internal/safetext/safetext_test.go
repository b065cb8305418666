package safetext_test

import (
	"testing"

	"github.com/locatorhq/locator/internal/safetext"
)

// Text from the database, the broker or a command line cannot drive the
// terminal: escape sequences, other controls and bidirectional overrides
// show as escapes; a table cell keeps its row (newline) and column (tab).
func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"HTBX":                        "HTBX",
		"wf-1\x1b[2J\x1b[31mowned":    `wf-1\x1b[2J\x1b[31mowned`,
		"host\u202e1.0\u202c":         `host\u202e1.0\u202c`,
		"line one\nline two\tcolumn":  "line one\nline two\tcolumn",
		"bell\a del\x7f c1\u009b end": `bell\x07 del\x7f c1\u009b end`,
		"prix 0,0150 € – café":        "prix 0,0150 € – café",
	} {
		if got := safetext.Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
	if got := safetext.Cell("a\nb\tc"); got != `a\x0ab\x09c` {
		t.Errorf("Cell = %q", got)
	}
}

// OWASP's rule for CSV injection: a cell that a spreadsheet would run is
// prefixed with a quote; numbers, negative ones included, stay numbers.
func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://x","y")`: `'=HYPERLINK("http://x","y")`,
		"+1+2":                       "'+1+2",
		"-1+cmd|' /C calc'!A0":       "'-1+cmd|' /C calc'!A0",
		"@SUM(A1)":                   "'@SUM(A1)",
		"\tx":                        "'\tx",
		"-12.50":                     "-12.50",
		"+3":                         "+3",
		"0.0150":                     "0.0150",
		"HTBX":                       "HTBX",
		"":                           "",
	} {
		if got := safetext.CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}
