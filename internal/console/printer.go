// Package console is what a person sees at a terminal and what a script
// reads from locator's commands: the output formats (-o table|json|csv),
// the outcome record a workflow command ends with, progress lines with a
// spinner and a countdown redrawn in place, a batch's live board, and the
// prompts that answer an offer or confirm an order. Commands are flags ->
// one call on the account API -> a print through this package.
package console

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/safetext"
	"github.com/locatorhq/locator/workflow"
)

// Format is how a command prints its records (-o): aligned text for
// people, JSON objects one per line, or CSV under a header row.
type Format string

const (
	Table Format = "table"
	JSON  Format = "json"
	CSV   Format = "csv"
)

// Formats are every format a Printer prints.
var Formats = []Format{Table, JSON, CSV}

// formatValue is the -o flag: it refuses a format it does not know, or
// one its command cannot print (can), while the flags are parsed, so the
// mistake is a usage error with a hint before anything runs.
type formatValue struct {
	f   *Format
	can []Format
}

func (v formatValue) String() string { return string(*v.f) }
func (v formatValue) Type() string   { return "format" }
func (v formatValue) Set(s string) error {
	f := Format(strings.ToLower(s))
	switch {
	case !slices.Contains(Formats, f):
		return fmt.Errorf("want %s", listFormats(v.can))
	case !slices.Contains(v.can, f):
		return fmt.Errorf("this command prints %s, not %s", listFormats(v.can), f)
	}
	return setFormat(v.f, f)
}

// listFormats is "table, json or csv".
func listFormats(fs []Format) string {
	s := string(fs[0])
	for i, f := range fs[1:] {
		if i == len(fs)-2 {
			s += " or "
		} else {
			s += ", "
		}
		s += string(f)
	}
	return s
}

// Limit says which formats the command whose flags are fs prints, when it
// has -o: another asked for is refused while the flags are parsed (exit 2,
// nothing sent), and its help lists only these. The aliases (--json, fees'
// --csv) name formats their commands print.
func Limit(fs *pflag.FlagSet, can ...Format) {
	fl := fs.Lookup("output")
	if fl == nil {
		return
	}
	fl.Value = formatValue{f: fl.Value.(formatValue).f, can: can}
	fl.Usage = "output format: " + listFormats(can)
}

// setFormat sets *f to to, refusing two different machine formats asked
// for at once (-o csv --json): which one a script meant is a guess.
func setFormat(f *Format, to Format) error {
	if *f != Table && *f != to {
		return fmt.Errorf("%s was already asked for: choose one format", *f)
	}
	*f = to
	return nil
}

// FormatAlias is a boolean flag standing for one -o value (--json, and
// fees' older --csv), so scripts written before -o keep working.
type FormatAlias struct {
	F  *Format
	To Format
}

func (a FormatAlias) String() string { return strconv.FormatBool(*a.F == a.To) }
func (a FormatAlias) Type() string   { return "bool" }
func (a FormatAlias) Set(s string) error {
	on, err := strconv.ParseBool(s)
	switch {
	case err != nil:
		return err
	case on:
		return setFormat(a.F, a.To)
	case *a.F == a.To:
		*a.F = Table
	}
	return nil
}

// RegisterFormat declares -o/--output and --json (docs/design.md: --json makes
// every command print JSON lines) on fs; Limit narrows -o to what the
// command prints.
func RegisterFormat(fs *pflag.FlagSet, f *Format) {
	*f = Table
	fs.VarP(formatValue{f, Formats}, "output", "o", "output format: "+listFormats(Formats))
	fs.VarPF(FormatAlias{f, JSON}, "json", "", "print machine-readable JSON, one object per line (same as -o json)").NoOptDefVal = "true"
}

// Printer is the one place that knows the output formats: records go to W
// as a table, JSON lines or CSV; in CSV, the sentences around the records
// go to Notes (stderr) so that stdout stays one CSV document.
type Printer struct {
	W, Notes io.Writer
	Format   Format
}

// JSON reports whether the output is for machines reading JSON lines.
func (p Printer) JSON() bool { return p.Format == JSON }

// Event prints one line about something that happened: the JSON object v,
// or the text for people.
func (p Printer) Event(v any, text string) {
	switch p.Format {
	case JSON:
		json.NewEncoder(p.W).Encode(v)
	case CSV:
		if p.Notes != nil {
			fmt.Fprintln(p.Notes, safetext.Terminal(text))
		}
	default:
		fmt.Fprintln(p.W, safetext.Terminal(text))
	}
}

// Table prints records: rows aligned under a header, the rows as CSV under
// the header, or with JSON each object (a table without objects prints
// nothing in JSON: its command prints its own).
func (p Printer) Table(header []string, rows [][]string, objects []any) {
	switch p.Format {
	case JSON:
		enc := json.NewEncoder(p.W)
		for _, o := range objects {
			enc.Encode(o)
		}
	case CSV:
		w := csv.NewWriter(p.W)
		w.Write(header)
		for _, r := range rows {
			w.Write(safetext.CSVRecord(r))
		}
		w.Flush()
	default:
		tw := tabwriter.NewWriter(p.W, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = safetext.Cell(c)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
}

// Records prints records that people read as sentences (a workflow's
// outcome): the texts, a JSON object each, or CSV rows under the header.
func (p Printer) Records(header []string, rows [][]string, objects []any, texts []string) {
	if p.Format == Table {
		for _, t := range texts {
			fmt.Fprintln(p.W, safetext.Terminal(t))
		}
		return
	}
	p.Table(header, rows, objects)
}

// Money shows an amount of dollars with two decimals.
func Money(d decimal.Decimal) string { return d.StringFixed(2) }

// Price4 shows a locate price with the spec's four decimals.
func Price4(d decimal.Decimal) string { return d.StringFixed(4) }

// LocatePrice is Price4 for a table cell, blank while no price is known
// (a quote still Quoting or Pending carries 0).
func LocatePrice(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return Price4(d)
}

// PriceShown shows a price as the broker gave it: at least two decimals,
// more when it has them (a limit of 12.5 shows 12.50, one of 0.0150 its
// four).
func PriceShown(d decimal.Decimal) string { return workflow.PriceShown(d) }

// Int shows a count.
func Int(n int64) string { return strconv.FormatInt(n, 10) }
