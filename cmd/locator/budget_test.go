package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
)

// The locate budget per account per trading day, kept by the
// account's owner: with a budget of 20 for LV100001 (in
// LOCATOR_LOCATE_BUDGET, or as the account's locateBudget in the settings
// file) and serve owning the account, a $15 locate from one shell fills; a
// second $15 locate from another shell is declined by the budget with the
// reason, exit 4, and its offer is not accepted (no accept for it reaches
// the broker). status, and status -o json, show what is left of the
// account's budget.
func TestLocateBudgetAcrossShells(t *testing.T) {
	t.Parallel()
	for name, set := range map[string]func(*cliBundle){
		"env": func(b *cliBundle) { b.env[config.BudgetEnv] = "20" },
		"settings file": func(b *cliBundle) {
			b.env["LOCATOR_CONFIG"] = writeFile(t, "config.json", `{"accounts": {"LV100001": {"locateBudget": "20"}, "LV100002": {"locateBudget": "5"}}}`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			set(b)
			budgetAcrossShells(t, b)
		})
	}
}

func budgetAcrossShells(t *testing.T, b *cliBundle) {
	b.startServe(t)

	// HTBX at 0.0150 × 1000 = 15.00.
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "1000", "--max-price", "0.02"); code != console.ExitOK {
		t.Fatalf("first locate: exit %d\n%s\n%s", code, out, errOut)
	}
	// HTBY at 0.0300 × 500 = 15.00: 30.00 would pass the 20.00.
	code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBY", "500", "--max-price", "0.05")
	want := "declined by the locate budget: the offer's 15.00 with 15.00 spent today would pass the day's locate budget of 20.00 (5.00 left)"
	if code != console.ExitDeclined || !strings.Contains(out+errOut, want) {
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
	if code, out, errOut := b.MustRunMain(t, nil, "status"); code != 0 || !strings.Contains(out, "account LV100001: locate budget today: 20.00, 15.00 spent, 5.00 left") {
		t.Errorf("status: exit %d, stdout %q, stderr %q; want what the account's budget leaves", code, out, errOut)
	}
	code, out, errOut = b.MustRunMain(t, nil, "status", "-o", "json")
	var got struct {
		Account string `json:"account"`
		Budget  struct{ Total, Spent, Left string }
	}
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, `"type":"budget"`) {
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	if code != 0 || got.Account != "LV100001" || got.Budget.Total != "20.00" || got.Budget.Spent != "15.00" || got.Budget.Left != "5.00" {
		t.Errorf("status -o json: exit %d, budget record %+v; want LV100001's 20.00, 15.00 spent, 5.00 left\n%s\n%s", code, got, out, errOut)
	}
}
