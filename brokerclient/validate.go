package brokerclient

import (
	"strings"
	"unicode"
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

// ValidateSymbol checks a ticker before it is sent in a body or a path: it
// must be non-empty and uppercase (the service matches symbols exactly and
// case-sensitively, spec: Orders rule 6), and hold nothing that would change
// the meaning of a URL ('/', '?', '#', '%', whitespace, or a lone "." / "..",
// which the router answers with a bare 404). The engine calls it too, so a
// bad symbol is refused before any workflow starts.
func ValidateSymbol(symbol string) error {
	switch {
	case symbol == "":
		return invalid("symbol", "is empty")
	case symbol == "." || symbol == "..":
		return invalid("symbol", "%q is not a ticker", symbol)
	case symbol != strings.ToUpper(symbol):
		return invalid("symbol", "%q must be uppercase (the service matches symbols exactly)", symbol)
	}
	if i := strings.IndexFunc(symbol, pathBreaking); i >= 0 {
		return invalid("symbol", "%q contains %q, which cannot appear in a ticker", symbol, symbol[i:i+1])
	}
	return nil
}

// ValidateLocateQuantity checks a quote or sell quantity against the spec's
// "Locate limits": 100 to 2147483647 shares, a multiple of 100. Out-of-range
// values would come back as a 400 ProblemDetails, and a quantity that is not
// a whole lot as an asynchronous R67 rejection; both are caught here instead.
func ValidateLocateQuantity(qty int64) error {
	switch {
	case qty < MinLocateQuantity || qty > MaxLocateQuantity:
		return invalid("quantity", "%d is outside %d..%d", qty, MinLocateQuantity, MaxLocateQuantity)
	case qty%LocateLot != 0:
		return invalid("quantity", "%d is not a multiple of %d", qty, LocateLot)
	}
	return nil
}

// validateAccount checks an account id used in a body or a path segment.
func validateAccount(field, id string) error {
	if id == "" {
		return invalid(field, "is empty")
	}
	if i := strings.IndexFunc(id, pathBreaking); i >= 0 || id == "." || id == ".." {
		return invalid(field, "%q is not an account id", id)
	}
	return nil
}

// validateQuoteReqID checks a client id. The spec's ".SU" suffix belongs to
// the service: it names the Single Use shadow row of a Reg SHO quote, so a
// new quote or sell must not carry it (shadow is false); accept and cancel
// may address the shadow row with it (shadow is true).
func validateQuoteReqID(id string, shadow bool) error {
	if id == "" {
		return invalid("quoteReqID", "is empty")
	}
	if strings.ContainsRune(id, '/') || id == "." || id == ".." {
		return invalid("quoteReqID", "%q cannot be used in a path", id)
	}
	if strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return invalid("quoteReqID", "%q contains a control character", id)
	}
	if !shadow && strings.HasSuffix(id, shadowSuffix) {
		return invalid("quoteReqID", "%q ends in %q, which the service reserves for the Single Use side of a Reg SHO quote", id, shadowSuffix)
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

// LocateType is the string the sell endpoint takes for a locate pool (spec:
// "Locate types", Versioning rule 4). History and inventory rows carry the
// numeric code instead; LocateTypeForCode maps one to the other.
type LocateType string

// The five strings the sell endpoint accepts.
const (
	// LocateTypeUnknown names no pool (code 0); a sell with it cannot match
	// any inventory row.
	LocateTypeUnknown LocateType = "Unknown"
	// LocateTypeLocate is the reusable Locate product, codes 1 and 2.
	LocateTypeLocate LocateType = "Locate"
	// LocateTypeIntraDay is a deprecated alias of Locate; the client sends
	// Locate in its place.
	LocateTypeIntraDay LocateType = "IntraDay"
	// LocateTypePreBorrow is the reusable Reg SHO pool, code 3.
	LocateTypePreBorrow LocateType = "PreBorrow"
	// LocateTypeSingleUse is the one-shot Reg SHO pool, code 4.
	LocateTypeSingleUse LocateType = "SingleUse"
)

// LocateTypeForCode maps a row's numeric locateType to the string a sell of
// that row must send: 1 and 2 are the same product and both sell as Locate
// (the spec: "send Locate for codes 1 and 2"), 3 is PreBorrow, 4 SingleUse.
// Anything else, including 0 on rejected rows, is Unknown.
func LocateTypeForCode(code int) LocateType {
	switch code {
	case 1, 2:
		return LocateTypeLocate
	case 3:
		return LocateTypePreBorrow
	case 4:
		return LocateTypeSingleUse
	}
	return LocateTypeUnknown
}

// Valid reports whether t is one of the five strings the sell endpoint accepts.
func (t LocateType) Valid() bool {
	switch t {
	case LocateTypeUnknown, LocateTypeLocate, LocateTypeIntraDay, LocateTypePreBorrow, LocateTypeSingleUse:
		return true
	}
	return false
}
