package locator

import (
	"time"

	"github.com/shopspring/decimal"
)

// The sizing of a short is made by package ledger (ledger.Size) and handed
// out by the account API (Account.Size).

// LimitName names one bound on the shares shortable now.
type LimitName string

// The limits a sizing applies.
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
	// symbol in the account's workflows; LastOfferKnown is false when there
	// is none, and then EstimatedCost is zero.
	LastOfferPrice decimal.Decimal
	LastOfferKnown bool
	LastOfferAt    time.Time
	// EstimatedCost is SharesToLocate × LastOfferPrice.
	EstimatedCost decimal.Decimal

	// Explanation says the above in sentences, for a person.
	Explanation string
}
