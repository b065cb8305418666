package main

import (
	"strings"
	"testing"

	"github.com/locatorhq/locator/account"
)

// Issue 30, the locate budget per account per trading day, kept by the
// account's owner: with LOCATOR_LOCATE_BUDGET=20 and serve owning the
// account, a $15 locate from one shell fills; a second $15 locate from
// another shell is declined by the budget with the reason, exit 4, and
// its offer is not accepted (no accept for it reaches the broker). status
// shows what is left.
func TestLocateBudgetAcrossShells(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.env[BudgetEnv] = "20"
	owner := b.startMain(t, "serve")
	waitFor(t, "the owner", func() bool { return strings.Contains(owner.stderr.String(), "serving LV100001") })

	// HTBX at 0.0150 × 1000 = 15.00.
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "1000", "--max-price", "0.02"); code != account.ExitOK {
		t.Fatalf("first locate: exit %d\n%s\n%s", code, out, errOut)
	}
	// HTBY at 0.0300 × 500 = 15.00: 30.00 would pass the 20.00.
	code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBY", "500", "--max-price", "0.05")
	want := "declined by the locate budget: the offer's 15.00 with 15.00 spent today would pass the day's locate budget of 20.00 (5.00 left)"
	if code != account.ExitDeclined || !strings.Contains(out+errOut, want) {
		t.Errorf("second locate: exit %d, want 4 saying %q\n%s\n%s", code, want, out, errOut)
	}
	accepts := 0
	for _, w := range b.writes() {
		if strings.Contains(w, "/locates/accept") {
			accepts++
		}
	}
	if accepts != 1 {
		t.Errorf("%d accepts reached the broker, want 1 (the first locate's): %v", accepts, b.writes())
	}
	if code, _, errOut := b.MustRunMain(t, nil, "status"); code != 0 || !strings.Contains(errOut, "locate budget today: 20.00, 15.00 spent, 5.00 left") {
		t.Errorf("status: exit %d, stderr %q; want what the budget leaves", code, errOut)
	}
}
