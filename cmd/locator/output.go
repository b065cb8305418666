package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// outcome is the JSON a workflow command ends with (DESIGN.md contract).
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

// exitFor maps a workflow's end to the exit-code contract.
func exitFor(w *workflow.Workflow) error {
	switch w.State {
	case states.Filled, states.Covered, states.NotNeeded, states.Credited:
		return nil
	case states.Declined:
		return &exitError{code: exitDeclined, msg: "declined by the cost policy: " + w.Reason}
	case states.Rejected, states.Expired, states.Canceled:
		return &exitError{code: exitBroker, msg: fmt.Sprintf("%s: %s", w.State, w.Reason)}
	}
	return &exitError{code: exitFailure, msg: fmt.Sprintf("%s: %s", w.State, w.Reason)}
}

// exitError ends the command with a specific exit code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// printer writes human text or JSON lines.
type printer struct {
	w    io.Writer
	json bool
}

// event prints one progress line: JSON object or text.
func (p printer) event(v any, text string) {
	if p.json {
		json.NewEncoder(p.w).Encode(v)
		return
	}
	fmt.Fprintln(p.w, text)
}

// table prints rows aligned under a header; with JSON, each row object.
func (p printer) table(header []string, rows [][]string, objects []any) {
	if p.json {
		enc := json.NewEncoder(p.w)
		for _, o := range objects {
			enc.Encode(o)
		}
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
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

// out is the printer for a command's results: text, or JSON with --json.
func (c *connFlags) out() printer { return printer{w: c.m.Stdout, json: c.json} }
