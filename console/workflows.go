package console

import (
	"fmt"
	"strconv"
	"time"

	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// The local database's records as the status command prints them: the
// workflows, one workflow's transitions, and which process owns each
// account.

// Workflows prints workflows one a row; in JSON each is its outcome record.
func Workflows(out Printer, ws []*workflow.Workflow) {
	var rows [][]string
	var objs []any
	for _, w := range ws {
		o := OutcomeOf(w)
		rows = append(rows, []string{w.ID, w.CreatedAt.Local().Format(time.DateTime), string(w.Kind), w.Account, w.Symbol,
			strconv.FormatInt(w.Requested, 10), strconv.FormatInt(w.Quantity, 10), o.PricePerShare, string(w.State), w.Asker, w.Reason})
		objs = append(objs, o)
	}
	out.Table([]string{"ID", "CREATED", "KIND", "ACCOUNT", "SYMBOL", "ASKED", "SENT", "PRICE", "STATE", "ASKED BY", "REASON"}, rows, objs)
}

// Transitions prints workflow w's line (in JSON its outcome record), then
// the transitions of its log one a row, each in JSON with the broker's row
// that caused it.
func Transitions(out Printer, w *workflow.Workflow, log []store.Transition) {
	out.Event(OutcomeOf(w), fmt.Sprintf("%s  %s %s %d  %s  quoteReqID %s  %s", w.ID, w.Kind, w.Symbol, w.Requested, w.State, w.QuoteReqID, w.Reason))
	var rows [][]string
	var objs []any
	for _, t := range log {
		rows = append(rows, []string{t.At.Local().Format(time.DateTime), string(t.From), string(t.To), string(t.Event), t.Reason})
		objs = append(objs, map[string]any{"at": t.At, "from": t.From, "to": t.To, "event": t.Event, "reason": t.Reason, "row": t.RawRow})
	}
	out.Table([]string{"AT", "FROM", "TO", "EVENT", "REASON"}, rows, objs)
}

// Owners says which process owns each account (docs/design.md rule 3): live,
// or lapsed when its lease expired before now.
func Owners(out Printer, leases []store.Lease, now time.Time) {
	for _, l := range leases {
		state := "live"
		if !l.Expires.After(now) {
			state = "lapsed"
		}
		out.Event(map[string]any{"owner": map[string]any{"account": l.Account, "pid": l.PID, "host": l.Host, "since": l.Since, "heartbeat": l.Heartbeat, "state": state}},
			fmt.Sprintf("account %s: owned by pid %d on %s since %s (%s, last heartbeat %s)", l.Account, l.PID, l.Host,
				l.Since.Local().Format(time.DateTime), state, l.Heartbeat.Local().Format(time.TimeOnly)))
	}
}
