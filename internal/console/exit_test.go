package console

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/locatorhq/locator/account"
)

// The exit codes are the CLI's; every End an outcome carries and
// every error kind maps to the docs/design.md contract (0/1/2/3/4/130).
func TestExitContract(t *testing.T) {
	t.Parallel()
	for end, want := range map[account.End]int{
		account.EndDone: 0, account.EndFailed: 1, account.EndBroker: 3, account.EndDeclined: 4, account.EndInterrupted: 130,
	} {
		if got := Exit(end); got != want {
			t.Errorf("Exit(%d) = %d, want %d", end, got, want)
		}
	}
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("quote: %w", context.Canceled), 130},
		{account.Errorf(account.KindInput, "bad symbol"), 2},
		{account.Errorf(account.KindRefused, "live account"), 2},
		{account.Errorf(account.KindNotOpen, "ended"), 2},
		{account.Errorf(account.KindSizing, "no buying power"), 2},
		{account.Errorf(account.KindChanged, "pair changed"), 2},
		{account.Errorf(account.KindUsed, "link used"), 2},
		{account.Errorf(account.KindOwnerGone, "owner gone"), 1},
		{account.Errorf(account.KindFailed, "store"), 1},
		{errors.New("plain"), 1},
	} {
		if got := ExitOf(c.err); got != c.want {
			t.Errorf("ExitOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
