package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// LimitName names one bound on the shares shortable now.
type LimitName string

// The limits Size applies.
const (
	// LimitAccount: a non-Active account cannot trade at all.
	LimitAccount LimitName = "account status"
	// LimitInventory: located shares still available, less those working
	// sell orders will take; none for an easy-to-borrow symbol.
	LimitInventory LimitName = "located inventory"
	// LimitBuyingPower: buying power at the given price, less what working
	// sell orders will use.
	LimitBuyingPower LimitName = "buying power"
)

// Limit is one bound on the shares shortable now.
type Limit struct {
	Name LimitName
	// Shares is the bound; meaningless when Unlimited.
	Shares int64
	// Unlimited is set when this limit does not bind at all (an Active
	// account; an easy-to-borrow symbol's inventory).
	Unlimited bool
	// Detail says how the bound was computed, for a person.
	Detail string
}

// Sizing says how many shares of a symbol can be shorted now, which limit
// binds, and what it would take to reach a target.
type Sizing struct {
	Account string
	Symbol  string
	// Price is the price the short is sized at.
	Price decimal.Decimal
	// Target is the shares wanted (0 when none was given).
	Target int64

	// AccountStatus is the account's accountStatus; Active is required.
	AccountStatus string
	// EasyToBorrow is set when the symbol needs no locate.
	EasyToBorrow bool
	// Located sums `available` over the symbol's inventory rows (spec:
	// "Size shorts from available only").
	Located int64
	// OpenShort is the shares already short in open positions. They are out
	// of `available` (the spec's `unavailable` holds them) and their value is
	// out of buying power already, so they are shown, not subtracted again.
	OpenShort int64
	// WorkingSells is the unfilled quantity of working Sell/Open orders on
	// the symbol in today's order book: not yet out of `available`, so it is
	// subtracted from the inventory and, at each order's limit price (or
	// Price), from buying power.
	WorkingSells int64
	// WorkingNotional is the buying power the working sells will use.
	WorkingNotional decimal.Decimal
	// BuyingPower is the account's bp.
	BuyingPower decimal.Decimal

	// Limits are the three bounds: account status, inventory, buying power.
	Limits []Limit
	// Binding is the limit that sets Shortable.
	Binding LimitName
	// Shortable is the shares that can be shorted now: the least of Limits.
	Shortable int64

	// SharesToLocate and LotsToLocate are what must still be located to
	// reach Target: whole lots of 100, none for an easy-to-borrow symbol.
	SharesToLocate int64
	LotsToLocate   int64
	// LastOfferPrice is the latest locate price per share seen for the
	// symbol in the store's workflows; LastOfferKnown is false when there is
	// none, and then EstimatedCost is zero.
	LastOfferPrice decimal.Decimal
	LastOfferKnown bool
	LastOfferAt    time.Time
	// EstimatedCost is SharesToLocate × LastOfferPrice.
	EstimatedCost decimal.Decimal

	// Explanation says the above in sentences, for a person.
	Explanation string

	active    bool
	available int64 // workflow.Available: located less working short sells
}

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
func Size(ctx context.Context, c *brokerclient.Client, st *store.Store, account, symbol string, price decimal.Decimal, target int64) (*Sizing, error) {
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
	s := &Sizing{Account: account, Symbol: symbol, Price: price, Target: target}

	acct, _, err := c.Accounts.Get(ctx, account)
	if err != nil {
		return nil, err
	}
	s.AccountStatus, s.BuyingPower, s.active = acct.AccountStatus, acct.BuyingPower, acct.IsActive()
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
	s.available = workflow.Available(s.Located, orders, symbol)
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
		if err := s.lastOffer(ctx, st); err != nil {
			return nil, err
		}
	}
	s.limit()
	s.plan()
	s.explain()
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

// limit computes the three limits and the binding one.
func (s *Sizing) limit() {
	status := Limit{Name: LimitAccount, Unlimited: true, Detail: "Active"}
	if !s.active {
		status = Limit{Name: LimitAccount, Shares: 0, Detail: fmt.Sprintf("%q is not Active: no orders", s.AccountStatus)}
	}
	inv := Limit{Name: LimitInventory, Unlimited: true, Detail: "easy to borrow: no locate needed"}
	if !s.EasyToBorrow {
		inv = Limit{Name: LimitInventory, Shares: s.available,
			Detail: fmt.Sprintf("%d available − %d in working sells", s.Located, s.WorkingSells)}
	}
	room := s.BuyingPower.Sub(s.WorkingNotional)
	bpShares := int64(0)
	if room.IsPositive() {
		bpShares = room.Div(s.Price).Floor().IntPart()
	}
	bp := Limit{Name: LimitBuyingPower, Shares: bpShares,
		Detail: fmt.Sprintf("(%s bp − %s in working sells) / %s", s.BuyingPower.StringFixed(2), s.WorkingNotional.StringFixed(2), s.Price)}
	s.Limits = []Limit{status, inv, bp}
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

// plan works out the lots to locate for the target and their cost.
func (s *Sizing) plan() {
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

// lastOffer finds the latest price offered for the symbol in the store's
// locates and price checks: the price taken, else the cheapest leg offered
// (the SingleUse leg only when the request allowed it or it was the only
// one).
func (s *Sizing) lastOffer(ctx context.Context, st *store.Store) error {
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

// explain writes the sizing in sentences.
func (s *Sizing) explain() {
	var b strings.Builder
	fmt.Fprintf(&b, "%d shares of %s can be shorted now at %s, bound by %s.", s.Shortable, s.Symbol, s.Price, s.Binding)
	switch {
	case !s.active:
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
		if bp := s.Limits[2].Shares; s.Target > bp && s.active {
			fmt.Fprintf(&b, " Buying power caps the short at %d shares whatever is located.", bp)
		}
	}
	s.Explanation = b.String()
}
