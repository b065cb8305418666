package account

import (
	"fmt"
	"strings"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// End is what ended a workflow, a short or a job run, as a command that
// ends with it reports it: the CLI maps each to its exit code
// (internal/console.Exit, the docs/design.md contract).
type End int

// Ends. The zero End is done.
const (
	EndDone        End = iota // done, including a person's own decline or cancel
	EndFailed                 // an unexpected failure, or not finished
	EndBroker                 // the broker rejected, expired or cancelled it
	EndDeclined               // declined by the cost policy or the locate budget
	EndInterrupted            // interrupted
)

// Outcome is how a workflow ended: in words for a person, and as an End.
// It is computed from the final record alone, so every process that sees
// the record says the same.
type Outcome struct {
	// Words say how it ended, starting with its state: "declined at the
	// prompt", "canceled at the broker (locate status 52 Canceled)".
	Words string
	// End is what ended it.
	End End
}

// OutcomeOf is w's outcome. A workflow still open has none (EndFailed).
func OutcomeOf(w *workflow.Workflow) Outcome {
	switch w.State {
	case states.Filled:
		return Outcome{Words: fmt.Sprintf("filled — %d shares at %s (%s) = %s", w.Quantity, w.Price.StringFixed(4), w.LocateType, w.Total().StringFixed(2)), End: EndDone}
	case states.Covered:
		return Outcome{Words: "covered — located inventory already holds the shares; nothing was quoted", End: EndDone}
	case states.NotNeeded:
		return Outcome{Words: "not_needed — easy to borrow; nothing was quoted", End: EndDone}
	case states.Priced:
		return Outcome{Words: "priced — " + prices(w) + "; cancelled at the broker, nothing accepted", End: EndDone}
	case states.Credited:
		return Outcome{Words: fmt.Sprintf("credited — %d %s shares credited back", w.Quantity, w.LocateType), End: EndDone}
	case states.Declined, states.Canceled:
		return ended(w)
	case states.Expired:
		return Outcome{Words: "expired at the broker" + broker(w), End: EndBroker}
	case states.Rejected:
		return Outcome{Words: "rejected by the broker" + broker(w), End: EndBroker}
	case states.Failed:
		return Outcome{Words: "failed" + because(w.Reason), End: EndFailed}
	}
	return Outcome{Words: string(w.State) + ", not finished" + because(w.Reason), End: EndFailed}
}

// prices names the offers a price check saw: "300 shares: Locate 0.0150
// (4.50)", each side of a Reg SHO pair.
func prices(w *workflow.Workflow) string {
	var seen []string
	for _, o := range workflow.Prices(w) {
		seen = append(seen, fmt.Sprintf("%s %s (%s)", string(brokercode.LocateTypeForCode(o.LocateType)), o.Price.StringFixed(4), o.Total.StringFixed(2)))
	}
	return fmt.Sprintf("%d shares: %s", w.Quantity, strings.Join(seen, ", "))
}

// ended is the outcome of a workflow declined or canceled: whoever ended
// it says what it means.
func ended(w *workflow.Workflow) Outcome {
	st := string(w.State)
	switch w.Cause {
	case workflow.CausePolicy:
		return Outcome{Words: "declined by the cost policy" + because(w.Reason), End: EndDeclined}
	case workflow.CauseBudget:
		return Outcome{Words: "declined by the locate budget" + because(w.Reason), End: EndDeclined}
	case workflow.CausePrompt:
		return Outcome{Words: "declined at the prompt", End: EndDone}
	case workflow.CausePerson:
		return Outcome{Words: st + " by a person " + w.Reason, End: EndDone}
	case workflow.CauseNoAnswer:
		return Outcome{Words: "declined: no answer in time; the offer was cancelled while it could be", End: EndBroker}
	case workflow.CauseAskerGone:
		return Outcome{Words: "declined: the process that was to answer went away", End: EndBroker}
	case workflow.CauseInterrupt:
		return Outcome{Words: st + ": interrupted, withdrawn", End: EndInterrupted}
	}
	if w.State == states.Canceled {
		return Outcome{Words: "canceled at the broker" + broker(w), End: EndBroker}
	}
	return Outcome{Words: st + because(w.Reason), End: EndBroker}
}

// broker is what the broker said of w: the status of its last row, named,
// and its text.
func broker(w *workflow.Workflow) string {
	last, ok := w.Legs[w.AcceptedID]
	if !ok {
		last = w.Legs[w.QuoteReqID] // the pair's first leg: both end alike
	}
	status := ""
	if last.Status != 0 {
		status = "locate status " + last.Status.String()
	}
	switch {
	case status == "":
		return because(w.Reason)
	case w.Reason == "" || w.Reason == status:
		return " (" + status + ")"
	}
	return " (" + status + ")" + because(w.Reason)
}

// because is ": reason", or nothing without one.
func because(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// ShortOutcome is how a short ended: the locate's outcome when it did not
// locate, the order's otherwise; a person's no at the order's
// confirmation is done, nothing sent.
func ShortOutcome(res *ShortResult) Outcome {
	if res.Order == nil {
		switch {
		case res.Locate != nil && !res.Locate.Located():
			return OutcomeOf(res.Locate)
		case res.Declined:
			return Outcome{Words: "declined at the confirmation: no order was sent", End: EndDone}
		}
		return Outcome{Words: "declined: no order was sent (" + res.Reason + ")", End: EndDeclined}
	}
	o := res.Order
	switch o.State {
	case states.Filled, states.OrderWorking:
		return Outcome{Words: fmt.Sprintf("order %s %s", o.LookupID(), o.State), End: EndDone}
	case states.Rejected, states.Canceled, states.Expired, states.Failed:
		words := fmt.Sprintf("order %s %s", o.LookupID(), o.State)
		if o.Code != "" {
			words += " " + o.Code
		}
		if o.Text != "" {
			words += ": " + o.Text
		} else if o.Reason != "" {
			words += ": " + o.Reason
		}
		return Outcome{Words: words, End: EndBroker}
	case states.OrderUnregistered:
		return Outcome{Words: fmt.Sprintf("order %s never reached the broker; nothing is working under it. Run the command again to place a new one", o.ClientOrderID), End: EndFailed}
	}
	status := o.OrderStatus
	if status == "" {
		status = string(o.State)
	}
	return Outcome{Words: fmt.Sprintf("order %s is still %s: see 'locator orders'", o.LookupID(), status), End: EndFailed}
}

// Severity orders the unsuccessful ends of workflows, for a job run's
// worst end and for the End of any batch: a failure beats a broker
// refusal, which beats a policy decline.
func Severity(s states.State) int {
	switch s {
	case states.Declined:
		return 1
	case states.Rejected, states.Expired, states.Canceled:
		return 2
	}
	return 3
}

// Worst is the outcome of a batch: that of its WorstOf, or done when
// none.
func Worst(ws []*workflow.Workflow) Outcome {
	worst := WorstOf(ws)
	if worst == nil {
		return Outcome{End: EndDone}
	}
	return OutcomeOf(worst)
}

// WorstOf is a batch's worst workflow by Severity among those whose
// outcome is not done (nil entries skipped), nil when none: the one a
// batch's end is told by.
func WorstOf(ws []*workflow.Workflow) *workflow.Workflow {
	var worst *workflow.Workflow
	for _, w := range ws {
		if w != nil && OutcomeOf(w).End != EndDone && (worst == nil || Severity(w.State) > Severity(worst.State)) {
			worst = w
		}
	}
	return worst
}
