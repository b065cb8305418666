package mcpserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// progress shows the changes of the workflows and orders a call follows:
// when the call carries a progress token, one progress notification per
// change, numbered, in words (a locate can take a minute, longer than an
// SDK's default timeout waits without news); otherwise nothing.
func (c *call) progress(ctx context.Context) func(account.Update) {
	token := c.req.Params.GetProgressToken()
	if token == nil {
		return func(account.Update) {}
	}
	var mu sync.Mutex
	n := 0
	return func(u account.Update) {
		mu.Lock()
		defer mu.Unlock()
		n++
		// A notification that cannot be sent (the client went away) is
		// the end of the call, not of its workflow.
		c.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: changeWords(u)})
	}
}

// changeWords says what changed: "HTBX wf-…: quoting → offered — offer
// 0.0150 × 300 = 4.50 (Locate)", "order ID HTBX: sent → working
// (New)", with the broker's text marked as such.
func changeWords(u account.Update) string {
	if o := u.Order; o != nil {
		line := fmt.Sprintf("order %s %s: %s → %s", o.LookupID(), o.Symbol, u.From, o.State)
		if o.OrderStatus != "" {
			line += " (" + o.OrderStatus + ")"
		}
		switch {
		case o.Text != "":
			line += " — " + brokerText(o.Text)
		case u.Reason != "" && o.State == states.Failed:
			line += " — " + brokerText(u.Reason)
		case u.Reason != "":
			line += " — " + u.Reason
		}
		return line
	}
	w := u.Workflow
	if !u.QueuedUntil.IsZero() {
		return fmt.Sprintf("%s %s: queued — the broker spaces quotes of a symbol; this one leaves at %s", w.Symbol, w.ID, utc(u.QueuedUntil))
	}
	line := fmt.Sprintf("%s %s: %s → %s", w.Symbol, w.ID, u.From, w.State)
	switch {
	case u.Offer != nil:
		line += " — " + offerWords(*u.Offer)
	case u.Reason != "" && reasonFromBroker(w):
		line += " — " + brokerText(u.Reason)
	case u.Reason != "":
		line += " — " + u.Reason
	}
	return line
}

// offerWords says what an offer is: "offer 0.0150 × 300 = 4.50 (Locate),
// a locate fee per share, until T".
func offerWords(o workflow.Offer) string {
	return fmt.Sprintf("offer %s × %d = %s (%s), a locate fee per share, open until %s", o.Price.StringFixed(4), o.Shares,
		o.Total.StringFixed(2), brokercode.LocateTypeForCode(o.LocateType), utc(o.ExpiresAt))
}
