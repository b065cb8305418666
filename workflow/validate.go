package workflow

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
)

// Bounds of the spec ("Other bounds") and of the public reference's
// placement limits (the locate quantity's are brokercode's).
const (
	// MaxOrderQuantity is the reference's largest orderQuantity.
	MaxOrderQuantity = 1_000_000
	// PriceDecimals is the most decimals a price or a cap may carry.
	PriceDecimals = 4
)

// MaxPrice is the highest price per share (reference: at most 9999.99).
var MaxPrice = decimal.RequireFromString("9999.99")

// maxCost is the highest total a cost cap can meaningfully hold.
var maxCost = MaxPrice.Mul(decimal.NewFromInt(brokercode.MaxLocateQuantity))

// ParseQuantity reads a locate quantity typed by a person, refusing what
// does not fit the spec's bounds (never overflowing).
func ParseQuantity(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, brokercode.Invalid("quantity", "%q: want a multiple of %d from %d to %d", s,
			brokercode.LocateLot, brokercode.MinLocateQuantity, brokercode.MaxLocateQuantity)
	}
	return n, brokercode.ValidateLocateQuantity(n)
}

// ValidateOrderQuantity checks a short's share count (reference: 1 to
// 1,000,000).
func ValidateOrderQuantity(qty int64) error {
	if qty < 1 || qty > MaxOrderQuantity {
		return brokercode.Invalid("quantity", "%d: want a whole number of shares from 1 to %d", qty, MaxOrderQuantity)
	}
	return nil
}

// ParsePrice reads a price or a price cap: finite, positive, at most four
// decimals and at most MaxPrice. An empty string is zero (no cap).
func ParsePrice(field, s string) (decimal.Decimal, error) {
	return parseBounded(field, s, MaxPrice)
}

// ParseCost reads a total-cost cap: finite, positive, at most four decimals
// and no more than the largest quote could cost. An empty string is zero.
func ParseCost(field, s string) (decimal.Decimal, error) {
	return parseBounded(field, s, maxCost)
}

func parseBounded(field, s string, most decimal.Decimal) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Zero, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil || !d.IsPositive() {
		return decimal.Zero, brokercode.Invalid(field, "%q: want a positive number", s)
	}
	if d.GreaterThan(most) {
		return decimal.Zero, brokercode.Invalid(field, "%s: at most %s", s, most)
	}
	if !d.Equal(d.Truncate(PriceDecimals)) {
		return decimal.Zero, brokercode.Invalid(field, "%s: at most %d decimal places", s, PriceDecimals)
	}
	return d, nil
}

// ValidatePolicy checks a policy's caps against the same bounds.
func ValidatePolicy(p Policy) error {
	for _, c := range []struct {
		field string
		v     decimal.Decimal
		most  decimal.Decimal
	}{{"max price", p.MaxPrice, MaxPrice}, {"max cost", p.MaxCost, maxCost}} {
		switch {
		case c.v.IsNegative():
			return brokercode.Invalid(c.field, "%s is negative", c.v)
		case c.v.GreaterThan(c.most):
			return brokercode.Invalid(c.field, "%s: at most %s", c.v, c.most)
		case !c.v.Equal(c.v.Truncate(PriceDecimals)):
			return brokercode.Invalid(c.field, "%s: at most %d decimal places", c.v, PriceDecimals)
		}
	}
	return nil
}

// RoundUpLot rounds a share count up to whole lots of 100.
func RoundUpLot(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return (n + brokercode.LocateLot - 1) / brokercode.LocateLot * brokercode.LocateLot
}

// MaxIDLength bounds a workflow id or clientOrderId a caller chooses.
const MaxIDLength = 64

// ValidateID checks an id a caller chose for its workflow or order (empty
// means "make one up"): letters, digits, '-' and '_', at most MaxIDLength,
// so it is safe in a URL path and a log line.
func ValidateID(id string) error {
	if len(id) > MaxIDLength {
		return brokercode.Invalid("id", "%q is longer than %d characters", id, MaxIDLength)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return brokercode.Invalid("id", "%q: want letters, digits, '-' and '_'", id)
		}
	}
	return nil
}
