package workflow

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
)

// OrderInput is something that happens to an order.
type OrderInput interface{ orderInput() }

// OrderSend: the order's turn to be placed (its intent is recorded).
type OrderSend struct{}

// OrderSeen: the broker's record of the order, from the placement's answer,
// a lookup, or a stream push.
type OrderSeen struct {
	// ClientOrderID is the id in the broker's record (R118 rewrites it).
	ClientOrderID string
	Status        brokercode.OrderStatus
	Executed      int64
	PriceAvg      decimal.Decimal
	Route         string
	Code          string // rejection code parsed from the text
	Text          string
	// At is the broker's lastUpdated of the record, on its clock; zero
	// when it sent none with a zone.
	At time.Time
}

// OrderRefused: the broker answered the placement with an error status.
type OrderRefused struct{ Reason string }

// OrderLost: the placement's answer never came, or a crash left an intent:
// settled by a lookup under the clientOrderId.
type OrderLost struct{ Reason string }

// OrderNotFound: a lookup found no order under the id.
type OrderNotFound struct{}

// OrderUnseen: a lookup or a cancel brought no record of the order (the
// request failed, or the stream stayed quiet): look again.
type OrderUnseen struct{}

// OrderCancelAsked: the user asked to cancel the order.
type OrderCancelAsked struct{}

// OrderResume: re-drive a recovered order.
type OrderResume struct{}

// Abandon (a record that cannot be saved, say) is an order input too.
func (Abandon) orderInput() {}

func (OrderSend) orderInput()        {}
func (OrderSeen) orderInput()        {}
func (OrderRefused) orderInput()     {}
func (OrderLost) orderInput()        {}
func (OrderNotFound) orderInput()    {}
func (OrderUnseen) orderInput()      {}
func (OrderCancelAsked) orderInput() {}
func (OrderResume) orderInput()      {}

// PlaceOrder places the order under its clientOrderId (once).
type PlaceOrder struct{}

// LookupOrder looks the order up under its id until it is final or working.
type LookupOrder struct{}

// CancelOrder cancels the working order at the broker.
type CancelOrder struct{}

func (PlaceOrder) effect()  {}
func (LookupOrder) effect() {}
func (CancelOrder) effect() {}

// OrderStep is what the order step decided; see Step.
type OrderStep struct {
	Next       *Order
	Transition *Transition
	Effects    []Effect
	Err        error
}

// StepOrder is the pure step of an order: its record, the input and the time
// give the transition and the effects. The placement is sent once; an
// unknown outcome is only ever looked up.
func StepOrder(o *Order, in OrderInput, now time.Time) OrderStep {
	switch in := in.(type) {
	case OrderSend:
		return moveOrder(o, states.Send, "", func(n *Order) { n.SentAt = now }, PlaceOrder{})
	case OrderSeen:
		ev, ok := states.EventForOrderStatus(in.Status)
		if !ok {
			return OrderStep{Err: fmt.Errorf("order %s: unknown orderStatus %q", o.ClientOrderID, in.Status)}
		}
		var follow []Effect
		if in.Status == brokercode.OrderStatusPendingNew {
			follow = []Effect{LookupOrder{}} // its fate comes in milliseconds
		}
		s := moveOrder(o, ev, "", func(n *Order) { seen(n, in) }, follow...)
		if s.Err == nil && s.Next != nil && s.Transition == nil && sameOrder(o, s.Next) {
			s.Next = nil // nothing new
		}
		return s
	case OrderRefused:
		return moveOrder(o, states.Refuse, "the broker refused the placement: "+in.Reason, nil)
	case OrderLost:
		return moveOrder(o, states.Lost, in.Reason, nil, LookupOrder{})
	case OrderNotFound:
		switch o.State {
		case states.OrderUnknown:
			return moveOrder(o, states.Unregistered, "it never reached the broker: its answer was lost and no order is under its id", nil)
		case states.OrderSent, states.Pending:
			return OrderStep{Effects: []Effect{LookupOrder{}}} // not registered yet: look again
		}
		return OrderStep{} // settled already; a 404 now tells nothing new
	case OrderUnseen:
		if o.Terminal() {
			return OrderStep{}
		}
		return OrderStep{Effects: []Effect{LookupOrder{}}}
	case OrderCancelAsked:
		switch o.State {
		case states.OrderIntent:
			return moveOrder(o, states.Cancel, "cancelled before sending", nil)
		case states.Pending, states.OrderWorking:
			return moveOrder(o, states.Cancel, "cancel requested", nil, CancelOrder{})
		}
		return OrderStep{Err: fmt.Errorf("%w: order %s is %s and cannot be cancelled now", ErrNotOpen, o.ClientOrderID, o.State)}
	case Abandon:
		var cancel []Effect
		if o.State != states.OrderIntent {
			cancel = []Effect{CancelOrder{}} // leave nothing working at the broker
		}
		return moveOrder(o, states.Fail, in.Reason, nil, cancel...)
	case OrderResume:
		switch o.State {
		case states.OrderIntent, states.OrderSent:
			return moveOrder(o, states.Lost, "left unanswered by an earlier run", nil, LookupOrder{})
		case states.OrderUnknown, states.Pending:
			return OrderStep{Effects: []Effect{LookupOrder{}}}
		case states.Canceling:
			return OrderStep{Effects: []Effect{CancelOrder{}}}
		}
		return OrderStep{}
	}
	return OrderStep{Err: fmt.Errorf("workflow: unknown order input %T", in)}
}

// moveOrder makes an order's transition (see transition); edit may change
// fields even when the state stays.
func moveOrder(o *Order, ev states.Event, reason string, edit func(*Order), effects ...Effect) OrderStep {
	to, tr, err := transition(states.Order, o.State, ev, reason)
	if err != nil {
		return OrderStep{Err: err}
	}
	n := *o
	if edit != nil {
		edit(&n)
	}
	n.State, n.Reason = to, reasonAfter(n.Reason, tr)
	return OrderStep{Next: &n, Transition: tr, Effects: effects}
}

// seen copies the broker's record into the order.
func seen(n *Order, in OrderSeen) {
	if in.ClientOrderID != "" && in.ClientOrderID != n.ClientOrderID {
		n.BrokerOrderID = in.ClientOrderID // spec: use the id answered
	}
	if in.Executed != n.Executed {
		n.ExecutedAt = in.At
	}
	n.OrderStatus, n.Executed, n.PriceAvg = string(in.Status), in.Executed, in.PriceAvg
	if n.Route == "" {
		n.Route = in.Route // paper assigns one when none was sent
	}
	if in.Code != "" {
		n.Code = in.Code
	}
	if in.Text != "" {
		n.Text = in.Text
	}
}

func sameOrder(a, b *Order) bool {
	return a.OrderStatus == b.OrderStatus && a.Executed == b.Executed && a.PriceAvg.Equal(b.PriceAvg) &&
		a.BrokerOrderID == b.BrokerOrderID && a.Route == b.Route && a.Code == b.Code && a.Text == b.Text
}
