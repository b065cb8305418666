package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
)

// The unused shares a credit-back found are put to the
// person row by row before any is sent; y sends them, anything else not.
func TestAskerConfirmsCredits(t *testing.T) {
	t.Parallel()
	q := account.Question{Credits: []locator.Credit{
		{Symbol: "HTBX", Type: brokercode.LocateTypeLocate, Shares: 300},
		{Symbol: "RSHO", Type: brokercode.LocateTypeSingleUse, Shares: 1000},
	}}
	for answer, want := range map[string]bool{"y\n": true, "yes\n": true, "n\n": false, "": false} {
		var asked bytes.Buffer
		p := &Prompter{Lines: Lines(strings.NewReader(answer)), Err: &asked}
		if got := p.Asker(t.Context())(t.Context(), q); got != want {
			t.Errorf("answer %q: %v, want %v", answer, got, want)
		}
		if s := asked.String(); s != "Credit back the unused 300 HTBX (Locate), 1000 RSHO (SingleUse)? [y/N] " {
			t.Errorf("asked %q", s)
		}
	}
}
