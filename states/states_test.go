package states_test

import (
	"strings"
	"testing"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
)

// Spec "Locate statuses": each history status maps to one event, and the
// locate and credit-back tables take the broker's transitions.
func TestLocateTransitions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind    states.Kind
		from    states.State
		ev      states.Event
		to      states.State
		changed bool
		bad     bool
	}{
		{states.Locate, states.Requested, states.Send, states.Quoting, true, false},
		{states.Locate, states.Requested, states.Skip, states.NotNeeded, true, false},
		{states.Locate, states.Requested, states.Cover, states.Covered, true, false},
		{states.Locate, states.Quoting, states.RowQuoting, states.Quoting, false, false},
		{states.Locate, states.Quoting, states.RowOffered, states.Offered, true, false},
		{states.Locate, states.Quoting, states.RowPending, states.Pending, true, false},
		{states.Locate, states.Pending, states.RowOffered, states.Offered, true, false},
		{states.Locate, states.Pending, states.RowExpired, states.Expired, true, false},
		{states.Locate, states.Offered, states.Accept, states.Accepting, true, false},
		{states.Locate, states.Offered, states.RowOffered, states.Offered, false, false},
		{states.Locate, states.Accepting, states.RowFilled, states.Filled, true, false},
		{states.Locate, states.Accepting, states.RowExpired, states.Expired, true, false},
		{states.Locate, states.Offered, states.Decline, states.Declining, true, false},
		{states.Locate, states.Declining, states.Confirm, states.Declined, true, false},
		{states.Locate, states.Declining, states.Timeout, states.Declined, true, false},
		{states.Locate, states.Offered, states.RowCanceled, states.Canceled, true, false},
		{states.Locate, states.Offered, states.Cancel, states.Canceling, true, false},
		{states.Locate, states.Canceling, states.RowCanceled, states.Canceled, true, false},
		{states.Locate, states.Quoting, states.RowRejected, states.Rejected, true, false},
		{states.Locate, states.Pending, states.Timeout, states.Expired, true, false},
		{states.Locate, states.Accepting, states.Fail, states.Failed, true, false},
		// A terminal workflow takes nothing, and a quote cannot be accepted
		// before it is offered.
		{states.Locate, states.Filled, states.RowFilled, states.Filled, false, false},
		{states.Locate, states.Filled, states.RowExpired, states.Filled, false, true},
		{states.Locate, states.Quoting, states.Accept, states.Quoting, false, true},
		{states.Locate, states.Requested, states.RowOffered, states.Requested, false, true},
		{states.CreditBack, states.Requested, states.Send, states.Submitted, true, false},
		{states.CreditBack, states.Submitted, states.RowNew, states.New, true, false},
		{states.CreditBack, states.New, states.RowFilled, states.Credited, true, false},
		{states.CreditBack, states.New, states.Cancel, states.Canceling, true, false},
		{states.CreditBack, states.Canceling, states.RowCanceled, states.Canceled, true, false},
		{states.CreditBack, states.Submitted, states.RowRejected, states.Rejected, true, false},
		{states.CreditBack, states.Credited, states.RowCanceled, states.Credited, false, true},
		// Orders (spec "Order statuses"): sent once, settled by status.
		{states.Order, states.OrderIntent, states.Send, states.OrderSent, true, false},
		{states.Order, states.OrderSent, states.Lost, states.OrderUnknown, true, false},
		{states.Order, states.OrderUnknown, states.Unregistered, states.OrderUnregistered, true, false},
		{states.Order, states.OrderUnknown, states.StatusFilled, states.Filled, true, false},
		{states.Order, states.OrderSent, states.StatusPending, states.Pending, true, false},
		{states.Order, states.Pending, states.StatusRejected, states.Rejected, true, false},
		{states.Order, states.OrderWorking, states.Cancel, states.Canceling, true, false},
		{states.Order, states.Canceling, states.StatusCanceled, states.Canceled, true, false},
		{states.Order, states.OrderUnknown, states.Send, states.OrderUnknown, false, true},
		{states.Order, states.Filled, states.Cancel, states.Filled, false, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind)+"/"+string(tc.from)+"+"+string(tc.ev), func(t *testing.T) {
			to, changed, err := states.Next(tc.kind, tc.from, tc.ev)
			if (err != nil) != tc.bad {
				t.Fatalf("err = %v, want error %v", err, tc.bad)
			}
			if to != tc.to || changed != tc.changed {
				t.Errorf("got %s changed=%v, want %s changed=%v", to, changed, tc.to, tc.changed)
			}
		})
	}
}

func TestEventForStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[brokercode.LocateStatus]states.Event{81: states.RowQuoting, 54: states.RowPending, 65: states.RowOffered, 50: states.RowFilled, 52: states.RowCanceled, 67: states.RowExpired, 56: states.RowRejected, 48: states.RowNew} {
		if got, ok := states.EventForStatus(code); !ok || got != want {
			t.Errorf("status %d: %s %v, want %s", code, got, ok, want)
		}
	}
	if _, ok := states.EventForStatus(40); ok {
		t.Error("status 40 is not a locate status")
	}
}

// Every terminal state is reachable, and no event leaves one.
func TestTerminalStates(t *testing.T) {
	t.Parallel()
	for _, kind := range states.Kinds() {
		for _, e := range states.Events(kind) {
			for _, src := range e.Src {
				if states.Terminal(states.State(src)) && src != e.Dst {
					t.Errorf("%s: event %s leaves terminal %s", kind, e.Name, src)
				}
			}
		}
		all := states.All(kind)
		if all[0] != states.Initial(kind) {
			t.Errorf("%s: first state %s", kind, all[0])
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	m := states.Mermaid(states.Locate)
	for _, want := range []string{"stateDiagram-v2", "[*] --> requested", "offered --> accepting: accept", "filled --> [*]"} {
		if !strings.Contains(m, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, m)
		}
	}
	d := states.Dot(states.CreditBack)
	for _, want := range []string{"digraph credit_back", `"new" -> "credited" [label="row_filled"]`, `"credited" [shape=doublecircle]`} {
		if !strings.Contains(d, want) {
			t.Errorf("dot lacks %q:\n%s", want, d)
		}
	}
}
