package dashboard

import (
	"context"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/engine"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Issue 30, spec "Short locates" rule 2: a Reg SHO pair whose both sides
// are priced, asked of a person with SingleUse allowed, is shown with both
// sides to choose from (RSHO: PreBorrow 0.0900 and SingleUse 0.0400); the
// person approves the dearer PreBorrow side (which can be credited back)
// and that side is the one accepted and filled.
func TestPagePairOffersBothSides(t *testing.T) {
	t.Parallel()
	var hold atomic.Bool
	offered := make(chan string, 1)
	b := setup(t, setupOpt{
		clock: func(sim *simtest.Bundle) { sim.RunClockWhile(t, 3, func() bool { return !hold.Load() }) },
		onUpdate: func(u engine.Update) {
			if w := u.Workflow; w != nil && w.Symbol == "RSHO" && w.State == states.Offered {
				hold.Store(true)
				select {
				case offered <- w.ID:
				default:
				}
			}
		}})
	ctx := t.Context()
	remote := service.Dial(b.owner.Lease().Endpoint, account.Caller{Name: "terminal", Env: brokerclient.EnvLive,
		Ask: func(ctx context.Context, q account.Question) bool { <-ctx.Done(); return false }}, b.sim.Client(t, b.sim.Live), b.sim.URL)
	t.Cleanup(remote.Close)
	res, err := remote.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: "RSHO", Quantity: 100,
		Policy: workflow.Policy{AllowSingleUse: true}}}, Ask: true})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Started[0].ID
	select {
	case <-offered:
	case <-ctx.Done():
		t.Fatal("no offer")
	}
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
	hold.Store(false)
	w, err := b.owner.Engine().Wait(ctx, id)
	if err != nil || w.State != states.Filled || w.LocateType != "PreBorrow" || w.AcceptedID != offer.QuoteReqID {
		t.Errorf("the pair after approving its PreBorrow side: %+v %v, want filled on PreBorrow", w, err)
	}
}
