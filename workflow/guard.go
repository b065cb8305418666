package workflow

import (
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
)

// DefaultMaxDistance is how far from the reference price, as a fraction of it,
// an order's limit or stop price may be before the fat-finger guard
// refuses it (Guard.MaxDistance zero).
var DefaultMaxDistance = decimal.RequireFromString("0.10")

// Guard is the fat-finger guard every order carries: the owner refuses,
// before anything is sent, an order whose limit or stop price lies more
// than MaxDistance from the symbol's reference price (the best price the
// broker shows: the position's, the day's last fill, the last close; else
// RefPrice), or whose notional (shares × its price) is over MaxNotional,
// unless Force. A priced order with no reference known is refused too.
type Guard struct {
	// MaxDistance is a fraction of the last price (0.10 is 10%); zero:
	// DefaultMaxDistance.
	MaxDistance decimal.Decimal `json:"maxDistance,omitzero"`
	// MaxNotional bounds an order's shares × price in dollars; zero: none.
	MaxNotional decimal.Decimal `json:"maxNotional,omitzero"`
	// RefPrice is the symbol's price as the person knows it, the
	// reference when the broker shows none; zero: none given.
	RefPrice decimal.Decimal `json:"refPrice,omitzero"`
	// Force sends the order past the guard (a person said so).
	Force bool `json:"force,omitempty"`
}

// Validate refuses a guard no person means: a negative distance, bound or
// reference price, a distance over 1000%, a bound or reference price the
// broker could not quote (more than four decimals, over MaxPrice for a
// price). Zero is unset.
func (g Guard) Validate() error {
	if g.MaxDistance.IsNegative() || g.MaxDistance.GreaterThan(decimal.NewFromInt(10)) {
		return brokercode.Invalid("maxDistance", "%s: want a fraction of the reference price above 0, at most 10 (1000%%)", g.MaxDistance)
	}
	for _, f := range []struct {
		name    string
		d, most decimal.Decimal
	}{{"maxNotional", g.MaxNotional, maxCost}, {"refPrice", g.RefPrice, MaxPrice}} {
		if f.d.IsZero() {
			continue
		}
		if _, err := parseBounded(f.name, f.d.String(), f.most); err != nil {
			return err
		}
	}
	return nil
}

// Distance is g's distance, its default when unset.
func (g Guard) Distance() decimal.Decimal {
	if g.MaxDistance.IsPositive() {
		return g.MaxDistance
	}
	return DefaultMaxDistance
}

// ParseDistance reads the guard's distance as a person gives it, a
// percentage of the reference price ("10" is 10%), into the fraction
// Guard.MaxDistance holds (0.10): above 0, at most 1000.
func ParseDistance(field, s string) (decimal.Decimal, error) {
	pct, err := decimal.NewFromString(s)
	if err != nil || !pct.IsPositive() || pct.GreaterThan(decimal.NewFromInt(1000)) {
		return decimal.Zero, brokercode.Invalid(field, "%q: want a percentage above 0, at most 1000 (10 is 10%%)", s)
	}
	return pct.Shift(-2), nil
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
