// Package safetext makes text that comes from outside the program (the
// database, the broker, a command line) safe to show: on a terminal,
// where a control sequence or a bidirectional override would rewrite what
// the person sees (move the cursor, recolour, reverse a number), and in a
// spreadsheet, where a cell that begins like a formula would be run.
package safetext

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Terminal is s with every control character but newline and tab, and
// every bidirectional control, written as a visible escape (\x1b,
// \u202e): nothing in it acts on the terminal.
func Terminal(s string) string { return escape(s, "\n\t") }

// Cell is Terminal for one cell of a table: newlines and tabs are escaped
// too, so a value cannot break the table's rows or columns.
func Cell(s string) string { return escape(s, "") }

func escape(s, keep string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unsafe(r) && !strings.ContainsRune(keep, r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unsafe(r) || strings.ContainsRune(keep, r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// unsafe reports whether r acts on a terminal instead of showing: a C0 or
// C1 control, DEL, or a bidirectional control (embeddings, overrides,
// isolates and marks, which reorder what follows them).
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// number is a plain decimal number, which a spreadsheet takes as a value,
// never as a formula, whatever its sign.
var number = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)

// CSVCell is s as a CSV cell a spreadsheet will not run (OWASP's rule for
// CSV injection): a cell that begins with =, +, -, @, a tab or a carriage
// return is prefixed with a single quote, unless it is a plain number.
func CSVCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) || number.MatchString(s) {
		return s
	}
	return "'" + s
}

// CSVRecord is record with each cell made safe by CSVCell.
func CSVRecord(record []string) []string {
	out := make([]string, len(record))
	for i, c := range record {
		out[i] = CSVCell(c)
	}
	return out
}
