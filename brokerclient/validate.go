package brokerclient

import (
	"strings"
	"unicode"

	"github.com/locatorhq/locator/brokercode"
)

// shadowSuffix marks the Single Use side of a Reg SHO pair (spec: "Locate
// history row", quoteReqID).
const shadowSuffix = ".SU"

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
