package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/workflow"
)

// outcome is the JSON a workflow command ends with (docs/design.md contract).
type outcome struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	Account       string `json:"account"`
	Symbol        string `json:"symbol"`
	State         string `json:"state"`
	Requested     int64  `json:"requested"`
	Shares        int64  `json:"shares"`
	PricePerShare string `json:"pricePerShare"`
	Total         string `json:"total"`
	QuoteReqID    string `json:"quoteReqID"`
	AcceptedID    string `json:"acceptedId,omitempty"`
	LocateType    string `json:"locateType"`
	Reason        string `json:"reason,omitempty"`
	CreatedAt     string `json:"createdAt"`
	UpdatedAt     string `json:"updatedAt"`
}

// outcomeHeader and row are an outcome as a CSV record.
var outcomeHeader = []string{"ID", "SYMBOL", "STATE", "KIND", "ACCOUNT", "REQUESTED", "SHARES", "PRICE PER SHARE", "TOTAL", "QUOTE REQ ID", "LOCATE TYPE", "REASON"}

func (o outcome) row() []string {
	return []string{o.ID, o.Symbol, o.State, o.Kind, o.Account, i64(o.Requested), i64(o.Shares), o.PricePerShare, o.Total, o.QuoteReqID, o.LocateType, o.Reason}
}

func outcomeOf(w *workflow.Workflow) outcome {
	o := outcome{
		ID: w.ID, Kind: string(w.Kind), Account: w.Account, Symbol: w.Symbol, State: string(w.State),
		Requested: w.Requested, Shares: w.Quantity, QuoteReqID: w.QuoteReqID, AcceptedID: w.AcceptedID,
		LocateType: w.LocateType, Reason: w.Reason,
		CreatedAt: w.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: w.UpdatedAt.UTC().Format(time.RFC3339),
	}
	if !w.Price.IsZero() {
		o.PricePerShare = w.Price.String()
		o.Total = w.Price.Mul(decimal.NewFromInt(w.Quantity)).StringFixed(2)
	}
	return o
}

// exitFor is a workflow's end as the exit-code contract says (nil for 0),
// in the words of its outcome (package account holds both).
func exitFor(w *workflow.Workflow) error {
	o := account.OutcomeOf(w)
	if o.Exit == account.ExitOK {
		return nil
	}
	return &exitError{code: o.Exit, msg: o.Words}
}

// exitError ends the command with a specific exit code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// format is how a command prints its records (-o): aligned text for
// people, JSON objects one per line, or CSV under a header row.
type format string

const (
	formatTable format = "table"
	formatJSON  format = "json"
	formatCSV   format = "csv"
)

// formatValue is the -o flag: it refuses a format it does not know while
// the flags are parsed, so the mistake is a usage error with a hint.
type formatValue struct{ f *format }

func (v formatValue) String() string { return string(*v.f) }
func (v formatValue) Type() string   { return "format" }
func (v formatValue) Set(s string) error {
	switch f := format(strings.ToLower(s)); f {
	case formatTable, formatJSON, formatCSV:
		return setFormat(v.f, f)
	}
	return fmt.Errorf("want table, json or csv")
}

// setFormat sets *f to to, refusing two different machine formats asked
// for at once (-o csv --json): which one a script meant is a guess.
func setFormat(f *format, to format) error {
	if *f != formatTable && *f != to {
		return fmt.Errorf("%s was already asked for: choose one format", *f)
	}
	*f = to
	return nil
}

// formatAlias is a boolean flag standing for one -o value (--json, and
// fees' older --csv), so scripts written before -o keep working.
type formatAlias struct {
	f  *format
	to format
}

func (a formatAlias) String() string { return strconv.FormatBool(*a.f == a.to) }
func (a formatAlias) Type() string   { return "bool" }
func (a formatAlias) Set(s string) error {
	on, err := strconv.ParseBool(s)
	switch {
	case err != nil:
		return err
	case on:
		return setFormat(a.f, a.to)
	case *a.f == a.to:
		*a.f = formatTable
	}
	return nil
}

// registerFormat declares -o/--output and --json (docs/design.md: --json makes
// every command print JSON lines) on fs.
func registerFormat(fs *pflag.FlagSet, f *format) {
	*f = formatTable
	fs.VarP(formatValue{f}, "output", "o", "output format: table, json or csv")
	registerJSON(fs, f)
}

// registerJSON declares --json alone, for a command that prints no records
// but one result.
func registerJSON(fs *pflag.FlagSet, f *format) {
	*f = formatTable
	fs.VarPF(formatAlias{f, formatJSON}, "json", "", "print machine-readable JSON, one object per line (same as -o json)").NoOptDefVal = "true"
}

// printer is the one place that knows the output formats: records go to w
// as a table, JSON lines or CSV; in CSV, the sentences around the records
// go to notes (stderr) so that stdout stays one CSV document.
type printer struct {
	w, notes io.Writer
	format   format
}

// json reports whether the output is for machines reading JSON lines.
func (p printer) json() bool { return p.format == formatJSON }

// event prints one line about something that happened: the JSON object v,
// or the text for people.
func (p printer) event(v any, text string) {
	switch p.format {
	case formatJSON:
		json.NewEncoder(p.w).Encode(v)
	case formatCSV:
		if p.notes != nil {
			fmt.Fprintln(p.notes, text)
		}
	default:
		fmt.Fprintln(p.w, text)
	}
}

// table prints records: rows aligned under a header, the rows as CSV under
// the header, or with JSON each object (a table without objects prints
// nothing in JSON: its command prints its own).
func (p printer) table(header []string, rows [][]string, objects []any) {
	switch p.format {
	case formatJSON:
		enc := json.NewEncoder(p.w)
		for _, o := range objects {
			enc.Encode(o)
		}
	case formatCSV:
		w := csv.NewWriter(p.w)
		w.Write(header)
		w.WriteAll(rows)
	default:
		tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		tw.Flush()
	}
}

// records prints records that people read as sentences (a workflow's
// outcome): the texts, a JSON object each, or CSV rows under the header.
func (p printer) records(header []string, rows [][]string, objects []any, texts []string) {
	if p.format == formatTable {
		for _, t := range texts {
			fmt.Fprintln(p.w, t)
		}
		return
	}
	p.table(header, rows, objects)
}

func money(d decimal.Decimal) string { return d.StringFixed(2) }

// price4 shows a locate price with the spec's four decimals.
func price4(d decimal.Decimal) string { return d.StringFixed(4) }

// locatePrice is price4 for a table cell, blank while no price is known
// (a quote still Quoting or Pending carries 0).
func locatePrice(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return price4(d)
}

// out is the printer for a command's results, in the format of -o.
func (c *connFlags) out() printer { return c.m.printer(c.format) }

// printer prints to Main's stdout in format f.
func (m *Main) printer(f format) printer { return printer{w: m.Stdout, notes: m.Stderr, format: f} }
