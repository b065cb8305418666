package workflow_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/workflow"
)

// The locate budget reads as LOCATOR_LOCATE_BUDGET gives it,
// refuses a bad one, and refuses an offer past its total or its symbol's
// bound with the numbers, letting one that fits.
func TestBudget(t *testing.T) {
	t.Parallel()
	b, err := workflow.ParseBudget("20, htbx=10")
	if err != nil || b.String() != "20.00,HTBX=10.00" {
		t.Fatalf("ParseBudget: %v, %v", b, err)
	}
	for _, bad := range []string{"-5", "x", "HTBX=", "ht/bx=5", "0"} {
		if _, err := workflow.ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) accepted", bad)
		}
	}
	d := decimal.RequireFromString
	for _, tc := range []struct {
		symbol string
		total  string
		spent  workflow.Spent
		want   string
	}{
		{"HTBY", "15", workflow.Spent{Total: d("15")}, "the offer's 15.00 with 15.00 spent today would pass the day's locate budget of 20.00 (5.00 left)"},
		{"HTBX", "6", workflow.Spent{Total: d("5"), Symbol: d("5")}, "the offer's 6.00 with 5.00 spent on HTBX today would pass its locate budget of 10.00 (5.00 left)"},
		{"HTBY", "5", workflow.Spent{Total: d("15")}, ""},
		{"HTBX", "5", workflow.Spent{Total: d("5"), Symbol: d("5")}, ""},
	} {
		if got := b.Refuses(tc.symbol, d(tc.total), tc.spent); got != tc.want {
			t.Errorf("%s %s on %+v: %q, want %q", tc.symbol, tc.total, tc.spent, got, tc.want)
		}
	}
}
