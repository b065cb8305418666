package console

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/workflow"
)

// The local database's records as the status command prints them: the
// workflows, one workflow's transitions, and which process owns each
// account.

// Workflows prints the workflows and the orders locator placed (a short's
// sell), newest first, one a row of one table, at most limit rows of both
// (0: all); in JSON each is one record with its "type": "workflow" (its
// outcome record) or "order".
func Workflows(out Printer, ws []workflow.Workflow, orders []workflow.Order, limit int) {
	type row struct {
		at    time.Time
		cells []string
		obj   any
	}
	var all []row
	for i := range ws {
		w := &ws[i]
		o := OutcomeRecordOf(w)
		all = append(all, row{w.CreatedAt, []string{w.ID, market.DateTime(w.CreatedAt), string(w.Kind), w.Account, w.Symbol,
			strconv.FormatInt(w.Requested, 10), strconv.FormatInt(w.Quantity, 10), o.PricePerShare, string(w.State), w.Asker, w.Reason},
			workflowRecord{Type: "workflow", OutcomeRecord: o}})
	}
	for i := range orders {
		o := &orders[i]
		r := OrderRecordOf(o)
		sent := int64(0)
		if !o.SentAt.IsZero() {
			sent = o.Quantity
		}
		all = append(all, row{o.CreatedAt, []string{o.LookupID(), market.DateTime(o.CreatedAt), "order", o.Account, o.Symbol,
			strconv.FormatInt(o.Quantity, 10), strconv.FormatInt(sent, 10), r.LimitPrice, string(o.State), "",
			strings.TrimSpace(o.Side + "/" + o.OpenClose + " " + o.Reason)}, r})
	}
	slices.SortStableFunc(all, func(a, b row) int { return b.at.Compare(a.at) })
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	var rows [][]string
	var objs []any
	for _, r := range all {
		rows, objs = append(rows, r.cells), append(objs, r.obj)
	}
	out.Table([]string{"ID", "CREATED", "KIND", "ACCOUNT", "SYMBOL", "ASKED", "SENT", "PRICE", "STATE", "ASKED BY", "REASON"}, rows, objs)
}

// workflowRecord is a workflow as a status line: its outcome record.
type workflowRecord struct {
	Type string `json:"type"`
	OutcomeRecord
}

// OrderRecord is an order locator placed, as status prints it in JSON.
type OrderRecord struct {
	Type             string `json:"type"` // "order"
	ClientOrderID    string `json:"clientOrderId"`
	Account          string `json:"account"`
	Symbol           string `json:"symbol"`
	Side             string `json:"side"`
	OpenClose        string `json:"openClose"`
	Quantity         int64  `json:"quantity"`
	LimitPrice       string `json:"limitPrice"`
	Route            string `json:"route"`
	State            string `json:"state"`
	OrderStatus      string `json:"orderStatus"`
	Executed         int64  `json:"executed"`
	PriceAvg         string `json:"priceAvg"`
	LocateWorkflowID string `json:"locateWorkflowId,omitempty"`
	Reason           string `json:"reason,omitempty"`
	CreatedAt        string `json:"createdAt"`
	UpdatedAt        string `json:"updatedAt"`
}

// OrderRecordOf is o as its status record (prices at the broker's four
// decimals).
func OrderRecordOf(o *workflow.Order) OrderRecord {
	r := OrderRecord{Type: "order", ClientOrderID: o.LookupID(), Account: o.Account, Symbol: o.Symbol, Side: o.Side, OpenClose: o.OpenClose,
		Quantity: o.Quantity, Route: o.Route, State: string(o.State), OrderStatus: o.OrderStatus, Executed: o.Executed,
		LocateWorkflowID: o.LocateWorkflowID, Reason: o.Reason,
		CreatedAt: o.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: o.UpdatedAt.UTC().Format(time.RFC3339)}
	if !o.LimitPrice.IsZero() {
		r.LimitPrice = o.LimitPrice.StringFixed(4)
	}
	if !o.PriceAvg.IsZero() {
		r.PriceAvg = o.PriceAvg.StringFixed(4)
	}
	return r
}

// Transitions prints workflow w's line (in JSON its outcome record), then
// the transitions of its log one a row, each in JSON with the broker's row
// that caused it.
func Transitions(out Printer, w *workflow.Workflow, log []locator.Transition) {
	out.Event(OutcomeRecordOf(w), fmt.Sprintf("%s  %s %s %d  %s  quoteReqID %s  %s", w.ID, w.Kind, w.Symbol, w.Requested, w.State, w.QuoteReqID, w.Reason))
	transitions(out, log)
}

// OrderTransitions prints order o's line (in JSON its status record),
// then its transition log as Transitions does (orders keep no broker rows).
func OrderTransitions(out Printer, o *workflow.Order, log []locator.Transition) {
	out.Event(OrderRecordOf(o), strings.TrimSpace(fmt.Sprintf("%s  order: %s  %s %s  %d executed  %s", o.LookupID(), OrderWords(o), o.State, o.OrderStatus, o.Executed, o.Reason)))
	transitions(out, log)
}

// transitions prints a log one transition a row.
func transitions(out Printer, log []locator.Transition) {
	var rows [][]string
	var objs []any
	for _, t := range log {
		rows = append(rows, []string{market.DateTime(t.At), string(t.From), string(t.To), string(t.Event), t.Reason})
		objs = append(objs, map[string]any{"at": t.At, "from": t.From, "to": t.To, "event": t.Event, "reason": t.Reason, "row": t.RawRow})
	}
	out.Table([]string{"AT", "FROM", "TO", "EVENT", "REASON"}, rows, objs)
}

// Owners says which process owns each account (docs/design.md rule 3): live,
// or lapsed when its lease expired before now; which daemons stand by
// to take one over; and which list one they cannot serve now, and why.
func Owners(out Printer, leases []locator.Lease, standbys []locator.Standby, now time.Time) {
	for _, l := range leases {
		state := "live"
		if !l.Expires.After(now) {
			state = "lapsed"
		}
		out.Event(map[string]any{"type": "owner", "account": l.Account, "pid": l.PID, "host": l.Host, "term": l.Term, "since": l.Since, "heartbeat": l.Heartbeat, "state": state},
			fmt.Sprintf("account %s: owned by pid %d on %s since %s, term %d (%s, last heartbeat %s)", l.Account, l.PID, l.Host,
				market.DateTime(l.Since), l.Term, state, market.TimeOfDay(l.Heartbeat)))
	}
	for _, sb := range standbys {
		if sb.NotServed != "" {
			out.Event(map[string]any{"type": "not-served", "account": sb.Account, "pid": sb.PID, "host": sb.Host, "since": sb.NotServedSince,
				"reason": sb.NotServed, "retry": sb.Retry},
				fmt.Sprintf("account %s: not served: pid %d on %s serves it but cannot now: %s (since %s, tried again at %s)", sb.Account, sb.PID, sb.Host,
					sb.NotServed, market.DateTime(sb.NotServedSince), market.TimeOfDay(sb.Retry)))
			continue
		}
		out.Event(map[string]any{"type": "standby", "account": sb.Account, "pid": sb.PID, "host": sb.Host, "since": sb.Since},
			fmt.Sprintf("account %s: pid %d on %s stands by to take it over (since %s)", sb.Account, sb.PID, sb.Host, market.DateTime(sb.Since)))
	}
}

// Refused says which workflow and order rows their account's owner refused
// at its last start, and why (docs/design.md rule 10): one line each, a
// "refused" record in JSON. The owner sends nothing for them; they stay
// in the list below as they were written.
func Refused(out Printer, rows []locator.RefusedRow) {
	for _, r := range rows {
		out.Event(map[string]any{"type": "refused", "account": r.Account, "kind": r.Kind, "id": r.ID, "symbol": r.Symbol, "reason": r.Reason, "at": r.At},
			fmt.Sprintf("account %s: refused %s %s (%s) since %s: %s", r.Account, r.Kind, r.ID, r.Symbol, market.DateTime(r.At), r.Reason))
	}
}
