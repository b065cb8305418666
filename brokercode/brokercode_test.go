package brokercode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/locatorhq/locator/brokercode"
)

func TestLocateStatusString(t *testing.T) {
	t.Parallel()
	for s, want := range map[brokercode.LocateStatus]string{
		brokercode.LocateStatusNew:      "48 New",
		brokercode.LocateStatusCanceled: "52 Canceled",
		brokercode.LocateStatusQuoting:  "81 Quoting",
		40:                              "40",
	} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(s), got, want)
		}
	}
	if got := brokercode.LocateStatusCanceled.Name(); got != "Canceled" {
		t.Errorf("Name() = %q, want Canceled", got)
	}
}

func TestLocateStatusIsTerminal(t *testing.T) {
	t.Parallel()
	for s, want := range map[brokercode.LocateStatus]bool{48: false, 50: true, 52: true, 54: false, 56: true, 65: false, 67: true, 81: false} {
		if got := s.IsTerminal(); got != want {
			t.Errorf("%v.IsTerminal() = %v, want %v", s, got, want)
		}
	}
}

func TestLocateTypeForCode(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]brokercode.LocateType{0: "Unknown", 1: "Locate", 2: "Locate", 3: "PreBorrow", 4: "SingleUse", 5: "Unknown"} {
		if got := brokercode.LocateTypeForCode(code); got != want {
			t.Errorf("LocateTypeForCode(%d) = %q, want %q", code, got, want)
		}
		if !want.Valid() {
			t.Errorf("%q.Valid() = false", want)
		}
	}
	if !brokercode.LocateTypeIntraDay.Valid() {
		t.Error("IntraDay, the deprecated alias, is not Valid")
	}
	for _, s := range []brokercode.LocateType{"", "locate", "Intraday", "1", "Single Use"} {
		if s.Valid() {
			t.Errorf("%q valid", s)
		}
	}
}

func TestOrderStatusTerminal(t *testing.T) {
	t.Parallel()
	for s, want := range map[brokercode.OrderStatus]bool{"New": false, "PendingNew": false, "Accepted": false, "PartiallyFilled": false,
		"DoneForDay": false, "Filled": true, "Canceled": true, "Rejected": true, "Expired": true} {
		if got := s.Terminal(); got != want {
			t.Errorf("%s.Terminal() = %v, want %v", s, got, want)
		}
	}
}

// TestValidateSymbol covers the one rule, including where the two rules it
// replaces disagreed: hyphens, underscores and up to 30 characters (the
// reference's placement limits) are now accepted for locates; leading
// digits, separators at an end or doubled, and characters outside the
// reference's set are now refused by the client too.
func TestValidateSymbol(t *testing.T) {
	t.Parallel()
	good := []string{"A", "AAPL", "BRK.B", "BRK-B", "ABC_D", "HTBX", "X1", "AAPL240119C00150000", strings.Repeat("A", 30)}
	for _, s := range good {
		if err := brokercode.ValidateSymbol(s); err != nil {
			t.Errorf("ValidateSymbol(%q) = %v, want nil", s, err)
		}
	}
	bad := []string{"", ".", "..", "aapl", "Aapl", "1ABC", ".A", "A.", "A..B", "A.-B", "A-", "A/B", "A?B", "A#B", "A%B", "A B",
		" AAPL", "A\\B", "A\x00B", "ÉCOLE", "A+B", "A$", strings.Repeat("A", 31),
		"ÄÖÜ", "AAPL\n", "\xff"}
	for _, s := range bad {
		err := brokercode.ValidateSymbol(s)
		var ie *brokercode.InputError
		if !errors.Is(err, brokercode.ErrInput) || !errors.As(err, &ie) || ie.Field != "symbol" {
			t.Errorf("ValidateSymbol(%q) = %v, want a symbol InputError", s, err)
		}
	}
}

// Symbol upper-cases what a person typed (ASCII letters only) and holds
// the result to ValidateSymbol.
func TestSymbol(t *testing.T) {
	t.Parallel()
	for typed, want := range map[string]string{"htbx": "HTBX", "Brk.b": "BRK.B", "HTBX": "HTBX", "aapl240119c00150000": "AAPL240119C00150000"} {
		if got, err := brokercode.Symbol(typed); err != nil || got != want {
			t.Errorf("Symbol(%q) = %q, %v; want %q", typed, got, err, want)
		}
	}
	for _, typed := range []string{"", "ht bx", "ht/bx", "\u017fpy", "école", "1abc"} {
		if _, err := brokercode.Symbol(typed); !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("Symbol(%q) = %v, want an input error", typed, err)
		}
	}
}

func TestInputError(t *testing.T) {
	t.Parallel()
	err := brokercode.Invalid("quantity", "%d is not a multiple of %d", 150, 100)
	if got := err.Error(); got != "quantity: 150 is not a multiple of 100" {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(err, brokercode.ErrInput) {
		t.Error("errors.Is(err, ErrInput) = false")
	}
	if got := (&brokercode.InputError{Message: "no field"}).Error(); got != "no field" {
		t.Errorf("Error() without a field = %q", got)
	}
}

// Spec: Limits, "Locate limits": quote, sell and credit-back quantities
// from 100 to 2147483647, in multiples of 100; anything else is refused
// as input, naming the field.
func TestValidateLocateQuantity(t *testing.T) {
	t.Parallel()
	for _, q := range []int64{100, 200, 1_000_000, 2147483600} {
		if err := brokercode.ValidateLocateQuantity(q); err != nil {
			t.Errorf("ValidateLocateQuantity(%d) = %v, want nil", q, err)
		}
	}
	for _, q := range []int64{0, 1, 99, -100, 150, 2147483647, 2147483700, 9223372036854775800} {
		err := brokercode.ValidateLocateQuantity(q)
		var ie *brokercode.InputError
		if !errors.As(err, &ie) || ie.Field != "quantity" || !strings.HasPrefix(err.Error(), "quantity: ") {
			t.Errorf("ValidateLocateQuantity(%d) = %v, want an input error of the quantity", q, err)
		}
	}
}
