package jobs

import (
	"context"
	"fmt"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/states"
)

// CreditBackUnused is the body of a credit-back-unused job: it credits back
// every located share not in use, as the owner's one definition of them
// says (ledger.Unused, through the account's CreditBack), and reports each
// row it left alone with why. Credit-backs this engine has open (left by an
// earlier run or a restart) are waited for first, so that the inventory is
// read after them and nothing is sold twice.
func (r *Runner) CreditBackUnused(ctx context.Context) (string, error) {
	var parts []outcome
	open, err := r.open(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range open {
		if w.Kind != states.CreditBack {
			continue
		}
		done, err := r.Account.Follow(ctx, account.FollowRequest{ID: w.ID}, nil)
		o := outcome{label: fmt.Sprintf("%s %s", w.Symbol, w.LocateType), w: done, err: err, note: "(left open by an earlier run)"}
		o.ok = err == nil && done.State == states.Credited
		if err != nil {
			o.w = nil
		}
		parts = append(parts, o)
		if err != nil {
			return summarize(parts, "")
		}
	}
	if r.draining() {
		parts = append(parts, outcome{label: "credit-back", err: fmt.Errorf("not started: shutting down: %w", context.Canceled)})
		return summarize(parts, "")
	}
	res, err := r.Account.CreditBack(ctx, account.CreditBackRequest{Unused: true})
	if res != nil {
		for _, s := range res.Skipped {
			parts = append(parts, outcome{label: fmt.Sprintf("%s %s", s.Symbol, s.Type), note: "skipped: " + s.Reason, ok: true})
		}
		for _, s := range res.Started {
			o := outcome{label: fmt.Sprintf("%s %s", s.Symbol, s.Type)}
			o.w, o.err = r.Account.Follow(ctx, account.FollowRequest{ID: s.ID}, nil)
			o.ok = o.err == nil && o.w.State == states.Credited
			parts = append(parts, o)
		}
	}
	if err != nil {
		parts = append(parts, outcome{label: "credit-back", err: err})
	}
	return summarize(parts, "nothing to credit back")
}
