package account_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Whoever ended a workflow says what its outcome means.
func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	canceledRow := map[string]workflow.Leg{"Q1": {Status: brokercode.LocateStatusCanceled}}
	for _, c := range []struct {
		w     workflow.Workflow
		words string
		end   account.End
	}{
		{workflow.Workflow{State: states.Filled, Quantity: 300, Price: decimal.RequireFromString("0.015"), LocateType: "Locate"}, "filled — 300 shares at 0.0150 (Locate) = 4.50", account.EndDone},
		{workflow.Workflow{State: states.NotNeeded}, "not_needed", account.EndDone},
		{workflow.Workflow{State: states.Covered}, "covered", account.EndDone},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CausePolicy, Reason: "0.03 above the cap 0.02"}, "declined by the cost policy: 0.03 above the cap 0.02", account.EndDeclined},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CausePrompt}, "declined at the prompt", account.EndDone},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CausePerson, Reason: "with 'locator decline'"}, "declined by a person with 'locator decline'", account.EndDone},
		{workflow.Workflow{State: states.Canceled, Cause: workflow.CausePerson, Reason: "with 'locator cancel'", QuoteReqID: "Q1", Legs: canceledRow}, "canceled by a person with 'locator cancel'", account.EndDone},
		{workflow.Workflow{State: states.Canceled, Cause: workflow.CauseInterrupt}, "interrupted", account.EndInterrupted},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CauseNoAnswer}, "no answer in time", account.EndBroker},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CauseAskerGone}, "went away", account.EndBroker},
		{workflow.Workflow{State: states.Canceled, QuoteReqID: "Q1", Legs: canceledRow, Reason: "locate status 52 Canceled"}, "canceled at the broker (locate status 52 Canceled)", account.EndBroker},
		{workflow.Workflow{State: states.Rejected, QuoteReqID: "Q1", Legs: map[string]workflow.Leg{"Q1": {Status: brokercode.LocateStatusRejected}}, Reason: "No shares available"}, "rejected by the broker (locate status 56 Rejected): No shares available", account.EndBroker},
		{workflow.Workflow{State: states.Failed, Reason: "record not saved"}, "failed: record not saved", account.EndFailed},
	} {
		o := account.OutcomeOf(&c.w)
		if !strings.Contains(o.Words, c.words) || o.End != c.end {
			t.Errorf("%s (%s): %q end %d, want %q end %d", c.w.State, c.w.Cause, o.Words, o.End, c.words, c.end)
		}
	}
}

// A short's outcome: the locate's when it did not locate, the order's
// otherwise; a person's no at the confirmation is done, nothing sent.
func TestShortOutcome(t *testing.T) {
	t.Parallel()
	declined := &workflow.Workflow{Kind: states.Locate, State: states.Declined, Cause: workflow.CausePolicy}
	located := &workflow.Workflow{Kind: states.Locate, State: states.Filled}
	for _, c := range []struct {
		res account.ShortResult
		end account.End
	}{
		{account.ShortResult{Locate: declined}, account.EndDeclined},
		{account.ShortResult{Locate: located, Declined: true}, account.EndDone},
		{account.ShortResult{Locate: located, Reason: "sizing"}, account.EndDeclined},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.Filled}}, account.EndDone},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.OrderWorking}}, account.EndDone},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.Rejected, Code: "R06"}}, account.EndBroker},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.OrderUnregistered}}, account.EndFailed},
	} {
		if o := account.ShortOutcome(&c.res); o.End != c.end {
			t.Errorf("%+v: %q end %d, want %d", c.res, o.Words, o.End, c.end)
		}
	}
}
