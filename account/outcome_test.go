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

// Issue 17 item 5: whoever ended a workflow says what its outcome means.
func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	canceledRow := map[string]workflow.Leg{"Q1": {Status: brokercode.LocateStatusCanceled}}
	for _, c := range []struct {
		w     workflow.Workflow
		words string
		exit  int
	}{
		{workflow.Workflow{State: states.Filled, Quantity: 300, Price: decimal.RequireFromString("0.015"), LocateType: "Locate"}, "filled — 300 shares at 0.0150 (Locate) = 4.50", account.ExitOK},
		{workflow.Workflow{State: states.NotNeeded}, "not_needed", account.ExitOK},
		{workflow.Workflow{State: states.Covered}, "covered", account.ExitOK},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CausePolicy, Reason: "0.03 above the cap 0.02"}, "declined by the cost policy: 0.03 above the cap 0.02", account.ExitDeclined},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CausePrompt}, "declined at the prompt", account.ExitOK},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CausePerson, Reason: "with 'locator decline'"}, "declined by a person with 'locator decline'", account.ExitOK},
		{workflow.Workflow{State: states.Canceled, Cause: workflow.CausePerson, Reason: "with 'locator cancel'", QuoteReqID: "Q1", Legs: canceledRow}, "canceled by a person with 'locator cancel'", account.ExitOK},
		{workflow.Workflow{State: states.Canceled, Cause: workflow.CauseInterrupt}, "interrupted", account.ExitInterrupted},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CauseNoAnswer}, "no answer in time", account.ExitBroker},
		{workflow.Workflow{State: states.Declined, Cause: workflow.CauseAskerGone}, "went away", account.ExitBroker},
		{workflow.Workflow{State: states.Canceled, QuoteReqID: "Q1", Legs: canceledRow, Reason: "locate status 52 Canceled"}, "canceled at the broker (locate status 52 Canceled)", account.ExitBroker},
		{workflow.Workflow{State: states.Rejected, QuoteReqID: "Q1", Legs: map[string]workflow.Leg{"Q1": {Status: brokercode.LocateStatusRejected}}, Reason: "No shares available"}, "rejected by the broker (locate status 56 Rejected): No shares available", account.ExitBroker},
		{workflow.Workflow{State: states.Failed, Reason: "record not saved"}, "failed: record not saved", account.ExitFailure},
	} {
		o := account.OutcomeOf(&c.w)
		if !strings.Contains(o.Words, c.words) || o.Exit != c.exit {
			t.Errorf("%s (%s): %q exit %d, want %q exit %d", c.w.State, c.w.Cause, o.Words, o.Exit, c.words, c.exit)
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
		res  account.ShortResult
		exit int
	}{
		{account.ShortResult{Locate: declined}, account.ExitDeclined},
		{account.ShortResult{Locate: located, Declined: true}, account.ExitOK},
		{account.ShortResult{Locate: located, Reason: "sizing"}, account.ExitDeclined},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.Filled}}, account.ExitOK},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.OrderWorking}}, account.ExitOK},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.Rejected, Code: "R06"}}, account.ExitBroker},
		{account.ShortResult{Locate: located, Order: &workflow.Order{State: states.OrderUnregistered}}, account.ExitFailure},
	} {
		if o := account.ShortOutcome(&c.res); o.Exit != c.exit {
			t.Errorf("%+v: %q exit %d, want %d", c.res, o.Words, o.Exit, c.exit)
		}
	}
}
