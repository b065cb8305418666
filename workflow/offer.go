package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
)

// candidate is one priced leg with whether the policy allows it and why not.
type candidate struct {
	id     string
	leg    Leg
	total  decimal.Decimal
	reason string // empty when within policy
}

// candidates lists the legs of w that keep says are on offer, cheapest
// first (the primary id before .SU at equal prices, for a stable choice),
// judged by its policy. Spec "Short locates" rule 2: a Reg SHO pair offers
// two priced sides, or one; an unpriced side is no candidate.
func candidates(w *Workflow, keep func(Leg) bool) []candidate {
	var out []candidate
	for id, l := range w.Legs {
		if !keep(l) || !l.Price.IsPositive() {
			continue
		}
		c := candidate{id: id, leg: l, total: l.Price.Mul(decimal.NewFromInt(w.Quantity))}
		p := w.Policy
		switch {
		case l.Type == brokercode.TypeCodeSingleUse && !p.AllowSingleUse:
			c.reason = "SingleUse side not allowed (it cannot be credited back once used; pass --allow-single-use)"
		case p.MaxPrice.IsPositive() && l.Price.GreaterThan(p.MaxPrice):
			c.reason = fmt.Sprintf("price %s above the cap %s per share", l.Price, p.MaxPrice)
		case p.MaxCost.IsPositive() && c.total.GreaterThan(p.MaxCost):
			c.reason = fmt.Sprintf("total %s above the cap %s", c.total.StringFixed(2), p.MaxCost)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if c := a.leg.Price.Cmp(b.leg.Price); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// Choose returns the offer the policy would take (within is true), or the
// cheapest one when none is within policy, with the reason it is refused
// (for display and for the decline). It returns nil when no leg is priced.
func Choose(w *Workflow) (o *Offer, within bool, reason string) {
	return choose(w, func(l Leg) bool { return l.Status == brokercode.LocateStatusOffered })
}

// Sides lists the offers of w a person may choose between: every leg on
// offer that its policy allows, cheapest first. Spec "Short locates" rule
// 2: a Reg SHO pair offers two priced sides; with SingleUse allowed both
// are choices (one can be credited back, the other is cheaper).
func Sides(w *Workflow) []Offer {
	var out []Offer
	for _, c := range candidates(w, func(l Leg) bool { return l.Status == brokercode.LocateStatusOffered }) {
		if c.reason == "" {
			out = append(out, Offer{WorkflowID: w.ID, Symbol: w.Symbol, QuoteReqID: c.id, LocateType: c.leg.Type,
				Price: c.leg.Price, Shares: w.Quantity, Total: c.total, ExpiresAt: w.ExpiresAt})
		}
	}
	return out
}

// Offered is the offer w was put to whoever decided it, the one definition
// of the price and side a locate was offered at that status, the
// dashboard and the reports show: the leg accepted, once one was; else the
// leg Choose takes among those priced, which are the legs on offer while
// the offer is open and, once it ended (declined, expired, cancelled),
// every leg the broker priced (a price is set at Offered and stays), so a
// declined Reg SHO pair keeps the side it was offered, not the other one.
// For a credit-back it is its history row's price. Nil when the broker
// never priced it.
func Offered(w *Workflow) *Offer {
	if w.Price.IsPositive() {
		// The type is the accepted leg's (0, unknown, on a record that
		// kept no legs).
		return &Offer{WorkflowID: w.ID, Symbol: w.Symbol, QuoteReqID: w.AcceptedID, LocateType: w.Legs[w.AcceptedID].Type,
			Price: w.Price, Shares: w.Quantity, Total: w.Total(), ExpiresAt: w.ExpiresAt}
	}
	if w.State == states.Offered {
		o, _, _ := Choose(w)
		return o
	}
	o, _, _ := choose(w, func(Leg) bool { return true })
	return o
}

func choose(w *Workflow, keep func(Leg) bool) (o *Offer, within bool, reason string) {
	cs := candidates(w, keep)
	if len(cs) == 0 {
		return nil, false, "no priced offer"
	}
	pick := cs[0]
	for _, c := range cs {
		if c.reason == "" {
			pick = c
			break
		}
	}
	return &Offer{WorkflowID: w.ID, Symbol: w.Symbol, QuoteReqID: pick.id, LocateType: pick.leg.Type,
		Price: pick.leg.Price, Shares: w.Quantity, Total: pick.total, ExpiresAt: w.ExpiresAt}, pick.reason == "", pick.reason
}

// RegSHOSide names the side of a Reg SHO pair o is (spec "Short locates"
// rule 2: the id is the PreBorrow side, id.SU the SingleUse side), as a
// person reads it; empty for a symbol off the threshold list.
func (o Offer) RegSHOSide() string {
	switch {
	case strings.HasSuffix(o.QuoteReqID, ".SU"):
		return "SingleUse (.SU)"
	case o.LocateType == brokercode.TypeCodePreBorrow:
		return "PreBorrow"
	}
	return ""
}

// Prices lists every priced leg of w (both sides of a Reg SHO pair, when
// both were priced), the primary id before .SU, at w's quantity: the
// offers a price check saw, whatever became of them since.
func Prices(w *Workflow) []Offer {
	var out []Offer
	for id, l := range w.Legs {
		if l.Price.IsPositive() {
			out = append(out, Offer{WorkflowID: w.ID, Symbol: w.Symbol, QuoteReqID: id, LocateType: l.Type,
				Price: l.Price, Shares: w.Quantity, Total: l.Price.Mul(decimal.NewFromInt(w.Quantity)), ExpiresAt: w.ExpiresAt})
		}
	}
	slices.SortFunc(out, func(a, b Offer) int { return strings.Compare(a.QuoteReqID, b.QuoteReqID) })
	return out
}
