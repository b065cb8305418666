package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/console"
)

// sells lists the credit-backs the simulator received, as "SYMBOL
// QUANTITY TYPE".
func (b *cliBundle) sells(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, r := range b.sim.Requests() {
		if r.Method != "POST" || r.Path != "/v1/api/accounts/locates/sell" {
			continue
		}
		var body struct {
			Symbol     string `json:"symbol"`
			Quantity   int64  `json:"quantity"`
			LocateType string `json:"locateType"`
		}
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", body.Symbol, body.Quantity, body.LocateType))
	}
	return out
}

// `credit-back SYMBOL` and `credit-back --all` (spec
// "Short locates" rule 5, "Locate inventory row"): a symbol's unused shares
// are what is available less what a short took, in whole lots; --all
// credits back every symbol's; then nothing is left, which is said, sends
// nothing and exits 0. Misuse exits 2 and sends nothing.
func TestCreditBackUnused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, args := range [][]string{
		{"locate", "HTBX", "500", "--max-price", "0.02"},
		{"locate", "HTBY", "300", "--max-price", "0.05"},
		{"short", "HTBX", "200", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.02", "--yes"},
	} {
		if code, _, errOut := b.MustRunMain(t, nil, args...); code != console.ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"credit-back", "--all", "HTBX", "--yes"}, "not both"},
		{[]string{"credit-back", "--yes"}, "want SYMBOL QTY, SYMBOL or --all"},
		{[]string{"credit-back", "ht/bx", "--yes"}, "symbol"},
		{[]string{"credit-back", "--all", "--type", "locate", "--yes"}, "case-sensitive"},
		{[]string{"credit-back", "--all"}, "pass --yes"},
	} {
		before := len(b.writes())
		if code, _, errOut := b.MustRunMain(t, nil, tc.args...); code != console.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", tc.args, code, errOut, tc.want)
		}
		if w := b.writes(); len(w) != before {
			t.Errorf("%v: writes sent: %v", tc.args, w[before:])
		}
	}
	code, out, errOut := b.MustRunMain(t, nil, "credit-back", "htbx", "--yes")
	if code != console.ExitOK || !strings.Contains(out, "credited — 300 Locate shares credited back") || strings.Contains(out, "HTBY") {
		t.Errorf("credit-back htbx: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = b.MustRunMain(t, nil, "credit-back", "--all", "--yes", "--json")
	// The outcome ends the JSON lines, after the progress events.
	if objs := jsonLines(t, out); code != console.ExitOK || len(objs) == 0 || objs[len(objs)-1]["symbol"] != "HTBY" || objs[len(objs)-1]["state"] != "credited" {
		t.Errorf("credit-back --all: exit %d, %v\n%s", code, objs, errOut)
	}
	if want := []string{"HTBX 300 Locate", "HTBY 300 Locate"}; !slices.Equal(b.sells(t), want) {
		t.Errorf("sells %v, want %v", b.sells(t), want)
	}
	before := len(b.writes())
	code, out, errOut = b.MustRunMain(t, nil, "credit-back", "--all", "--yes")
	if code != console.ExitOK || out != "" || !strings.Contains(errOut, "nothing to credit back: no unused located shares; nothing was sent") {
		t.Errorf("credit-back --all, nothing left: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if w := b.writes(); len(w) != before {
		t.Errorf("nothing to credit back, yet writes sent: %v", w[before:])
	}
}

// The repro: with 300 HTBX located and a working stop
// short of 100, `credit-back HTBX 300 --type Locate --yes` is refused by
// the owner with the numbers, exit 2, nothing sent (it used to credit back
// all 300); 200 goes; --force sends the held 100 too; --force without a
// quantity is bad usage. In process and following a serve.
func TestCreditBackKeepsTheWorkingSellsLocates(t *testing.T) {
	t.Parallel()
	bothWays(t, testSpeed, func(t *testing.T, b *cliBundle) {
		if code, _, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--max-price", "0.02"); code != 0 {
			t.Fatalf("locate: exit %d\n%s", code, errOut)
		}
		if code, _, errOut := b.MustRunMain(t, nil, "short", "HTBX", "100", "--type", "stop", "--stop-price", "11.50", "--ref-price", "12.50", "--max-price", "0.02", "--yes"); code != 0 {
			t.Fatalf("stop short: exit %d\n%s", code, errOut)
		}
		before := len(b.sells(t))
		code, _, errOut := b.MustRunMain(t, nil, "credit-back", "HTBX", "300", "--type", "Locate", "--yes")
		if code != console.ExitUsage || !strings.Contains(errOut, "credit back 300 HTBX Locate: 200 of them are unused") || !strings.Contains(errOut, "--force") {
			t.Errorf("credit-back 300 under a working sell: exit %d, stderr %q; want 2 with the numbers", code, errOut)
		}
		if code, _, errOut := b.MustRunMain(t, nil, "credit-back", "HTBX", "--force", "--yes"); code != console.ExitUsage || !strings.Contains(errOut, "--force goes with SYMBOL QTY") {
			t.Errorf("credit-back --force of the unused: exit %d, stderr %q; want 2", code, errOut)
		}
		if got := b.sells(t)[before:]; len(got) != 0 {
			t.Errorf("refused credit-backs sent %v", got)
		}
		for _, args := range [][]string{{"credit-back", "HTBX", "200"}, {"credit-back", "HTBX", "100", "--force"}} {
			if code, _, errOut := b.MustRunMain(t, nil, args...); code != 0 {
				t.Errorf("%v: exit %d\n%s", args, code, errOut)
			}
		}
		if got := b.sells(t)[before:]; !slices.Equal(got, []string{"HTBX 200 Locate", "HTBX 100 Locate"}) {
			t.Errorf("credit-backs sent %v, want 200 then the forced 100", got)
		}
	})
}
