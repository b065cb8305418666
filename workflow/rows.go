package workflow

// The step on a workflow's history rows: its legs merged, the event they
// make, the offer window, and a quote thought lost that turned up late.

import (
	"cmp"
	"strings"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
)

// baseID is a leg's quote id without the .SU of a Reg SHO shadow row.
func baseID(leg string) string { return strings.TrimSuffix(leg, ".SU") }

// lostRows handles the history rows of a quote thought lost that turned up
// late, open at the broker (spec "Locate limits": one open quote per
// symbol). Before the quote to send in its place has left, it was only
// late: it is taken and nothing else is sent. After, it is taken when it
// is offered (or filled) before the other was, and the other is cancelled;
// otherwise it is cancelled.
func lostRows(w *Workflow, in Rows, env Env) Step {
	ev := legEvent(&Workflow{}, in.Legs)
	switch {
	case ev != states.RowQuoting && ev != states.RowPending && ev != states.RowOffered && ev != states.RowFilled:
		return Step{} // it ended at the broker
	case w.State == states.Requoting:
		return adopt(w, in, env)
	case (ev == states.RowOffered || ev == states.RowFilled) && (w.State == states.Quoting || w.State == states.Pending):
		return adopt(w, in, env)
	}
	return Step{Effects: cancelLost(w)}
}

// adopt takes the quote thought lost as the workflow's quote: the one sent
// in its place, if it left, becomes the one to cancel.
func adopt(w *Workflow, in Rows, env Env) Step {
	a := w.clone()
	a.QuoteReqID, a.LostQuoteReqID, a.Legs = w.LostQuoteReqID, w.QuoteReqID, nil
	reason := "the quote thought lost turned up late, before its replacement left: taking it"
	var cancel []Effect
	if w.State == states.Requoting {
		a.LostQuoteReqID = "" // its replacement never left
	} else {
		cancel = []Effect{SendCancel{QuoteReqID: w.QuoteReqID}}
		reason = "the quote thought lost turned up offered first: taking it, cancelling " + w.QuoteReqID
	}
	var asked int64
	for _, l := range in.Legs {
		asked = max(asked, l.Shares)
	}
	if asked > 0 {
		a.Quantity = asked // what the lost quote asked for
	}
	s := rows(a, in, env)
	if s.Err != nil || s.Transition == nil {
		return s
	}
	s.Next.Reason, s.Transition.Reason = reason, reason
	s.Effects = append(cancel, s.Effects...)
	return s
}

// rows moves a workflow on its history rows.
func rows(w *Workflow, in Rows, env Env) Step {
	if w.LostQuoteReqID != "" && baseID(in.Latest) == w.LostQuoteReqID {
		return lostRows(w, in, env)
	}
	legs := mergeLegs(w, in)
	ev := rowEvent(w, legs, in.Latest)
	if ev == "" && sameLegs(w.Legs, legs) {
		return Step{}
	}
	edit := func(n *Workflow) {
		n.Legs = legs
		if w.Kind == states.Locate && w.AcceptedID == "" {
			if id, ok := filledLeg(legs); ok { // accepted elsewhere, or before a crash
				n.AcceptedID, n.Price, n.LocateType = id, legs[id].Price, string(brokercode.LocateTypeForCode(legs[id].Type))
			}
		}
	}
	var s Step
	if ev == "" {
		s = Step{Next: w.clone()}
		edit(s.Next)
	} else {
		reason := rowReason(legs, in.Latest, ev)
		if w.Cause != "" {
			reason = "" // ended by a person, the policy or the asker: their words stay
		}
		s = move(w, ev, reason, edit)
		if s.Err != nil {
			return s
		}
	}
	return afterRows(s, in, env)
}

// mergeLegs is the workflow's legs updated by the rows' legs.
func mergeLegs(w *Workflow, in Rows) map[string]Leg {
	legs := make(map[string]Leg, len(w.Legs)+len(in.Legs))
	for k, v := range w.Legs {
		legs[k] = v
	}
	for k, v := range in.Legs {
		if old := legs[k]; w.Kind == states.PriceCheck && v.Price.IsZero() && old.Price.IsPositive() {
			// The price seen is what a price check is for: a later row
			// (its cancel) that carries none keeps it, and its type.
			v.Price, v.Type = old.Price, cmp.Or(v.Type, old.Type)
		}
		legs[k] = v
	}
	return legs
}

// rowEvent is the event the legs make of the workflow's state, "" when
// they make none or one its table refuses from here.
func rowEvent(w *Workflow, legs map[string]Leg, latest string) states.Event {
	var ev states.Event
	if w.Kind == states.CreditBack {
		ev, _ = states.EventForStatus(legs[latest].Status)
	} else {
		ev = legEvent(w, legs)
	}
	switch w.State {
	case states.Declining, states.Declined, states.Releasing, states.Priced:
		if ev == states.RowCanceled || ev == states.RowExpired {
			ev = states.Confirm // our own cancel of the declined or priced offer, or its lapse
		}
	}
	if ev != "" {
		if _, _, err := states.Next(w.Kind, w.State, ev); err != nil {
			ev = "" // the row does not fit: recorded, state kept
		}
	}
	return ev
}

// afterRows completes a step on rows: the offer window opens, and an
// offer, a price seen or an end brings its follow-up.
func afterRows(s Step, in Rows, env Env) Step {
	n := s.Next
	// The window runs from when the quote reached Offered (spec "Locate
	// limits"); a Pending quote gets one too, so that it cannot wait for
	// ever.
	if (n.State == states.Pending && n.ExpiresAt.IsZero()) || (s.Transition != nil && (s.Transition.To == states.Offered || s.Transition.To == states.Releasing)) {
		n.OfferedAt = env.Now
		if t := in.OfferedAt; !t.IsZero() && t.Before(env.Now) {
			n.OfferedAt = t // the window began when the broker offered, not when we looked
		}
		n.ExpiresAt = n.OfferedAt.Add(env.Rules.OfferWindow)
	}
	if s.Transition != nil {
		s.Transition.Raw = in.Raw
		switch s.Transition.To {
		case states.Offered:
			s.Offer, _, _ = Choose(n)
			s.Then = Decide{}
		case states.Releasing:
			// A price check's offer is seen, never taken: cancelled at once
			// (both legs of a Reg SHO pair).
			n.Reason = "price seen; the quote is cancelled at once (a price check never accepts)"
			s.Transition.Reason = n.Reason
			s.Offer, _, _ = Choose(n)
			s.Effects = append(s.Effects, SendCancel{})
		case states.Filled, states.Credited, states.Canceled:
			s.Effects = append(s.Effects, RefreshInventory{})
		}
	}
	return s
}

// legEvent derives a locate's event from its legs. After an accept only the
// accepted leg counts: the sibling's expiry is expected.
func legEvent(w *Workflow, legs map[string]Leg) states.Event {
	if w.AcceptedID != "" {
		switch st := legs[w.AcceptedID].Status; st {
		case brokercode.LocateStatusFilled, brokercode.LocateStatusExpired, brokercode.LocateStatusCanceled, brokercode.LocateStatusRejected:
			ev, _ := states.EventForStatus(st)
			return ev
		}
		return ""
	}
	count := map[brokercode.LocateStatus]int{}
	for _, l := range legs {
		count[l.Status]++
	}
	n := len(legs)
	switch {
	case count[brokercode.LocateStatusFilled] > 0:
		return states.RowFilled
	case count[brokercode.LocateStatusCanceled] > 0:
		return states.RowCanceled
	case count[brokercode.LocateStatusOffered] > 0:
		return states.RowOffered
	case n > 0 && count[brokercode.LocateStatusRejected] == n:
		return states.RowRejected
	case n > 0 && count[brokercode.LocateStatusRejected]+count[brokercode.LocateStatusExpired] == n:
		return states.RowExpired
	case count[brokercode.LocateStatusPending] > 0:
		return states.RowPending
	case count[brokercode.LocateStatusQuoting] > 0:
		return states.RowQuoting
	}
	return ""
}

func filledLeg(legs map[string]Leg) (string, bool) {
	for id, l := range legs {
		if l.Status == brokercode.LocateStatusFilled {
			return id, true
		}
	}
	return "", false
}

func sameLegs(a, b map[string]Leg) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Status != w.Status || !v.Price.Equal(w.Price) || v.Text != w.Text || v.Shares != w.Shares {
			return false
		}
	}
	return true
}

// rowReason is the broker's text behind an ending event. A confirmed
// decline keeps the decline's reason.
func rowReason(legs map[string]Leg, latest string, ev states.Event) string {
	switch ev {
	case states.RowRejected, states.RowExpired, states.RowCanceled:
		if t := legs[latest].Text; t != "" {
			return t
		}
		for _, l := range legs {
			if l.Text != "" {
				return l.Text
			}
		}
		return "locate status " + legs[latest].Status.String()
	}
	return ""
}
