// Package states defines locator's workflows as data: the states a locate
// request, a price check, a credit-back and an order pass through, the events that move
// them, and the transition tables that looplab/fsm checks. It does no I/O and imports
// nothing of locator's but the brokercode leaf (the broker's statuses it maps
// to events), so the engine, the store and the CLI share one truth.
package states

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/locatorhq/locator/brokercode"
	"github.com/looplab/fsm"
)

// Kind names a workflow machine.
type Kind string

const (
	// Locate is the quote workflow: quote, watch the offer, accept or decline.
	// A Reg SHO pair (id and id.SU) is one Locate workflow with two legs.
	Locate Kind = "locate"
	// CreditBack is the sell workflow that returns unused located shares.
	CreditBack Kind = "credit_back"
	// Order is an order placed under a write-ahead clientOrderId (the short
	// of locate-then-short): recorded, sent once, followed to its end.
	Order Kind = "order"
	// PriceCheck is a quote sent only to see its price: queued and spaced
	// like a locate's, its offer (both legs of a Reg SHO pair) recorded and
	// cancelled at once. Its table has no accept: nothing is ever taken.
	PriceCheck Kind = "price_check"
)

// State is where a workflow stands.
type State string

// Locate workflow states. The broker's status code that leads into a state,
// if any, is in brackets.
const (
	// Requested: intent persisted (with its quoteReqID), nothing sent yet.
	Requested State = "requested"
	// Quoting: the quote was sent; the row is absent or Quoting [81].
	Quoting State = "quoting"
	// Requoting: the quote was lost on the way (no history row within the
	// settle grace); one new quote, under a new quoteReqID, waits for its
	// turn (the same-symbol spacing). The lost one is watched: turning up
	// before its replacement leaves, it is taken; after, it is taken if
	// offered first, else cancelled.
	Requoting State = "requoting"
	// Pending: the broker holds the quote without inventory [54].
	Pending State = "pending"
	// Offered: an offer is live for 30 seconds [65].
	Offered State = "offered"
	// Accepting: the accept was persisted and sent; waiting for Filled.
	Accepting State = "accepting"
	// Canceling: a cancel requested by the user was sent; waiting for [52].
	Canceling State = "canceling"
	// Declining: the offer was refused (policy, prompt, timeout) and that is
	// recorded; the cancel is being sent; waiting for [52] or [67].
	Declining State = "declining"
	// Filled: the shares are located [50]. Terminal.
	Filled State = "filled"
	// Declined: the cost policy said no and the offer was cancelled. Terminal.
	Declined State = "declined"
	// Canceled: cancelled before fill [52]. Terminal.
	Canceled State = "canceled"
	// Expired: the offer window closed, or a pending quote lapsed [67]. Terminal.
	Expired State = "expired"
	// Rejected: the broker refused the quote [56]. Terminal.
	Rejected State = "rejected"
	// Failed: the engine gave up, with a reason. Terminal.
	Failed State = "failed"
	// Covered: inventory already covered the request; nothing was quoted. Terminal.
	Covered State = "covered"
	// NotNeeded: the symbol is easy to borrow; nothing was quoted. Terminal.
	NotNeeded State = "not_needed"
)

// Price-check workflow states (Requested, Quoting, Requoting, Pending,
// Canceling and the ends Canceled, Expired, Rejected, Failed and NotNeeded
// are the locate workflow's).
const (
	// Releasing: the offer is recorded and its cancel sent at once; waiting
	// for [52] (or [67], should the cancel lose the race).
	Releasing State = "releasing"
	// Priced: the price was seen and the quote is no longer open at the
	// broker (cancelled [52], or lapsed [67]). Terminal.
	Priced State = "priced"
)

// Credit-back workflow states (Requested, Canceled, Rejected and Failed are
// shared with the locate workflow).
const (
	// Submitted: the sell was sent; its row is not seen yet.
	Submitted State = "submitted"
	// New: the broker queued the credit-back [48].
	New State = "new"
	// Credited: the credit cleared [50]. Terminal.
	Credited State = "credited"
)

// Order workflow states. The strings are the ones the orders table has
// always stored; Pending, Canceling, Filled, Canceled, Expired, Rejected and
// Failed are shared with the locate workflow's constants of that spelling.
const (
	// OrderIntent: the order is recorded with its clientOrderId; nothing sent.
	OrderIntent State = "intent"
	// OrderSent: the placement is recorded as leaving; its answer is awaited.
	OrderSent State = "sent"
	// OrderUnknown: sent, and the answer was lost; settled by looking the
	// clientOrderId up, never by sending again.
	OrderUnknown State = "unknown"
	// OrderWorking: New, Accepted, PartiallyFilled or DoneForDay. (Pending
	// is PendingNew: the broker has it and its fate is not known yet.)
	OrderWorking State = "working"
	// OrderUnregistered: an unknown outcome settled as never having reached
	// the broker. Terminal.
	OrderUnregistered State = "unregistered"
)

// Event moves a workflow. Row events come from history rows by status code;
// the others are engine decisions.
type Event string

const (
	// Send: the quote or sell left (write-ahead record already persisted).
	Send Event = "send"
	// Requote: a quote was lost on the way; it is sent again, once, under a
	// new quoteReqID.
	Requote Event = "requote"
	// RowQuoting .. RowNew mirror the history row's locateStatus.
	RowQuoting  Event = "row_quoting"  // 81
	RowPending  Event = "row_pending"  // 54
	RowOffered  Event = "row_offered"  // 65
	RowFilled   Event = "row_filled"   // 50
	RowCanceled Event = "row_canceled" // 52
	RowExpired  Event = "row_expired"  // 67
	RowRejected Event = "row_rejected" // 56
	RowNew      Event = "row_new"      // 48
	// Accept: policy (or the user) took the offer; the accept is being sent.
	Accept Event = "accept"
	// Decline: policy refused the offer; a cancel is being sent.
	Decline Event = "decline"
	// Cancel: the user asked to cancel.
	Cancel Event = "cancel"
	// Timeout: the offer window closed without a terminal row.
	Timeout Event = "timeout"
	// Fail: the engine gave up (reason recorded).
	Fail Event = "fail"
	// Cover: inventory already covers the request.
	Cover Event = "cover"
	// Skip: the symbol is easy to borrow.
	Skip Event = "skip"
	// Confirm: the broker confirmed the cancel of a declined offer [52], or
	// the declined offer lapsed [67].
	Confirm Event = "confirm"
)

// Order events: the placement's answer, then the broker's orderStatus.
const (
	// Lost: the placement's answer never came (a lost response, a 5xx).
	Lost Event = "lost"
	// Refuse: the broker refused the request itself (an error status).
	Refuse Event = "refuse"
	// Unregistered: the lookup of an unknown outcome found no such order.
	Unregistered Event = "unregistered"
	// StatusPending .. StatusRejected mirror the order's orderStatus.
	StatusPending  Event = "status_pending"  // PendingNew
	StatusWorking  Event = "status_working"  // New, Accepted, PartiallyFilled, DoneForDay
	StatusFilled   Event = "status_filled"   // Filled
	StatusCanceled Event = "status_canceled" // Canceled
	StatusExpired  Event = "status_expired"  // Expired
	StatusRejected Event = "status_rejected" // Rejected
)

// EventForOrderStatus maps an order's orderStatus (spec "Order statuses") to
// its event.
func EventForOrderStatus(status brokercode.OrderStatus) (Event, bool) {
	switch status {
	case brokercode.OrderStatusPendingNew:
		return StatusPending, true
	case brokercode.OrderStatusNew, brokercode.OrderStatusAccepted, brokercode.OrderStatusPartiallyFilled, brokercode.OrderStatusDoneForDay:
		return StatusWorking, true
	case brokercode.OrderStatusFilled:
		return StatusFilled, true
	case brokercode.OrderStatusCanceled:
		return StatusCanceled, true
	case brokercode.OrderStatusExpired:
		return StatusExpired, true
	case brokercode.OrderStatusRejected:
		return StatusRejected, true
	}
	return "", false
}

// EventForStatus maps a history row's locateStatus to its event.
func EventForStatus(status brokercode.LocateStatus) (Event, bool) {
	switch status {
	case brokercode.LocateStatusQuoting:
		return RowQuoting, true
	case brokercode.LocateStatusPending:
		return RowPending, true
	case brokercode.LocateStatusOffered:
		return RowOffered, true
	case brokercode.LocateStatusFilled:
		return RowFilled, true
	case brokercode.LocateStatusCanceled:
		return RowCanceled, true
	case brokercode.LocateStatusExpired:
		return RowExpired, true
	case brokercode.LocateStatusRejected:
		return RowRejected, true
	case brokercode.LocateStatusNew:
		return RowNew, true
	}
	return "", false
}

func ev(e Event, to State, from ...State) fsm.EventDesc {
	src := make([]string, len(from))
	for i, s := range from {
		src[i] = string(s)
	}
	return fsm.EventDesc{Name: string(e), Src: src, Dst: string(to)}
}

// locateEvents is the locate workflow's transition table.
var locateEvents = []fsm.EventDesc{
	ev(Skip, NotNeeded, Requested),
	ev(Cover, Covered, Requested, Requoting),
	ev(Send, Quoting, Requested, Requoting),
	ev(Requote, Requoting, Quoting),
	// From Requoting: the quote thought lost turned up before its
	// replacement left, and is taken.
	ev(RowQuoting, Quoting, Quoting, Requoting),
	ev(RowPending, Pending, Quoting, Pending, Requoting),
	ev(RowOffered, Offered, Quoting, Pending, Offered, Requoting),
	ev(Accept, Accepting, Offered),
	ev(RowFilled, Filled, Quoting, Pending, Offered, Accepting, Canceling, Requoting),
	// A refusal is recorded before its cancel leaves (write-ahead); the
	// cancel's confirmation, or the offer's lapse, ends it.
	ev(Decline, Declining, Offered),
	ev(Confirm, Declined, Declining),
	ev(RowFilled, Filled, Declining), // accepted elsewhere before the cancel landed
	ev(Cancel, Canceling, Quoting, Pending, Offered),
	// Nothing was sent (or only a quote thought lost, cancelled blind):
	// nothing to wait for at the broker.
	ev(Cancel, Canceled, Requested, Requoting),
	ev(RowCanceled, Canceled, Quoting, Pending, Offered, Accepting, Canceling),
	ev(RowExpired, Expired, Quoting, Pending, Offered, Accepting, Canceling),
	ev(Timeout, Expired, Accepting, Pending),
	ev(Timeout, Declined, Declining),
	ev(RowRejected, Rejected, Quoting, Pending),
	ev(Fail, Failed, Requested, Quoting, Requoting, Pending, Offered, Accepting, Canceling, Declining),
	// Rows seen again after the end change nothing; a declined offer's
	// cancel confirmation (52), or its expiry if the cancel lost the race,
	// is expected.
	ev(RowFilled, Filled, Filled),
	ev(RowCanceled, Canceled, Canceled),
	ev(RowExpired, Expired, Expired),
	ev(RowRejected, Rejected, Rejected),
	ev(Confirm, Declined, Declined),
}

// priceCheckEvents is the price-check workflow's transition table: the
// locate's way to an offer, then straight to its cancel. No row leads to
// an accept, and none leaves an offer open.
var priceCheckEvents = []fsm.EventDesc{
	ev(Skip, NotNeeded, Requested),
	ev(Send, Quoting, Requested, Requoting),
	ev(Requote, Requoting, Quoting),
	ev(RowQuoting, Quoting, Quoting, Requoting),
	ev(RowPending, Pending, Quoting, Pending, Requoting),
	// The offer is recorded and its cancel leaves in the same step; the
	// other leg of a Reg SHO pair priced later is recorded too.
	ev(RowOffered, Releasing, Quoting, Pending, Requoting, Releasing),
	// The cancel's confirmation [52], or the offer's lapse [67], or the
	// window long past without either (nothing can be open then).
	ev(Confirm, Priced, Releasing),
	ev(Timeout, Priced, Releasing),
	ev(Cancel, Canceling, Quoting, Pending),
	ev(Cancel, Canceled, Requested, Requoting),
	ev(RowCanceled, Canceled, Quoting, Pending, Canceling),
	ev(RowExpired, Expired, Quoting, Pending, Canceling),
	ev(Timeout, Expired, Pending),
	ev(RowRejected, Rejected, Quoting, Pending),
	ev(Fail, Failed, Requested, Quoting, Requoting, Pending, Releasing, Canceling),
	// Rows seen again after the end change nothing.
	ev(Confirm, Priced, Priced),
	ev(RowCanceled, Canceled, Canceled),
	ev(RowExpired, Expired, Expired),
	ev(RowRejected, Rejected, Rejected),
}

// creditBackEvents is the credit-back workflow's transition table.
var creditBackEvents = []fsm.EventDesc{
	ev(Send, Submitted, Requested),
	ev(RowNew, New, Submitted, New),
	ev(RowFilled, Credited, Submitted, New),
	ev(Cancel, Canceling, Submitted, New),
	ev(Cancel, Canceled, Requested),
	ev(RowCanceled, Canceled, Submitted, New, Canceling),
	ev(RowRejected, Rejected, Submitted, New, Canceling),
	ev(Fail, Failed, Requested, Submitted, New, Canceling),
	ev(RowFilled, Credited, Credited),
	ev(RowCanceled, Canceled, Canceled),
	ev(RowRejected, Rejected, Rejected),
}

// orderEvents is the order workflow's transition table. The placement is
// sent once: Send is the only way out of OrderIntent towards the broker, and
// an unknown outcome is settled by the status found under the
// clientOrderId, or as never registered.
var orderEvents = []fsm.EventDesc{
	ev(Send, OrderSent, OrderIntent),
	ev(Cancel, Canceled, OrderIntent), // nothing was sent
	ev(Refuse, Failed, OrderSent),
	// An intent found after a crash may have left: it is looked up too.
	ev(Lost, OrderUnknown, OrderSent, OrderIntent),
	ev(Unregistered, OrderUnregistered, OrderUnknown),
	ev(StatusPending, Pending, OrderSent, OrderUnknown, Pending),
	ev(StatusWorking, OrderWorking, OrderSent, OrderUnknown, Pending, OrderWorking),
	ev(StatusPending, Canceling, Canceling),
	ev(StatusWorking, Canceling, Canceling),
	ev(Cancel, Canceling, Pending, OrderWorking),
	ev(StatusFilled, Filled, OrderSent, OrderUnknown, Pending, OrderWorking, Canceling),
	ev(StatusCanceled, Canceled, OrderSent, OrderUnknown, Pending, OrderWorking, Canceling),
	ev(StatusExpired, Expired, OrderSent, OrderUnknown, Pending, OrderWorking, Canceling),
	ev(StatusRejected, Rejected, OrderSent, OrderUnknown, Pending, OrderWorking, Canceling),
	// The engine gave up (a record that could not be saved): anything that
	// may be at the broker is cancelled there.
	ev(Fail, Failed, OrderIntent, OrderSent, OrderUnknown, Pending, OrderWorking, Canceling),
	// The same status seen again after the end changes nothing.
	ev(StatusFilled, Filled, Filled),
	ev(StatusCanceled, Canceled, Canceled),
	ev(StatusExpired, Expired, Expired),
	ev(StatusRejected, Rejected, Rejected),
}

// Events returns a copy of kind's transition table.
func Events(kind Kind) []fsm.EventDesc {
	switch kind {
	case Locate:
		return slices.Clone(locateEvents)
	case CreditBack:
		return slices.Clone(creditBackEvents)
	case Order:
		return slices.Clone(orderEvents)
	case PriceCheck:
		return slices.Clone(priceCheckEvents)
	}
	return nil
}

// Kinds lists the workflow kinds.
func Kinds() []Kind { return []Kind{Locate, CreditBack, Order, PriceCheck} }

// Quotes reports whether kind's workflows send quotes, and so take the
// quote queue's turns under the broker's one-open-quote-per-symbol and
// same-symbol spacing rules.
func Quotes(kind Kind) bool { return kind == Locate || kind == PriceCheck }

// Initial is the state a kind's workflow is created in: its write-ahead
// record, before anything is sent.
func Initial(kind Kind) State {
	if kind == Order {
		return OrderIntent
	}
	return Requested
}

// All lists every state of kind, initial first, in table order.
func All(kind Kind) []State {
	first := Initial(kind)
	seen := map[State]bool{first: true}
	out := []State{first}
	for _, e := range Events(kind) {
		for _, s := range append(slices.Clone(e.Src), e.Dst) {
			if st := State(s); !seen[st] {
				seen[st] = true
				out = append(out, st)
			}
		}
	}
	return out
}

// Terminal reports whether no event leaves s.
func Terminal(s State) bool {
	switch s {
	case Filled, Declined, Canceled, Expired, Rejected, Failed, Covered, NotNeeded, Credited, OrderUnregistered, Priced:
		return true
	}
	return false
}

// Machine rebuilds kind's FSM at the persisted state current. Machines are
// short-lived: build one per decision, check or fire an event, persist, drop
// it (see docs/design.md on looplab/fsm's stuck-transition pitfalls).
func Machine(kind Kind, current State) (*fsm.FSM, error) {
	evs := Events(kind)
	if evs == nil {
		return nil, fmt.Errorf("states: unknown workflow kind %q", kind)
	}
	return fsm.NewFSM(string(current), evs, nil), nil
}

// Next returns where e takes a kind workflow standing at from. A
// self-transition (the same row seen again) returns from with ok false and
// no error: nothing to persist.
func Next(kind Kind, from State, e Event) (to State, changed bool, err error) {
	m, err := Machine(kind, from)
	if err != nil {
		return from, false, err
	}
	// WithoutCancel: a cancelled ctx mid-transition would leave the machine
	// stuck (upstream issues #101, #115); there are no callbacks to cancel.
	err = m.Event(context.WithoutCancel(context.Background()), string(e))
	var none fsm.NoTransitionError
	if errors.As(err, &none) {
		return from, false, nil
	}
	if err != nil {
		return from, false, &TransitionError{Kind: kind, From: from, Event: e, Err: err}
	}
	return State(m.Current()), true, nil
}

// TransitionError is an event the table does not allow from a state.
type TransitionError struct {
	Kind  Kind
	From  State
	Event Event
	Err   error
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("states: %s workflow cannot take %q from %q", e.Kind, e.Event, e.From)
}

// Unwrap returns looplab's error.
func (e *TransitionError) Unwrap() error { return e.Err }

// Mermaid renders kind's machine as a Mermaid state diagram.
func Mermaid(kind Kind) string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", Initial(kind))
	for _, t := range edges(kind) {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", t.from, t.to, t.event)
	}
	for _, s := range All(kind) {
		if Terminal(s) {
			fmt.Fprintf(&b, "    %s --> [*]\n", s)
		}
	}
	return b.String()
}

// Dot renders kind's machine as a Graphviz digraph.
func Dot(kind Kind) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n    rankdir=LR;\n", kind)
	for _, s := range All(kind) {
		shape := "ellipse"
		if Terminal(s) {
			shape = "doublecircle"
		}
		fmt.Fprintf(&b, "    %q [shape=%s];\n", s, shape)
	}
	for _, t := range edges(kind) {
		fmt.Fprintf(&b, "    %q -> %q [label=%q];\n", t.from, t.to, t.event)
	}
	b.WriteString("}\n")
	return b.String()
}

type edge struct{ from, to, event string }

// edges lists the table's transitions, self-loops omitted, in a stable order.
func edges(kind Kind) []edge {
	var out []edge
	for _, e := range Events(kind) {
		for _, src := range e.Src {
			if src != e.Dst {
				out = append(out, edge{src, e.Dst, e.Name})
			}
		}
	}
	order := map[State]int{}
	for i, s := range All(kind) {
		order[s] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		return order[State(out[i].from)] < order[State(out[j].from)]
	})
	return out
}
