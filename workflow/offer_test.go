package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// TestChoose checks the choice between a quote's offered legs (spec "Short
// locates" rule 2) under the cost policy.
func TestChoose(t *testing.T) {
	t.Parallel()
	const pb, su, loc = brokercode.TypeCodePreBorrow, brokercode.TypeCodeSingleUse, brokercode.TypeCodeLocate
	expires := t0.Add(29 * time.Second)
	offer := func(leg string, typ int, price, total string) *workflow.Offer {
		return &workflow.Offer{WorkflowID: "wf-1", Symbol: "HTBX", QuoteReqID: leg, LocateType: typ,
			Price: dec(price), Shares: 200, Total: dec(total), ExpiresAt: expires}
	}
	cases := []struct {
		name   string
		legs   legs
		policy workflow.Policy
		want   *workflow.Offer
		within bool
		reason string // substring; "" when within
	}{
		{name: "single leg within no policy", legs: legs{"Q1": offeredLeg("0.05", loc)},
			want: offer("Q1", loc, "0.05", "10"), within: true},
		{name: "rule 2: SingleUse cheaper, allowed: SingleUse", legs: legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			policy: workflow.Policy{AllowSingleUse: true}, want: offer("Q1.SU", su, "0.04", "8"), within: true},
		{name: "rule 2: SingleUse cheaper, not allowed: PreBorrow", legs: legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			want: offer("Q1", pb, "0.06", "12"), within: true},
		{name: "rule 2: equal prices: the primary id first", legs: legs{"Q1.SU": offeredLeg("0.05", su), "Q1": offeredLeg("0.05", pb)},
			policy: workflow.Policy{AllowSingleUse: true}, want: offer("Q1", pb, "0.05", "10"), within: true},
		{name: "rule 2: only SingleUse priced, not allowed: shown, refused", legs: legs{"Q1": pendingLeg(pb), "Q1.SU": offeredLeg("0.04", su)},
			want: offer("Q1.SU", su, "0.04", "8"), reason: "--allow-single-use"},
		{name: "rule 2: an unpriced offered leg is no candidate", legs: legs{"Q1": {Status: brokercode.LocateStatusOffered, Type: pb}, "Q1.SU": offeredLeg("0.04", su)},
			policy: workflow.Policy{AllowSingleUse: true}, want: offer("Q1.SU", su, "0.04", "8"), within: true},
		{name: "a leg no longer offered is no candidate", legs: legs{"Q1": filledLeg("0.03", pb), "Q1.SU": offeredLeg("0.04", su)},
			policy: workflow.Policy{AllowSingleUse: true}, want: offer("Q1.SU", su, "0.04", "8"), within: true},
		{name: "no leg priced: nil", legs: legs{"Q1": pendingLeg(pb), "Q1.SU": pendingLeg(su)}, reason: "no priced offer"},
		{name: "no legs: nil", legs: nil, reason: "no priced offer"},
		{name: "price cap: inclusive", legs: legs{"Q1": offeredLeg("0.05", loc)}, policy: workflow.Policy{MaxPrice: dec("0.05")},
			want: offer("Q1", loc, "0.05", "10"), within: true},
		{name: "price cap: above", legs: legs{"Q1": offeredLeg("0.05", loc)}, policy: workflow.Policy{MaxPrice: dec("0.0499")},
			want: offer("Q1", loc, "0.05", "10"), reason: "price 0.05 above the cap 0.0499 per share"},
		{name: "cost cap: inclusive", legs: legs{"Q1": offeredLeg("0.05", loc)}, policy: workflow.Policy{MaxCost: dec("10")},
			want: offer("Q1", loc, "0.05", "10"), within: true},
		{name: "cost cap: above", legs: legs{"Q1": offeredLeg("0.05", loc)}, policy: workflow.Policy{MaxCost: dec("9.99")},
			want: offer("Q1", loc, "0.05", "10"), reason: "total 10.00 above the cap 9.99"},
		{name: "price cap: the cheaper SingleUse within it wins over the PreBorrow above it",
			legs:   legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			policy: workflow.Policy{MaxPrice: dec("0.05"), AllowSingleUse: true}, want: offer("Q1.SU", su, "0.04", "8"), within: true},
		{name: "nothing within: the cheapest is shown with its reason",
			legs:   legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			policy: workflow.Policy{MaxPrice: dec("0.03"), AllowSingleUse: true}, want: offer("Q1.SU", su, "0.04", "8"), reason: "above the cap 0.03"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := offered(withLegs(c.legs), withPolicy(c.policy))
			got, within, reason := workflow.Choose(w)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("offer (-want +got):\n%s", diff)
			}
			if within != c.within {
				t.Errorf("within = %v, want %v", within, c.within)
			}
			if (c.reason == "") != (reason == "") || !strings.Contains(reason, c.reason) {
				t.Errorf("reason = %q, want %q", reason, c.reason)
			}
		})
	}
}

func TestPolicyDecides(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		p               workflow.Policy
		capped, decides bool
	}{
		{"none", workflow.Policy{}, false, false},
		{"AllowSingleUse alone decides nothing", workflow.Policy{AllowSingleUse: true}, false, false},
		{"AutoAccept", workflow.Policy{AutoAccept: true}, false, true},
		{"price cap", workflow.Policy{MaxPrice: dec("0.1")}, true, true},
		{"cost cap", workflow.Policy{MaxCost: dec("10")}, true, true},
		{"a negative cap is no cap", workflow.Policy{MaxPrice: dec("-1")}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.p.Capped(); got != c.capped {
				t.Errorf("Capped = %v, want %v", got, c.capped)
			}
			if got := c.p.Decides(); got != c.decides {
				t.Errorf("Decides = %v, want %v", got, c.decides)
			}
		})
	}
}

// The Offer a person is asked about carries the window it must be answered in.
func TestOfferCarriesTheWindow(t *testing.T) {
	t.Parallel()
	w := offered(withState(states.Offered))
	o, _, _ := workflow.Choose(w)
	if o == nil || !o.ExpiresAt.Equal(w.ExpiresAt) {
		t.Fatalf("offer %+v, want ExpiresAt %s", o, w.ExpiresAt)
	}
}

// Offered is the offer a locate was put to whoever
// decided it, whatever became of it: the leg accepted once one was; the
// leg Choose takes while the offer is open; once it ended, the leg Choose
// would have taken among those the broker priced (spec "Short locates"
// rule 2: a declined Reg SHO pair keeps the side offered, not the quote
// id's); a credit-back's row price; nil when nothing was priced.
func TestOffered(t *testing.T) {
	t.Parallel()
	const pb, su = brokercode.TypeCodePreBorrow, brokercode.TypeCodeSingleUse
	canceled := func(price string, typ int) workflow.Leg {
		return workflow.Leg{Status: brokercode.LocateStatusCanceled, Price: dec(price), Type: typ, Shares: 200}
	}
	pair := legs{"Q1": canceled("0.09", pb), "Q1.SU": canceled("0.04", su)}
	cases := []struct {
		name   string
		w      *workflow.Workflow
		leg    string // "" when nil
		price  string
		typ    int
		shares int64
	}{
		{"declined pair, SingleUse allowed: the SingleUse side",
			locate(states.Declined, withLegs(pair), withPolicy(workflow.Policy{AllowSingleUse: true})), "Q1.SU", "0.04", su, 200},
		{"declined pair, SingleUse not allowed: the PreBorrow side",
			locate(states.Declined, withLegs(pair), withPolicy(workflow.Policy{})), "Q1", "0.09", pb, 200},
		{"declined pair by a cap neither side meets: the cheapest, as the policy saw it",
			locate(states.Declined, withLegs(pair), withPolicy(workflow.Policy{MaxPrice: dec("0.03")})), "Q1.SU", "0.04", su, 200},
		{"expired pair with only SingleUse priced",
			locate(states.Expired, withLegs(legs{"Q1": expiredLeg(pb), "Q1.SU": {Status: brokercode.LocateStatusExpired, Price: dec("0.05"), Type: su, Shares: 200}})),
			"Q1.SU", "0.05", su, 200},
		{"waiting on a person: Choose's pick",
			locate(states.Offered, withLegs(legs{"Q1": offeredLeg("0.09", pb), "Q1.SU": offeredLeg("0.04", su)}), withPolicy(workflow.Policy{AllowSingleUse: true})),
			"Q1.SU", "0.04", su, 200},
		{"filled: the leg accepted at the price paid",
			locate(states.Filled, withLegs(legs{"Q1": filledLeg("0.09", pb), "Q1.SU": expiredLeg(su)}), withAccepted("Q1", filledLeg("0.09", pb))),
			"Q1", "0.09", pb, 200},
		{"filled, a record that kept no legs: the price paid, of an unknown type",
			locate(states.Filled, withLegs(nil), withAccepted("Q1", filledLeg("0.09", pb))), "Q1", "0.09", 0, 200},
		{"credit-back: its row's price",
			creditBack(states.Credited, withLegs(legs{"S1": {Status: brokercode.LocateStatusFilled, Price: dec("0.02"), Type: brokercode.TypeCodeLocate, Shares: -200}})),
			"S1", "0.02", brokercode.TypeCodeLocate, 200},
		{"never priced: nil", locate(states.Expired, withLegs(legs{"Q1": expiredLeg(pb), "Q1.SU": expiredLeg(su)})), "", "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := workflow.Offered(c.w)
			if c.leg == "" {
				if o != nil || !c.w.OfferPrice().IsZero() {
					t.Errorf("offer %+v, price %s; want none", o, c.w.OfferPrice())
				}
				return
			}
			if o == nil || o.QuoteReqID != c.leg || !o.Price.Equal(dec(c.price)) || o.LocateType != c.typ || o.Shares != c.shares {
				t.Fatalf("offer %+v, want %s at %s type %d × %d", o, c.leg, c.price, c.typ, c.shares)
			}
			if !c.w.OfferPrice().Equal(o.Price) {
				t.Errorf("OfferPrice %s, want the offer's %s", c.w.OfferPrice(), o.Price)
			}
		})
	}
}

// An answer names the offer a person was shown at the precision shown
// (the broker's float 0.013000000000000001 shown 0.0130), and
// no other price.
func TestOfferPriceAnswers(t *testing.T) {
	t.Parallel()
	o := &workflow.Offer{Price: decimal.NewFromFloat(0.013).Add(decimal.RequireFromString("0.000000000000000001"))}
	for _, c := range []struct {
		price string
		want  bool
	}{
		{"0.013000000000000001", true}, // as the broker sent it
		{"0.0130", true},               // as a person is shown it
		{"0.013", true},
		{"0.0131", false},
		{"0.0129", false},
		{"0.01", false},
	} {
		if got := o.PriceAnswers(decimal.RequireFromString(c.price)); got != c.want {
			t.Errorf("offer at %s answered at %s: %v, want %v", o.Price, c.price, got, c.want)
		}
	}
}
