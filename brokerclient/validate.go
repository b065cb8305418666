package brokerclient

import (
	"strings"
	"unicode"

	"github.com/locatorhq/locator/brokercode"
)

// Locate quantity bounds (spec: Limits, "Locate limits"): quote and sell
// quantities run from 100 to 2147483647 and come in lots of 100.
const (
	MinLocateQuantity = 100
	MaxLocateQuantity = 2147483647
	LocateLot         = 100
)

// shadowSuffix marks the Single Use side of a Reg SHO pair (spec: "Locate
// history row", quoteReqID).
const shadowSuffix = ".SU"

// ValidateLocateQuantity checks a quote or sell quantity against the spec's
// "Locate limits": 100 to 2147483647 shares, a multiple of 100. Out-of-range
// values would come back as a 400 ProblemDetails, and a quantity that is not
// a whole lot as an asynchronous R67 rejection; both are caught here instead.
func ValidateLocateQuantity(qty int64) error {
	switch {
	case qty < MinLocateQuantity || qty > MaxLocateQuantity:
		return brokercode.Invalid("quantity", "%d is outside %d..%d", qty, MinLocateQuantity, MaxLocateQuantity)
	case qty%LocateLot != 0:
		return brokercode.Invalid("quantity", "%d is not a multiple of %d", qty, LocateLot)
	}
	return nil
}

// validateAccount checks an account id used in a body or a path segment.
func validateAccount(field, id string) error {
	if id == "" {
		return brokercode.Invalid(field, "is empty")
	}
	if i := strings.IndexFunc(id, pathBreaking); i >= 0 || id == "." || id == ".." {
		return brokercode.Invalid(field, "%q is not an account id", id)
	}
	return nil
}

// validateQuoteReqID checks a client id. The spec's ".SU" suffix belongs to
// the service: it names the Single Use shadow row of a Reg SHO quote, so a
// new quote or sell must not carry it (shadow is false); accept and cancel
// may address the shadow row with it (shadow is true).
func validateQuoteReqID(id string, shadow bool) error {
	if id == "" {
		return brokercode.Invalid("quoteReqID", "is empty")
	}
	if strings.ContainsRune(id, '/') || id == "." || id == ".." {
		return brokercode.Invalid("quoteReqID", "%q cannot be used in a path", id)
	}
	if strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return brokercode.Invalid("quoteReqID", "%q contains a control character", id)
	}
	if !shadow && strings.HasSuffix(id, shadowSuffix) {
		return brokercode.Invalid("quoteReqID", "%q ends in %q, which the service reserves for the Single Use side of a Reg SHO quote", id, shadowSuffix)
	}
	return nil
}

// pathBreaking reports runes that would split, end or re-encode a URL path
// segment, or that no ticker or account id contains.
func pathBreaking(r rune) bool {
	switch r {
	case '/', '?', '#', '%', '\\':
		return true
	}
	return unicode.IsSpace(r) || unicode.IsControl(r)
}
