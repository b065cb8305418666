package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
