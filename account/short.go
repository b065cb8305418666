package account

import (
	"context"
	"time"

	"github.com/locatorhq/locator/workflow"
)

// ShortShowing runs a short on a, showing its locate's changes and every
// order change of the account as they come (orders an earlier run left
// unsettled are settled before a new one is sent, and show too), and the
// order's last change before it returns (the wait for it bounded, in case
// it was lost). The ids are made up here when empty, so that this short's
// locate and order are told apart from the account's others.
func ShortShowing(ctx context.Context, a Account, req ShortRequest, show func(Update)) (*ShortResult, error) {
	if req.LocateID == "" {
		req.LocateID = workflow.NewID()
	}
	if req.ClientOrderID == "" {
		req.ClientOrderID = workflow.NewOrderID()
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	updates, err := a.Subscribe(sctx)
	if err != nil {
		return nil, err
	}
	shown := make(chan struct{})
	orders := make(chan workflow.Order, 16)
	go func() {
		defer close(shown)
		for u := range updates {
			if u.Order != nil || (u.Workflow != nil && u.Workflow.ID == req.LocateID) {
				show(u)
			}
			if u.Order != nil && u.Order.ClientOrderID == req.ClientOrderID {
				select {
				case orders <- *u.Order:
				default:
				}
			}
		}
	}()
	res, err := a.Short(ctx, req)
	if res != nil && res.Order != nil {
		for wait := time.After(2 * time.Second); ; {
			select {
			case o := <-orders:
				if o.State != res.Order.State {
					continue
				}
			case <-wait:
			}
			break
		}
	}
	stop()
	<-shown
	return res, err
}
