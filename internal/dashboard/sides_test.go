package dashboard

import (
	"net/url"
	"strings"
	"testing"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Spec "Short locates" rule 2: a Reg SHO pair whose both sides
// are priced, asked of a person with SingleUse allowed, is shown with both
// sides to choose from (RSHO: PreBorrow 0.0900 and SingleUse 0.0400); the
// person approves the dearer PreBorrow side (which can be credited back)
// and that side is the one accepted and filled.
func TestPagePairOffersBothSides(t *testing.T) {
	t.Parallel()
	var opt setupOpt
	held := holdOffer(t, &opt, "RSHO")
	b := setup(t, opt)
	ctx := t.Context()
	id := b.askElsewhere(t, held, account.LocateItem{Symbol: "RSHO", Quantity: 100, Policy: workflow.Policy{AllowSingleUse: true}})
	page := b.get(t, "/", nil).Body.String()
	for _, want := range []string{"Reg SHO pair: choose the side", "Approve SingleUse at 0.0400 = 4.00", "Approve PreBorrow at 0.0900 = 9.00"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The PreBorrow side's form names its leg (the quote's id) and price.
	offer, err := b.store.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, `data-leg="`+offer.QuoteReqID+`"`) {
		t.Errorf("no form answers the PreBorrow leg %s", offer.QuoteReqID)
	}
	if rec := b.act(t, "/answer", url.Values{"id": {id}, "answer": {"approve"}, "offer": {offer.QuoteReqID}, "price": {"0.09"}}); rec.Code != 200 {
		t.Fatalf("approve the PreBorrow side: %d %s", rec.Code, rec.Body.String())
	}
	held.release()
	w, err := b.wait(ctx, id)
	if err != nil || w.State != states.Filled || w.LocateType != "PreBorrow" || w.AcceptedID != offer.QuoteReqID {
		t.Errorf("the pair after approving its PreBorrow side: %+v %v, want filled on PreBorrow", w, err)
	}
}
