package engine

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
)

// onRows takes the new or changed history rows of one workflow from the
// poller (both legs of a Reg SHO pair together) and moves it.
func (e *Engine) onRows(rows []brokerclient.HistoryRow) {
	e.mu.Lock()
	w := e.active[e.byQuote[rows[0].BaseID()]]
	var declining string
	if w != nil {
		declining = e.declining[w.ID]
	}
	e.mu.Unlock()
	if w == nil {
		return
	}
	legs := make(map[string]store.Leg, len(w.Legs)+len(rows))
	for k, v := range w.Legs {
		legs[k] = v
	}
	for _, r := range rows {
		legs[r.QuoteReqID] = store.Leg{Status: int(r.LocateStatus), Price: r.LocatePrice, Type: r.LocateType,
			Shares: r.LocateShares, Text: r.TextValue(), Error: r.LocateError}
	}
	row := rows[len(rows)-1] // the base row sorts first in history; the latest change is last
	for _, r := range rows {
		if r.UpdatedDate.After(row.UpdatedDate.Time) {
			row = r
		}
	}

	var ev states.Event
	var accepted string
	if w.Kind == states.CreditBack {
		ev, _ = states.EventForStatus(int(row.LocateStatus))
	} else {
		ev, accepted = legEvent(w, legs)
		if _, _, err := states.Next(w.Kind, w.State, states.Decline); declining != "" && ev == states.RowCanceled && err == nil {
			// Our own cancel of a declined offer, seen before the decline
			// was recorded: it is the decline.
			ev = states.Decline
		}
	}
	to := w.State
	if ev != "" {
		next, _, err := states.Next(w.Kind, w.State, ev)
		if err != nil {
			e.log.Warn("history row does not fit the workflow; recorded, state kept", "id", w.ID, "state", w.State, "event", ev)
			ev = ""
		} else {
			to = next
		}
	}
	now := e.clock.Now()
	offeredAt, expiresAt := w.OfferedAt, w.ExpiresAt
	if (to == states.Offered || to == states.Pending) && expiresAt.IsZero() {
		offeredAt = now
		if t := row.UpdatedDate.Time; !row.UpdatedDate.NoZone && !t.IsZero() && t.Before(now) {
			offeredAt = t // the window began when the broker offered, not when we looked
		}
		expiresAt = offeredAt.Add(e.cfg.OfferWindow)
	}
	reason := rowReason(rows, ev)
	if ev == states.Decline {
		reason = declining
	}
	change := store.Change{To: to, Event: ev, RawRow: rawJSON(rows), Reason: reason,
		Apply: func(s *store.Workflow) {
			s.Legs = legs
			s.OfferedAt, s.ExpiresAt = offeredAt, expiresAt
			if accepted != "" && s.AcceptedID == "" {
				s.AcceptedID = accepted
				s.Price = legs[accepted].Price
				s.LocateType = string(brokerclient.LocateTypeForCode(legs[accepted].Type))
			}
		}}
	var offer *Offer
	if to == states.Offered && w.State != states.Offered {
		view := *w
		view.ExpiresAt = expiresAt
		offer = e.bestOffer(&view, legs)
	}
	if ev == "" && sameLegs(w.Legs, legs) {
		return
	}
	saved, err := e.apply(w, change, offer)
	if err != nil {
		e.log.Warn("row not applied", "id", w.ID, "err", err)
		return
	}
	switch saved.State {
	case states.Offered:
		// Decided on the poller's goroutine: the accept leaves before the
		// next poll, and nothing else moves this workflow meanwhile.
		e.decide(saved.ID)
	case states.Filled, states.Credited, states.Canceled:
		e.poll.RefreshInventory()
	}
}

// legEvent derives the workflow's event from its legs' statuses. After an
// accept only the accepted leg counts: the sibling's expiry is expected.
func legEvent(w *store.Workflow, legs map[string]store.Leg) (states.Event, string) {
	if w.AcceptedID != "" {
		switch legs[w.AcceptedID].Status {
		case 50:
			return states.RowFilled, ""
		case 67:
			return states.RowExpired, ""
		case 52:
			return states.RowCanceled, ""
		case 56:
			return states.RowRejected, ""
		}
		return "", ""
	}
	count := map[int]int{}
	filled := ""
	for id, l := range legs {
		count[l.Status]++
		if l.Status == 50 {
			filled = id
		}
	}
	n := len(legs)
	switch {
	case count[50] > 0:
		return states.RowFilled, filled // accepted elsewhere (or before a crash)
	case count[52] > 0:
		return states.RowCanceled, ""
	case count[65] > 0:
		return states.RowOffered, ""
	case count[56] == n:
		return states.RowRejected, ""
	case count[56]+count[67] == n:
		return states.RowExpired, ""
	case count[54] > 0:
		return states.RowPending, ""
	case count[81] > 0:
		return states.RowQuoting, ""
	}
	return "", ""
}

func sameLegs(a, b map[string]store.Leg) bool {
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

// rowReason is the broker's text behind an ending event.
func rowReason(rows []brokerclient.HistoryRow, ev states.Event) string {
	switch ev {
	case states.RowRejected, states.RowExpired, states.RowCanceled:
		for _, r := range rows {
			if t := r.TextValue(); t != "" {
				return t
			}
		}
		return rows[0].LocateStatus.String()
	}
	return ""
}

// candidate is one priced leg with whether the policy allows it and why not.
type candidate struct {
	id     string
	leg    store.Leg
	total  decimal.Decimal
	reason string // empty when within policy
}

// candidates lists the offered legs, cheapest first, judged by the policy.
func candidates(w *store.Workflow, legs map[string]store.Leg) []candidate {
	var out []candidate
	for id, l := range legs {
		if l.Status != 65 || !l.Price.IsPositive() {
			continue
		}
		c := candidate{id: id, leg: l, total: l.Price.Mul(decimal.NewFromInt(w.Quantity))}
		p := w.Policy
		switch {
		case l.Type == 4 && !p.AllowSingleUse:
			c.reason = "SingleUse side not allowed (it cannot be credited back once used; pass --allow-single-use)"
		case p.MaxPrice.IsPositive() && l.Price.GreaterThan(p.MaxPrice):
			c.reason = fmt.Sprintf("price %s above the cap %s per share", l.Price, p.MaxPrice)
		case p.MaxCost.IsPositive() && c.total.GreaterThan(p.MaxCost):
			c.reason = fmt.Sprintf("total %s above the cap %s", c.total.StringFixed(2), p.MaxCost)
		}
		out = append(out, c)
	}
	// cheapest first, then the primary id before .SU for a stable choice
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && less(out[j], out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func less(a, b candidate) bool {
	if !a.leg.Price.Equal(b.leg.Price) {
		return a.leg.Price.LessThan(b.leg.Price)
	}
	return a.id < b.id
}

// bestOffer is the offer the engine would take, or the cheapest one when
// none is within policy (for display).
func (e *Engine) bestOffer(w *store.Workflow, legs map[string]store.Leg) *Offer {
	cs := candidates(w, legs)
	if len(cs) == 0 {
		return nil
	}
	pick := cs[0]
	for _, c := range cs {
		if c.reason == "" {
			pick = c
			break
		}
	}
	return &Offer{WorkflowID: w.ID, Symbol: w.Symbol, QuoteReqID: pick.id, LocateType: pick.leg.Type,
		Price: pick.leg.Price, Shares: w.Quantity, Total: pick.total, ExpiresAt: w.ExpiresAt}
}

// decide takes an offered workflow to accept or decline under its policy,
// asking when the policy says to ask.
func (e *Engine) decide(id string) {
	e.mu.Lock()
	w := e.active[id]
	asking := e.deciding[id]
	e.mu.Unlock()
	if w == nil || w.State != states.Offered || asking {
		return
	}

	cs := candidates(w, w.Legs)
	var pick *candidate
	for i := range cs {
		if cs[i].reason == "" {
			pick = &cs[i]
			break
		}
	}
	if pick == nil {
		reason := "no offer within policy"
		if len(cs) > 0 {
			reason = cs[0].reason
		}
		e.decline(w, reason)
		return
	}
	offer := Offer{WorkflowID: w.ID, Symbol: w.Symbol, QuoteReqID: pick.id, LocateType: pick.leg.Type,
		Price: pick.leg.Price, Shares: w.Quantity, Total: pick.total, ExpiresAt: w.ExpiresAt}
	if w.Policy.AutoAccept {
		e.accept(w, offer)
		return
	}
	if e.cfg.Ask == nil {
		e.decline(w, "the policy asks for confirmation and nobody can answer")
		return
	}
	// Asking takes a person's time: do it off the poller's goroutine, which
	// must keep polling while the window runs.
	e.mu.Lock()
	e.deciding[id] = true
	e.mu.Unlock()
	go e.ask(w, offer)
}

// ask puts the offer to the user and acts on the answer, if the answer comes
// while an accept can still land.
func (e *Engine) ask(w *store.Workflow, offer Offer) {
	id := w.ID
	defer func() {
		e.mu.Lock()
		delete(e.deciding, id)
		e.mu.Unlock()
	}()
	ctx, cancel := clock.WithDeadline(e.ctxOrBackground(), e.clock, w.ExpiresAt.Add(-e.cfg.AcceptMargin))
	ok := e.cfg.Ask(ctx, offer)
	late := ctx.Err() != nil
	cancel()
	if w = e.get(id); w == nil || w.State != states.Offered {
		return // it ended while we asked (expired, cancelled)
	}
	switch {
	case late:
		e.decline(w, "no answer while an accept could still land")
		return
	case !ok:
		e.decline(w, "declined at the prompt")
		return
	}
	e.accept(w, offer)
}

// accept persists the choice of leg, then sends the accept, unless it could
// not land before the window closes.
func (e *Engine) accept(w *store.Workflow, o Offer) {
	if left := w.ExpiresAt.Sub(e.clock.Now()); left < e.cfg.AcceptMargin {
		e.log.Warn("offer window too close to its end; not accepting", "id", w.ID, "left", left)
		return // the broker expires it (67), or checkTimers does
	}
	saved, err := e.apply(w, store.Change{To: states.Accepting, Event: states.Accept,
		Reason: fmt.Sprintf("accept %s at %s × %d = %s", o.QuoteReqID, o.Price, o.Shares, o.Total.StringFixed(2)),
		Apply: func(s *store.Workflow) {
			s.AcceptedID, s.Price = o.QuoteReqID, o.Price
			s.LocateType = string(brokerclient.LocateTypeForCode(o.LocateType))
		}}, nil)
	if err != nil {
		e.log.Warn("accept not recorded; not sending", "id", w.ID, "err", err)
		return
	}
	e.sendAccept(saved)
}

func (e *Engine) sendAccept(w *store.Workflow) {
	if _, _, err := e.client.Locates.Accept(e.ctxOrBackground(), e.cfg.Account, w.AcceptedID); err != nil {
		e.log.Warn("accept failed; history will tell", "id", w.ID, "err", err)
	}
	e.poll.Wrote()
}

// decline cancels the offer (both sides of a pair), so it does not linger
// until it expires, then records the refusal. The cancel goes first: it is
// safe to repeat, and a crash in between leaves the workflow offered, to be
// decided (and cancelled) again on recovery.
func (e *Engine) decline(w *store.Workflow, reason string) {
	e.mu.Lock()
	e.declining[w.ID] = reason
	e.mu.Unlock()
	e.sendCancel(w)
	if cur := e.get(w.ID); cur != nil && cur.State == w.State {
		e.apply(cur, store.Change{To: states.Declined, Event: states.Decline, Reason: reason}, nil)
	}
}

// checkTimers runs after each history poll: a quote or sell whose row never
// appeared fails (it is never re-sent), and an offer or pending quote past
// its window with no final row expires.
func (e *Engine) checkTimers() {
	now := e.clock.Now()
	for _, w := range e.snapshot() {
		switch {
		case (w.State == states.Quoting || w.State == states.Submitted) && len(w.Legs) == 0 &&
			!w.SentAt.IsZero() && now.Sub(w.SentAt) > e.cfg.SettleGrace:
			e.apply(w, store.Change{To: states.Failed, Event: states.Fail,
				Reason: fmt.Sprintf("no history row %s after sending; not re-sent", e.cfg.SettleGrace)}, nil)
		case (w.State == states.Offered || w.State == states.Accepting || w.State == states.Pending) &&
			!w.ExpiresAt.IsZero() && now.After(w.ExpiresAt.Add(e.cfg.SettleGrace)):
			e.apply(w, store.Change{To: states.Expired, Event: states.Timeout, Reason: "offer window closed without a final history row"}, nil)
		}
	}
}
