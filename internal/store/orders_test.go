package store_test

import (
	"errors"
	"testing"

	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Spec "Orders" rule 1 (R118): the broker may answer an order under
// another clientOrderId than the one sent, and locator lists it by that
// one (Order.LookupID). A person naming either finds the order, the id
// sent first; an id of neither is ErrOrderNotFound.
func TestLookUpOrderByEitherID(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		o := &workflow.Order{ClientOrderID: "ord-sent", Account: "LV100001", Symbol: "HTBX", Quantity: 100}
		if err := b.store.CreateOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		next := *o
		next.State, next.BrokerOrderID, next.OrderStatus = states.Rejected, "ord-answered", "Rejected"
		if _, err := b.store.CommitOrder(ctx, o, &next, nil); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"ord-sent", "ord-answered"} {
			got, err := b.store.LookUpOrder(ctx, id)
			if err != nil || got.ClientOrderID != "ord-sent" || got.BrokerOrderID != "ord-answered" {
				t.Errorf("look up %s: %+v, %v; want the order sent as ord-sent", id, got, err)
			}
		}
		if _, err := b.store.LookUpOrder(ctx, "ord-neither"); !errors.Is(err, store.ErrOrderNotFound) {
			t.Errorf("look up an id of no order: %v, want ErrOrderNotFound", err)
		}
	})
}
