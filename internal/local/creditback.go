package local

import (
	"context"
	"errors"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/ledger"
)

// creditUnused credits back the unused shares (ledger.Unused) a request
// names: of one symbol, or of every one, one credit-back a row, after the
// caller confirms them when it asked to. Its input is checked before
// anything is read or sent; a confirmation nobody can give refuses it only
// when there is something to confirm.
func (s *session) creditUnused(ctx context.Context, req account.CreditBackRequest) (*account.CreditBackResult, error) {
	switch {
	case req.Quantity != 0:
		return nil, account.Errorf(account.KindInput, "a quantity or the unused shares, not both")
	case req.ID != "":
		return nil, account.Errorf(account.KindInput, "the unused shares take no id: the owner starts one credit-back a row")
	}
	if req.Force {
		return nil, account.Errorf(account.KindInput, "the unused shares are never forced: force a quantity")
	}
	if req.Symbol != "" {
		if err := brokercode.ValidateSymbol(req.Symbol); err != nil {
			return nil, kinded(err)
		}
	}
	typ := req.Type
	switch typ {
	case brokercode.LocateTypeIntraDay:
		typ = brokercode.LocateTypeLocate // the spec's deprecated alias
	case "", brokercode.LocateTypeLocate, brokercode.LocateTypePreBorrow, brokercode.LocateTypeSingleUse:
	default:
		return nil, kinded(brokercode.Invalid("type", "%q: want Locate, PreBorrow or SingleUse", typ))
	}
	credits, skipped, err := s.l.eng.Unused(ctx, ledger.UnusedFilter{Symbol: req.Symbol, Type: typ})
	if err != nil {
		return nil, kinded(err)
	}
	res := &account.CreditBackResult{Skipped: skipped}
	if len(credits) == 0 {
		return res, nil // nothing to confirm, nothing to send: done
	}
	if req.Confirm && s.c.Ask == nil {
		return nil, account.Errorf(account.KindInput, "the credit-back needs a confirmation and nobody can give one here: pass --yes; nothing was sent")
	}
	if req.Confirm && !s.l.ask(ctx, s.c.ID, account.Question{Credits: credits}) {
		res.Declined = true
		return res, ctx.Err()
	}
	for _, c := range credits {
		// Found unused just now: the engine need not look again.
		h, err := s.l.eng.CreditBack(ctx, engine.CreditBackRequest{Symbol: c.Symbol, Shares: c.Shares, Type: c.Type, Force: true})
		switch {
		case errors.Is(err, brokercode.ErrInput):
			// The row changed since it was read (a short took shares):
			// what is left is not ours to sell.
			res.Skipped = append(res.Skipped, locator.Skip{Symbol: c.Symbol, Type: c.Type, Reason: err.Error()})
		case err != nil:
			return res, kinded(err)
		default:
			res.Started = append(res.Started, account.CreditStarted{ID: h.ID, Credit: c})
		}
	}
	return res, nil
}
