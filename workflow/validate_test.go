package workflow_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/workflow"
)

// checkRefusal asserts err is nil when ok, else a refusal that is ErrInput
// and an *InputError naming field.
func checkRefusal(t *testing.T, err error, ok bool, field string) {
	t.Helper()
	if ok {
		if err != nil {
			t.Errorf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatal("accepted, want refused")
	}
	if !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("errors.Is(%v, ErrInput) = false", err)
	}
	var ie *brokercode.InputError
	if !errors.As(err, &ie) || ie.Field != field || !strings.HasPrefix(err.Error(), field+": ") {
		t.Errorf("err = %#v, want an *InputError for %q", err, field)
	}
}

func TestParseQuantity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64 // when ok
		ok   bool
	}{
		{"100", 100, true},
		{" 2147483600 ", 2147483600, true},
		{"99", 0, false},
		{"150", 0, false},
		{"2147483647", 0, false},
		{"2147483700", 0, false},
		{"9223372036854775800", 0, false}, // fits int64, not the spec
		{"9223372036854775808", 0, false}, // overflows int64: refused, never wrapped
		{"99999999999999999999999", 0, false},
		{"abc", 0, false},
		{"-100", 0, false},
		{"", 0, false},
		{"1e3", 0, false},
		{"100.0", 0, false}, // spec "Orders" rule 4: no fractional quantities
		{"0x64", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			got, err := workflow.ParseQuantity(c.in)
			checkRefusal(t, err, c.ok, "quantity")
			if c.ok && got != c.want {
				t.Errorf("ParseQuantity(%q) = %d, want %d", c.in, got, c.want)
			}
		})
	}
}

// The reference's placement limit: 1 to 1,000,000 shares.
func TestValidateOrderQuantity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		qty int64
		ok  bool
	}{{0, false}, {-1, false}, {1, true}, {150, true}, {1_000_000, true}, {1_000_001, false}}
	for _, c := range cases {
		t.Run(decimal.NewFromInt(c.qty).String(), func(t *testing.T) {
			t.Parallel()
			checkRefusal(t, workflow.ValidateOrderQuantity(c.qty), c.ok, "quantity")
		})
	}
}

// Prices and caps: finite, positive, at most 4 decimals (spec "Other
// bounds": limit price decimals 4), at most 9999.99 per share.
func TestParsePriceAndCost(t *testing.T) {
	t.Parallel()
	aboveMaxCost := "21474814995163.5301" // a hundredth of a cent above 9999.99 × 2147483647
	cases := []struct {
		name  string
		parse func(field, s string) (decimal.Decimal, error)
		in    string
		want  string // when ok
		ok    bool
	}{
		{"price: empty is no cap", workflow.ParsePrice, "", "0", true},
		{"price: 1e400 overflows the bound", workflow.ParsePrice, "1e400", "", false},
		{"price: zero", workflow.ParsePrice, "0", "", false},
		{"price: negative", workflow.ParsePrice, "-1", "", false},
		{"price: NaN", workflow.ParsePrice, "NaN", "", false},
		{"price: Inf", workflow.ParsePrice, "Inf", "", false},
		{"price: five decimals", workflow.ParsePrice, "0.00001", "", false},
		{"price: four decimals", workflow.ParsePrice, "0.0001", "0.0001", true},
		{"price: the maximum", workflow.ParsePrice, "9999.99", "9999.99", true},
		{"price: a cent above the maximum", workflow.ParsePrice, "10000", "", false},
		{"price: 1e-400", workflow.ParsePrice, "1e-400", "", false},
		{"price: huge exponent", workflow.ParsePrice, "1e999999999", "", false},
		{"price: not a number", workflow.ParsePrice, "abc", "", false},
		{"price: padded", workflow.ParsePrice, " 1", "", false},
		{"cost: empty is no cap", workflow.ParseCost, "", "0", true},
		{"cost: 1e400", workflow.ParseCost, "1e400", "", false},
		{"cost: zero", workflow.ParseCost, "0", "", false},
		{"cost: negative", workflow.ParseCost, "-1", "", false},
		{"cost: NaN", workflow.ParseCost, "NaN", "", false},
		{"cost: five decimals", workflow.ParseCost, "0.00001", "", false},
		{"cost: 9999.99", workflow.ParseCost, "9999.99", "9999.99", true},
		{"cost: 10000 is fine for a total", workflow.ParseCost, "10000", "10000", true},
		{"cost: the largest quote's cost", workflow.ParseCost, "21474814995163.53", "21474814995163.53", true},
		{"cost: above the largest quote's cost", workflow.ParseCost, aboveMaxCost, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := c.parse("max price", c.in)
			checkRefusal(t, err, c.ok, "max price")
			if c.ok && !got.Equal(dec(c.want)) {
				t.Errorf("parsed %q as %s, want %s", c.in, got, c.want)
			}
			if !c.ok && !got.IsZero() {
				t.Errorf("refused %q but returned %s, want zero", c.in, got)
			}
		})
	}
}

func TestValidatePolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy workflow.Policy
		field  string // "" when valid
	}{
		{"no caps", workflow.Policy{}, ""},
		{"both caps within bounds", workflow.Policy{MaxPrice: dec("0.0525"), MaxCost: dec("1000.5"), AutoAccept: true}, ""},
		{"price cap at the maximum", workflow.Policy{MaxPrice: dec("9999.99")}, ""},
		{"negative price cap", workflow.Policy{MaxPrice: dec("-0.01")}, "max price"},
		{"price cap above the maximum", workflow.Policy{MaxPrice: dec("10000")}, "max price"},
		{"price cap with five decimals", workflow.Policy{MaxPrice: dec("0.00001")}, "max price"},
		{"price cap 1e400", workflow.Policy{MaxPrice: dec("1e400")}, "max price"},
		{"negative cost cap", workflow.Policy{MaxCost: dec("-1")}, "max cost"},
		{"cost cap above the largest quote's cost", workflow.Policy{MaxCost: dec("21474814995163.54")}, "max cost"},
		{"cost cap with five decimals", workflow.Policy{MaxCost: dec("10.00001")}, "max cost"},
		{"cost cap of 10000 (above the price maximum) is fine", workflow.Policy{MaxCost: dec("10000")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkRefusal(t, workflow.ValidatePolicy(c.policy), c.field == "", c.field)
		})
	}
}

// Spec "Locate limits": quotes are whole lots of 100.
func TestRoundUpLot(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want int64 }{
		{-100, 0}, {0, 0}, {1, 100}, {99, 100}, {100, 100}, {101, 200}, {150, 200}, {2147483600, 2147483600},
	}
	for _, c := range cases {
		if got := workflow.RoundUpLot(c.in); got != c.want {
			t.Errorf("RoundUpLot(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}
