package console

import (
	"fmt"
	"time"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Progress prints each state change as it happens; on a terminal a
// spinner turns while a quote waits its turn or a credit-back is under way.
func Progress(out Printer, d *Display) func(workflow.Update) {
	return func(u workflow.Update) {
		if u.Order != nil {
			o := u.Order
			if out.JSON() {
				out.Event(map[string]any{"event": "order", "clientOrderId": o.LookupID(), "symbol": o.Symbol, "from": u.From, "to": o.State, "status": o.OrderStatus, "reason": u.Reason}, "")
				return
			}
			line := fmt.Sprintf("order %s %s: %s → %s", o.LookupID(), o.Symbol, u.From, o.State)
			if o.OrderStatus != "" {
				line += " (" + o.OrderStatus + ")"
			}
			if u.Reason != "" {
				line += " — " + u.Reason
			}
			d.Println(line)
			return
		}
		w := u.Workflow
		if until := u.QueuedUntil; !until.IsZero() {
			if out.JSON() {
				out.Event(map[string]any{"event": "queued", "id": w.ID, "symbol": w.Symbol, "until": until.UTC()}, "")
				return
			}
			d.Println(fmt.Sprintf("%s %s: queued — the broker spaces quotes of a symbol; this one leaves in about %s",
				w.Symbol, w.ID, until.Sub(d.clk.Now()).Round(time.Second)))
			d.spinner(func(now time.Time) string {
				return fmt.Sprintf("%s: waiting to quote, %s", w.Symbol, max(until.Sub(now), 0).Round(time.Second))
			})
			return
		}
		if out.JSON() {
			out.Event(map[string]any{"event": "transition", "id": w.ID, "symbol": w.Symbol, "from": u.From, "to": w.State, "reason": u.Reason}, "")
			return
		}
		line := fmt.Sprintf("%s %s: %s → %s", w.Symbol, w.ID, u.From, w.State)
		if u.Offer != nil {
			o := u.Offer
			left := o.ExpiresAt.Sub(d.clk.Now()).Round(time.Second)
			line += fmt.Sprintf(" — offer %s × %d = %s (%s, %s left)", Price4(o.Price), o.Shares, Money(o.Total),
				brokercode.LocateTypeForCode(o.LocateType), left)
		} else if u.Reason != "" && w.State != states.Quoting {
			line += " — " + u.Reason
		}
		d.Println(line)
		if w.Kind == states.CreditBack && !w.Terminal() {
			start := d.since(w.ID)
			d.spinner(func(now time.Time) string {
				return fmt.Sprintf("%s: crediting back %d shares, %s", w.Symbol, w.Quantity, now.Sub(start).Round(time.Second))
			})
		}
	}
}
