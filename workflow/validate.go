package workflow

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// ErrInput marks input refused before anything is recorded or sent.
var ErrInput = errors.New("invalid input")

// InputError says which input is wrong and why.
type InputError struct {
	Field   string
	Message string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Is makes errors.Is(err, ErrInput) true.
func (e *InputError) Is(target error) bool { return target == ErrInput }

func invalid(field, format string, args ...any) error {
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Bounds of the spec ("Locate limits", "Other bounds") and of the public
// reference's placement limits.
const (
	MinQuantity     = 100
	MaxQuantity     = 2147483647
	Lot             = 100
	MaxSymbolLength = 12
	// MaxOrderQuantity is the reference's largest orderQuantity.
	MaxOrderQuantity = 1_000_000
	// PriceDecimals is the most decimals a price or a cap may carry.
	PriceDecimals = 4
)

// MaxPrice is the highest price per share (reference: at most 9999.99).
var MaxPrice = decimal.RequireFromString("9999.99")

// maxCost is the highest total a cost cap can meaningfully hold.
var maxCost = MaxPrice.Mul(decimal.NewFromInt(MaxQuantity))

// ValidateSymbol checks a ticker of the shapes the broker trades: uppercase
// ASCII letters and digits, starting with a letter, with dot-separated class
// suffixes (BRK.B), at most MaxSymbolLength characters. Anything else would
// be quoted and refused, or break a URL path.
func ValidateSymbol(symbol string) error {
	switch {
	case symbol == "":
		return invalid("symbol", "is empty")
	case len(symbol) > MaxSymbolLength:
		return invalid("symbol", "%q is longer than %d characters", symbol, MaxSymbolLength)
	case symbol != strings.ToUpper(symbol):
		return invalid("symbol", "%q must be uppercase (the broker matches symbols exactly)", symbol)
	}
	prev := byte('.')
	for i := 0; i < len(symbol); i++ {
		c := symbol[i]
		switch {
		case c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		case c == '.' && prev != '.' && i < len(symbol)-1:
		default:
			return invalid("symbol", "%q is not a ticker (uppercase letters and digits, a dot before a class suffix)", symbol)
		}
		prev = c
	}
	return nil
}

// ValidateQuantity checks a quote or credit-back quantity: 100 to
// 2147483647 shares, in lots of 100 (spec "Locate limits").
func ValidateQuantity(qty int64) error {
	if qty < MinQuantity || qty > MaxQuantity || qty%Lot != 0 {
		return invalid("quantity", "%d: want a multiple of %d from %d to %d", qty, Lot, MinQuantity, MaxQuantity)
	}
	return nil
}

// ParseQuantity reads a locate quantity typed by a person, refusing what
// does not fit the spec's bounds (never overflowing).
func ParseQuantity(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, invalid("quantity", "%q: want a multiple of %d from %d to %d", s, Lot, MinQuantity, MaxQuantity)
	}
	return n, ValidateQuantity(n)
}

// ValidateOrderQuantity checks a short's share count (reference: 1 to
// 1,000,000).
func ValidateOrderQuantity(qty int64) error {
	if qty < 1 || qty > MaxOrderQuantity {
		return invalid("quantity", "%d: want a whole number of shares from 1 to %d", qty, MaxOrderQuantity)
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
		return decimal.Zero, invalid(field, "%q: want a positive number", s)
	}
	if d.GreaterThan(most) {
		return decimal.Zero, invalid(field, "%s: at most %s", s, most)
	}
	if !d.Equal(d.Truncate(PriceDecimals)) {
		return decimal.Zero, invalid(field, "%s: at most %d decimal places", s, PriceDecimals)
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
			return invalid(c.field, "%s is negative", c.v)
		case c.v.GreaterThan(c.most):
			return invalid(c.field, "%s: at most %s", c.v, c.most)
		case !c.v.Equal(c.v.Truncate(PriceDecimals)):
			return invalid(c.field, "%s: at most %d decimal places", c.v, PriceDecimals)
		}
	}
	return nil
}

// RoundUpLot rounds a share count up to whole lots of 100.
func RoundUpLot(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return (n + Lot - 1) / Lot * Lot
}

// MaxIDLength bounds a workflow id or clientOrderId a caller chooses.
const MaxIDLength = 64

// ValidateID checks an id a caller chose for its workflow or order (empty
// means "make one up"): letters, digits, '-' and '_', at most MaxIDLength,
// so it is safe in a URL path and a log line.
func ValidateID(id string) error {
	if len(id) > MaxIDLength {
		return invalid("id", "%q is longer than %d characters", id, MaxIDLength)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return invalid("id", "%q: want letters, digits, '-' and '_'", id)
		}
	}
	return nil
}
