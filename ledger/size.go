package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// lot is the locate quantity step (spec: Locate limits).
const lot = brokercode.LocateLot

// Size says how many shares of symbol the account can short now at price:
// the least of the located inventory (the sum of `available` over the
// symbol's rows; no limit when the symbol is easy to borrow), buying power at
// price (floor(bp / price)), and the account's status (0 unless Active).
// Open short positions are already out of both `available` and buying power,
// so they are not subtracted again; working Sell/Open orders on the symbol
// (today's order book, not yet filled) are, from both. With a target it
// also says how many more 100-share lots to locate and what that would cost
// at the last price offered for the symbol (from the store's workflows; st
// may be nil, and then the price is unknown). It only reads.
func Size(ctx context.Context, c *brokerclient.Client, st *store.Store, account, symbol string, price decimal.Decimal, target int64) (*locator.Sizing, error) {
	switch {
	case c == nil:
		return nil, brokercode.Invalid("client", "is required")
	case strings.TrimSpace(account) == "":
		return nil, brokercode.Invalid("account", "is empty")
	case !price.IsPositive():
		return nil, brokercode.Invalid("price", "%s must be positive", price)
	case target < 0:
		return nil, brokercode.Invalid("target", "%d is negative", target)
	}
	if err := brokercode.ValidateSymbol(symbol); err != nil {
		return nil, err
	}
	account = strings.ToUpper(strings.TrimSpace(account))
	s := &locator.Sizing{Account: account, Symbol: symbol, Price: price, Target: target}

	acct, _, err := c.Accounts.Get(ctx, account)
	if err != nil {
		return nil, err
	}
	active := acct.IsActive()
	s.AccountStatus, s.BuyingPower = acct.AccountStatus, acct.BuyingPower
	if s.EasyToBorrow, _, err = c.Orders.EasyToBorrow(ctx, account, symbol); err != nil {
		return nil, err
	}
	inv, _, err := c.Locates.Inventory(ctx, account)
	if err != nil {
		return nil, err
	}
	s.Located = brokerclient.Available(inv, symbol)
	positions, _, err := c.Positions.Open(ctx, account)
	if err != nil {
		return nil, err
	}
	for _, p := range positions {
		if p.Symbol == symbol && p.IsShort() {
			s.OpenShort += abs(p.Shares)
		}
	}
	book, _, err := c.Orders.Book(ctx, account)
	if err != nil {
		return nil, err
	}
	orders := BookOrders(book)
	available := workflow.Available(s.Located, orders, symbol)
	for i, b := range orders {
		if b.Symbol != symbol || !b.WorkingShortSell() {
			continue
		}
		left := b.Remaining()
		px := price
		if book[i].LimitPrice.IsPositive() {
			px = book[i].LimitPrice
		}
		s.WorkingSells += left
		s.WorkingNotional = s.WorkingNotional.Add(px.Mul(decimal.NewFromInt(left)))
	}
	if st != nil {
		if err := lastOffer(ctx, st, s); err != nil {
			return nil, err
		}
	}
	limit(s, active, available)
	plan(s)
	explain(s, active)
	return s, nil
}

// BookOrders is today's order book as the one definition of available
// shares needs it (workflow.Available).
func BookOrders(book []brokerclient.Order) []workflow.BookOrder {
	out := make([]workflow.BookOrder, len(book))
	for i, o := range book {
		out[i] = workflow.BookOrder{Symbol: o.Symbol, Side: string(o.Side), OpenClose: string(o.OpenClose), Status: string(o.OrderStatus),
			Quantity: o.OrderQuantity, Executed: o.Executed, Canceled: o.CanceledQuantity, Leaves: o.LeavesQuantity}
	}
	return out
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// limit computes the three limits of s and the binding one: active says
// the account is Active, available the located shares working short
// sales leave (workflow.Available).
func limit(s *locator.Sizing, active bool, available int64) {
	status := locator.Limit{Name: locator.LimitAccount, Unlimited: true, Detail: "Active"}
	if !active {
		status = locator.Limit{Name: locator.LimitAccount, Shares: 0, Detail: fmt.Sprintf("%q is not Active: no orders", s.AccountStatus)}
	}
	inv := locator.Limit{Name: locator.LimitInventory, Unlimited: true, Detail: "easy to borrow: no locate needed"}
	if !s.EasyToBorrow {
		inv = locator.Limit{Name: locator.LimitInventory, Shares: available,
			Detail: fmt.Sprintf("%d available − %d in working sells", s.Located, s.WorkingSells)}
	}
	room := s.BuyingPower.Sub(s.WorkingNotional)
	bpShares := int64(0)
	if room.IsPositive() {
		bpShares = room.Div(s.Price).Floor().IntPart()
	}
	bp := locator.Limit{Name: locator.LimitBuyingPower, Shares: bpShares,
		Detail: fmt.Sprintf("(%s bp − %s in working sells) / %s", s.BuyingPower.StringFixed(2), s.WorkingNotional.StringFixed(2), s.Price)}
	s.Limits = []locator.Limit{status, inv, bp}
	// The first of the least binds: the account status before the inventory
	// before buying power, since that is the order a person would fix them.
	best := -1
	for i, l := range s.Limits {
		if l.Unlimited {
			continue
		}
		if best < 0 || l.Shares < s.Limits[best].Shares {
			best = i
		}
	}
	s.Binding, s.Shortable = s.Limits[best].Name, s.Limits[best].Shares
}

// plan works out the lots to locate for s's target and their cost.
func plan(s *locator.Sizing) {
	if s.Target == 0 || s.EasyToBorrow {
		return
	}
	need := s.Target - s.Limits[1].Shares
	if need <= 0 {
		return
	}
	s.LotsToLocate = (need + lot - 1) / lot
	s.SharesToLocate = s.LotsToLocate * lot
	if s.LastOfferKnown {
		s.EstimatedCost = s.LastOfferPrice.Mul(decimal.NewFromInt(s.SharesToLocate))
	}
}

// lastOffer finds the latest price offered for s's symbol in the store's
// locates and price checks of its account: the price taken, else the
// cheapest leg offered (the SingleUse leg only when the request allowed it
// or it was the only one).
func lastOffer(ctx context.Context, st *store.Store, s *locator.Sizing) error {
	ws, err := st.List(ctx, store.Filter{Symbol: s.Symbol})
	if err != nil {
		return err
	}
	for _, w := range ws {
		if !states.Quotes(w.Kind) || !strings.EqualFold(w.Account, s.Account) {
			continue
		}
		p := w.Price
		if !p.IsPositive() {
			p = cheapestLeg(w)
		}
		if !p.IsPositive() || (s.LastOfferKnown && !w.UpdatedAt.After(s.LastOfferAt)) {
			continue
		}
		s.LastOfferPrice, s.LastOfferKnown, s.LastOfferAt = p, true, w.UpdatedAt
	}
	return nil
}

func cheapestLeg(w *workflow.Workflow) decimal.Decimal {
	var best, singleUse decimal.Decimal
	for _, l := range w.Legs {
		if !l.Price.IsPositive() {
			continue
		}
		if l.Type == 4 && !w.Policy.AllowSingleUse {
			if singleUse.IsZero() || l.Price.LessThan(singleUse) {
				singleUse = l.Price
			}
			continue
		}
		if best.IsZero() || l.Price.LessThan(best) {
			best = l.Price
		}
	}
	if best.IsZero() {
		return singleUse
	}
	return best
}

// explain writes sizing s in sentences; active says the account is
// Active.
func explain(s *locator.Sizing, active bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%d shares of %s can be shorted now at %s, bound by %s.", s.Shortable, s.Symbol, s.Price, s.Binding)
	switch {
	case !active:
		fmt.Fprintf(&b, " The account is %q, not Active, so no order can be placed.", s.AccountStatus)
	case s.EasyToBorrow:
		b.WriteString(" The symbol is easy to borrow: no locate is needed.")
	default:
		fmt.Fprintf(&b, " Located: %d available", s.Located)
		if s.WorkingSells > 0 {
			fmt.Fprintf(&b, ", %d of them promised to working sell orders", s.WorkingSells)
		}
		b.WriteString(".")
	}
	if s.OpenShort > 0 {
		fmt.Fprintf(&b, " Already short %d (out of the inventory and buying power already, not counted again).", s.OpenShort)
	}
	if s.Target > 0 {
		switch {
		case s.Shortable >= s.Target:
			fmt.Fprintf(&b, " The target of %d is within reach.", s.Target)
		case s.LotsToLocate > 0:
			fmt.Fprintf(&b, " To reach %d, locate %d more shares (%d lots of 100)", s.Target, s.SharesToLocate, s.LotsToLocate)
			if s.LastOfferKnown {
				fmt.Fprintf(&b, ", about %s at the last offered %s per share.", s.EstimatedCost.StringFixed(2), s.LastOfferPrice)
			} else {
				b.WriteString("; the cost is unknown: no offer for the symbol has been seen yet.")
			}
		}
		if bp := s.Limits[2].Shares; s.Target > bp && active {
			fmt.Fprintf(&b, " Buying power caps the short at %d shares whatever is located.", bp)
		}
	}
	s.Explanation = b.String()
}
