package brokersim

import (
	"encoding/json"

	"github.com/shopspring/decimal"
)

// Decimal is a shopspring decimal that reads and writes JSON numbers, the way
// the broker sends money and prices, without float rounding in the simulator.
type Decimal struct{ decimal.Decimal }

// Dec wraps d.
func Dec(d decimal.Decimal) Decimal { return Decimal{d} }

// DecInt returns n as a Decimal.
func DecInt(n int64) Decimal { return Decimal{decimal.NewFromInt(n)} }

// MarshalJSON writes a bare JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalJSON reads a JSON number or a numeric string.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		d.Decimal = decimal.Zero
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	v, err := decimal.NewFromString(n.String())
	if err != nil {
		return err
	}
	d.Decimal = v
	return nil
}
