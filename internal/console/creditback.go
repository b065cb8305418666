package console

import (
	"fmt"
	"io"
	"strings"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/safetext"
)

// CreditBackNotes tells a person, on w, the rows a credit-back of the
// unused shares left alone and why, and that nothing was sent when it
// started nothing (declined at the confirmation, or nothing unused). It
// reports whether any credit-back started.
func CreditBackNotes(w io.Writer, req account.CreditBackRequest, res *account.CreditBackResult) bool {
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "%s %s: skipped: %s\n", safetext.Cell(s.Symbol), s.Type, safetext.Terminal(s.Reason))
	}
	switch {
	case res.Declined:
		fmt.Fprintln(w, "not confirmed: nothing was sent")
	case len(res.Started) == 0:
		what := "no unused located shares"
		if req.Symbol != "" {
			what += " of " + req.Symbol
		}
		if req.Type != "" {
			what += " in " + string(req.Type) + " rows"
		}
		fmt.Fprintf(w, "nothing to credit back: %s; nothing was sent\n", what)
	}
	return len(res.Started) > 0
}

// credits is the confirmation's list: "300 HTBX (Locate), 300 HTBY
// (Locate)".
func credits(cs []locator.Credit) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%d %s (%s)", c.Shares, c.Symbol, c.Type)
	}
	return strings.Join(parts, ", ")
}
