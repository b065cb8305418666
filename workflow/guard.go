package workflow

import (
	"github.com/shopspring/decimal"
)

// DefaultMaxDistance is how far from the last price, as a fraction of it,
// an order's limit or stop price may be before the fat-finger guard
// refuses it (Guard.MaxDistance zero).
var DefaultMaxDistance = decimal.RequireFromString("0.10")

// Guard is the fat-finger guard every order carries: the owner refuses,
// before anything is sent, an order whose limit or stop price lies more
// than MaxDistance from the symbol's last price, or whose notional
// (shares × its price) is over MaxNotional, unless Force.
type Guard struct {
	// MaxDistance is a fraction of the last price (0.10 is 10%); zero:
	// DefaultMaxDistance.
	MaxDistance decimal.Decimal `json:"maxDistance,omitzero"`
	// MaxNotional bounds an order's shares × price in dollars; zero: none.
	MaxNotional decimal.Decimal `json:"maxNotional,omitzero"`
	// Force sends the order past the guard (a person said so).
	Force bool `json:"force,omitempty"`
}

// Distance is g's distance, its default when unset.
func (g Guard) Distance() decimal.Decimal {
	if g.MaxDistance.IsPositive() {
		return g.MaxDistance
	}
	return DefaultMaxDistance
}

// PriceShown shows a price as the broker gave it: at least two decimals,
// more when it has them (a limit of 12.5 shows 12.50, one of 0.0150 its
// four).
func PriceShown(d decimal.Decimal) string {
	places := int32(2)
	if e := -d.Exponent(); e > places {
		places = e
	}
	return d.StringFixed(places)
}
