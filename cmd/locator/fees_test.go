package main

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// feesJSONLines decodes every stdout line, failing on one that is not JSON.
func feesJSONLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		objs = append(objs, o)
	}
	return objs
}

// Spec "Cash ledger" and "Account" (totalLocateCosts):
// after a real locate `fees` syncs the ledger and finds the fee matched and
// today's total agreeing (exit 0); a second run inserts nothing; `size`
// reads the located inventory and prices the lots missing for a target.
func TestFeesAndSizeAfterLocate(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	zero := brokersim.Duration(0)
	b.sim.ApplySettings(brokersim.Settings{FeeDelay: &zero}) // the fee posts with the fill
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--yes"); code != 0 {
		t.Fatalf("locate: exit %d\n%s\n%s", code, out, errOut)
	}
	writes := len(b.writes())

	code, out, errOut := b.MustRunMain(t, nil, "fees")
	if code != 0 {
		t.Fatalf("fees: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"DATE", "SYMBOL", "EXPECTED", "CHARGED", "STATUS", "HTBX", "300", "4.50", "matched", "agrees", "1 matched, 0 pending, 0 missing"} {
		if !strings.Contains(out, want) {
			t.Errorf("fees output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = b.MustRunMain(t, nil, "fees", "--json")
	objs := feesJSONLines(t, out)
	last := objs[len(objs)-1]
	if code != 0 || objs[0]["type"] != "fee" || objs[0]["status"] != "matched" || objs[0]["charged"] != "4.50" ||
		last["type"] != "summary" || last["inserted"] != float64(0) || last["problems"] != float64(0) {
		t.Errorf("fees --json: exit %d\n%s", code, out)
	}

	code, out, errOut = b.MustRunMain(t, nil, "size", "HTBX", "--price", "12.50", "--target", "1000")
	if code != 0 {
		t.Fatalf("size: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"300 shares shortable now, bound by located inventory", "buying power", "locate 700 more (7 lots of 100), about 10.50 at the last offered 0.0150"} {
		if !strings.Contains(out, want) {
			t.Errorf("size output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = b.MustRunMain(t, nil, "size", "AAPL", "--price", "190", "--json")
	var z console.SizingJSON
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &z); err != nil || code != 0 {
		t.Fatalf("size --json: exit %d %q %v", code, out, err)
	}
	if !z.EasyToBorrow || z.Binding != string(locator.LimitBuyingPower) || z.Shortable <= 0 || len(z.Limits) != 3 || z.Limits[1].Shares != nil {
		t.Errorf("size AAPL: %+v", z)
	}
	if n := len(b.writes()); n != writes {
		t.Errorf("fees and size sent %d writes: %v", n-writes, b.writes()[writes:])
	}
}

// A missing fee, a wrong one and an unexplained charge make `fees` exit 3,
// with each shown for what it is; a fee still inside the grace period is
// only pending. The workflows are written to the database directly (one
// filled five days ago), the charges posted through the simulator's admin.
func TestFeesProblemsExit3(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ctx := t.Context()
	now := b.clk.Now()
	today := ledger.TradeDate(now).Format(time.DateOnly)
	add := func(clk clock.Clock, symbol string, qty int64, price string) *workflow.Workflow {
		st, err := store.Open(ctx, b.env["LOCATOR_DB"], clk)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		id := uuid.NewString()
		w := &workflow.Workflow{ID: "wf-" + id, Kind: states.Locate, Account: "LV100001", Symbol: symbol, Requested: qty, Quantity: qty,
			QuoteReqID: id, AcceptedID: id, State: states.Filled, Price: decimal.RequireFromString(price)}
		if err := st.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	add(clock.NewFake(now.Add(-5*24*time.Hour)), "HTBX", 200, "0.0150") // missing: its grace has passed
	wrong := add(b.clk, "HTBX", 300, "0.0150")                          // charged 9.00
	add(b.clk, "HTBY", 100, "0.0300")                                   // pending
	if err := b.sim.AddCashRows([]brokersim.ScenarioCashRow{
		{Account: "LV100001", Date: today, CashType: "Locate Fees", Withdraw: brokersim.Dec(decimal.RequireFromString("9.00")), Note: "Locate fee HTBX 300 shares (quoteReqID " + wrong.QuoteReqID + ")"},
		{Account: "LV100001", Date: today, CashType: "Locate Fees", Withdraw: brokersim.Dec(decimal.RequireFromString("7.77")), Note: "Locate fee ZZZZ 500 shares"},
	}); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := b.MustRunMain(t, nil, "fees", "--since", ledger.TradeDate(now).AddDate(0, 0, -7).Format(time.DateOnly))
	if code != 3 {
		t.Fatalf("fees: exit %d, want 3\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"missing since", "wrong amount (+4.50)", "pending until", "unexplained", "Locate fee ZZZZ 500 shares", "differs",
		"0 matched, 1 pending, 1 missing, 1 wrong amount, 1 unexplained: 4 to look into"} {
		if !strings.Contains(out, want) {
			t.Errorf("fees output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "4 problem(s)") {
		t.Errorf("stderr %q", errOut)
	}

	code, out, _ = b.MustRunMain(t, nil, "fees", "--csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || code != 3 {
		t.Fatalf("fees --csv: exit %d, %v\n%s", code, err, out)
	}
	status := map[string]string{}
	for _, r := range recs[1:] {
		status[r[1]+" "+r[2]+" "+r[5]] = r[8]
	}
	for k, v := range map[string]string{
		"fee HTBX 0.00": "missing", "fee HTBX 9.00": "wrong amount", "fee HTBY 0.00": "pending", "fee ZZZZ 7.77": "unexplained",
	} {
		if status[k] != v {
			t.Errorf("csv %q: %q, want %q\n%s", k, status[k], v, out)
		}
	}
	if recs[0][0] != "date" || recs[len(recs)-1][1] != "day" {
		t.Errorf("csv header or day row: %v", recs)
	}
}

// Bad input exits 2 and sends nothing (docs/design.md rule 8).
func TestFeesAndSizeBadInput(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, args := range [][]string{
		{"fees", "--since", "2026-13-01"},
		{"fees", "--csv", "--json"},
		{"fees", "--grace", "-1h"},
		{"fees", "extra"},
		{"size"},
		{"size", "HTBX"},
		{"size", "HTBX", "--price", "-1"},
		{"size", "HTBX", "--price", "abc"},
		{"size", "ht/bx", "--price", "1"},
		{"size", "HTBX", "--price", "1", "--target", "-100"},
		{"size", "HTBX", "AAPL", "--price", "1"},
	} {
		code, _, errOut := b.MustRunMain(t, nil, args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d (%q), want 2 with a message", args, code, errOut)
		}
	}
	if n := len(b.sim.Requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
	// A first date after today is refused too; today is the broker's,
	// which takes one read of the account to know (nothing is written).
	if code, _, errOut := b.MustRunMain(t, nil, "fees", "--since", "2999-01-01"); code != 2 || !strings.Contains(errOut, "after the broker's today") {
		t.Errorf("--since 2999-01-01: exit %d (%q), want 2", code, errOut)
	}
	if w := b.writes(); len(w) != 0 {
		t.Errorf("writes sent: %v", w)
	}
}

// With the broker's clock two days behind this machine (a
// replayed day), `locator fees` and `run --once` of a reconcile job run the
// one check (ledger.Check) on the broker's dates: the same fee matched and
// exit 0; with a charge nothing explains, the same problem and exit 3.
func TestFeesAndReconcileJobAgreeOnBrokerDate(t *testing.T) {
	t.Parallel()
	b := setupCLI(t, brokersim.WithClockSkew(-48*time.Hour))
	zero := brokersim.Duration(0)
	b.sim.ApplySettings(brokersim.Settings{FeeDelay: &zero}) // the fee posts with the fill
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--yes"); code != 0 {
		t.Fatalf("locate: exit %d\n%s\n%s", code, out, errOut)
	}
	cfg := writeFile(t, "locator.json", `{"jobs": [
  {"name": "fees", "kind": "reconcile", "schedule": "0 30 18 * * *", "holidays": "run", "days": 31}
]}`)
	brokerToday := ledger.TradeDate(b.sim.Now()).Format(time.DateOnly)
	check := func(wantCode int, wantSummary string) {
		t.Helper()
		code, out, errOut := b.MustRunMain(t, nil, "fees", "-o", "json")
		objs := feesJSONLines(t, out)
		fee, last := objs[0], objs[len(objs)-1]
		if code != wantCode || fee["status"] != "matched" || fee["charged"] != "4.50" || fee["ledgerDate"] != brokerToday || last["today"] != brokerToday {
			t.Errorf("fees: exit %d, want %d\n%s\n%s", code, wantCode, out, errOut)
		}
		code, out, errOut = b.MustRunMain(t, nil, "run", "--config", cfg, "--once", "fees")
		if code != wantCode || !strings.Contains(out, wantSummary) {
			t.Errorf("run --once fees: exit %d, want %d with %q\n%s\n%s", code, wantCode, wantSummary, out, errOut)
		}
	}
	check(console.ExitOK, "1 matched, 0 pending, 0 missing, 0 wrong amount, 0 unexplained")
	if err := b.sim.AddCashRows([]brokersim.ScenarioCashRow{{Account: "LV100001", Date: brokerToday, CashType: "Locate Fees",
		Withdraw: brokersim.Dec(decimal.RequireFromString("7.77")), Note: "Locate fee ZZZZ 500 shares"}}); err != nil {
		t.Fatal(err)
	}
	check(console.ExitBroker, "1 matched, 0 pending, 0 missing, 0 wrong amount, 1 unexplained")
}
