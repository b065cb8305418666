package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/console"
)

// Reports through the CLI: after a short through locator,
// `report` shows the locate and the short in every console.Format and draws the
// charts; `audit` lists the short with its locate, and exits 3 once a short
// sale is sent without cover; `plan` sizes tomorrow's locate from it.
func TestReportAuditPlanCommands(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	zero := brokersim.Duration(0)
	b.sim.ApplySettings(brokersim.Settings{FeeDelay: &zero}) // the fee posts with the fill
	if code, out, errOut := b.MustRunMain(t, nil, "short", "HTBX", "300", "--limit-price", "12.40", "--ref-price", "12.50", "--max-price", "0.02", "--yes"); code != 0 {
		t.Fatalf("short: exit %d\n%s\n%s", code, out, errOut)
	}

	charts := t.TempDir()
	code, out, errOut := b.MustRunMain(t, nil, "report", "--charts", charts)
	if code != 0 || !strings.Contains(out, "By symbol") || !strings.Contains(out, "HTBX") || !strings.Contains(errOut, "charts:") {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, f := range []string{"net-spend.png", "net-spend.svg", "utilisation.png", "utilisation.svg", "price-per-100.png", "price-per-100.svg"} {
		if st, err := os.Stat(filepath.Join(charts, f)); err != nil || st.Size() == 0 {
			t.Errorf("chart %s: %v", f, err)
		}
	}
	code, out, _ = b.MustRunMain(t, nil, "report", "-o", "json")
	objs := jsonLines(t, out)
	total := objs[len(objs)-1]
	if code != 0 || total["type"] != "total" || total["located"] != float64(300) || total["shorted"] != float64(300) ||
		total["spend"] != "4.50" || total["utilisation"] != "1.0000" || total["pricePer100"] != "1.5000" || total["feeStatus"] != "matched" {
		t.Errorf("report -o json: exit %d\n%s", code, out)
	}
	code, out, _ = b.MustRunMain(t, nil, "report", "-o", "csv")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || !strings.HasPrefix(lines[0], "type,date,symbol,located") || len(lines) != len(objs)+1 {
		t.Errorf("report -o csv: exit %d\n%s", code, out)
	}

	code, out, errOut = b.MustRunMain(t, nil, "audit", "-o", "json")
	rows := jsonLines(t, out)
	if code != 0 || len(rows) != 1 || rows[0]["covered"] != true || rows[0]["coverKind"] != "locate" || rows[0]["source"] != "locator" {
		t.Fatalf("audit: exit %d\n%s\n%s", code, out, errOut)
	}
	b.placeLimit(t, brokerclient.SideSell, brokerclient.OpenCloseOpen, "SPY", 10, "1.00") // no easy-to-borrow check
	code, out, errOut = b.MustRunMain(t, nil, "audit", "-o", "csv")
	if code != console.ExitBroker || !strings.Contains(out, ",SPY,10,") || !strings.Contains(out, "had no locate") || !strings.Contains(errOut, "1 of 2 short sale(s) sent without cover") {
		t.Errorf("audit after an uncovered short: exit %d\n%s\n%s", code, out, errOut)
	}

	watch := writeFile(t, "watchlist.csv", "symbol,quantity\nHTBX,100\nHTBY,100\n")
	code, out, _ = b.MustRunMain(t, nil, "plan", "--watchlist", watch, "-o", "json")
	plan := jsonLines(t, out)
	if code != 0 || len(plan) != 2 || plan[0]["symbol"] != "HTBX" || plan[0]["suggested"] != float64(300) ||
		plan[0]["minPrice"] != "0.0150" || plan[0]["maxPrice"] != "0.0150" || plan[1]["suggested"] != float64(0) || plan[1]["minPrice"] != "-" {
		t.Errorf("plan: exit %d\n%s", code, out)
	}

	for _, args := range [][]string{
		{"report", "--from", "2026-13-01"},
		{"report", "--to", "2026-11-01"},
		{"report", "--from", "2026-11-02", "--to", "2026-11-01"},
		{"audit", "extra"},
		{"plan"},
		{"plan", "--watchlist", watch, "--days", "0"},
	} {
		if code, _, errOut := b.MustRunMain(t, nil, args...); code != console.ExitUsage || errOut == "" {
			t.Errorf("%v: exit %d (%q), want 2", args, code, errOut)
		}
	}
}

// With serve: `report` beside a running owner has the
// owner sync the cash ledger (the Fees operation) and reads the store:
// every ledger read the simulator saw came from the owner, none from the
// report's process, and the report is the locate's.
func TestReportBesideServe(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	serve := b.serve(t)
	if code, out := b.run(t, nil, "locate", "HTBX", "300", "--yes"); code != 0 {
		t.Fatalf("locate: exit %d\n%s", code, out)
	}
	from := len(b.requests(t))
	code, out := b.run(t, nil, "report", "-o", "json")
	objs := jsonLines(t, out)
	if code != 0 || len(objs) == 0 || objs[len(objs)-1]["located"] != float64(300) {
		t.Fatalf("report beside serve: exit %d\n%s", code, out)
	}
	owner, ledgerReads := fmt.Sprintf("(pid %d)", serve.Process.Pid), 0
	for _, r := range b.requests(t)[from:] {
		if strings.Contains(r.Path, "/cash-transactions/") {
			ledgerReads++
			if !strings.Contains(r.UserAgent, owner) {
				t.Errorf("ledger read by %q, not the owner %s", r.UserAgent, owner)
			}
		}
	}
	if ledgerReads == 0 {
		t.Errorf("no ledger read during the report; want the owner's sync")
	}
}
