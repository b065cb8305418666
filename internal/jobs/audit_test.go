package jobs_test

import (
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/jobs"
)

// The daily job: an audit run writes the day's trail to
// its folder as CSV and JSON lines; a short sale with a locate behind it
// passes, one sent without cover fails the run.
func TestAuditJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dir := t.TempDir()
	job := jobs.Job{Name: "audit", Kind: jobs.KindAudit, Days: 1, Dir: dir}
	b.locate("HTBX", 300, false)
	b.shortSell("HTBX", 300, "")
	detail, err := b.runner.Audit(t.Context(), job.Days, job.Dir)
	if err != nil || !strings.Contains(detail, "1 short sale(s), 0 sent without cover") {
		t.Fatalf("audit: %q, %v", detail, err)
	}
	// No locate: the broker refuses it, the audit flags it.
	if _, _, err := b.client.Orders.Place(t.Context(), "LV100001", brokerclient.OrderRequest{Symbol: "HTBY", Side: brokerclient.SideSell,
		OpenClose: brokerclient.OpenCloseOpen, OrderType: brokerclient.OrderTypeMarket, SecurityType: brokerclient.SecurityTypeStock,
		TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: 100, Route: "SMART"}); err != nil {
		t.Fatal(err)
	}
	_, err = b.runner.Audit(t.Context(), job.Days, job.Dir)
	var f *jobs.Failure
	if !errors.As(err, &f) || !strings.Contains(f.Detail, "2 short sale(s), 1 sent without cover") {
		t.Fatalf("audit with an uncovered short: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "audit-2026-11-25_2026-11-25.*"))
	if len(files) != 2 {
		t.Fatalf("files %v, want the day's .csv and .jsonl", files)
	}
	fh, err := os.Open(filepath.Join(dir, "audit-2026-11-25_2026-11-25.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(recs) != 3 || recs[1][8] != "true" || recs[2][4] != "HTBY" || recs[2][8] != "false" {
		t.Errorf("csv %v, %v", recs, err)
	}
}

// An audit job needs its folder; its days default to the day.
func TestAuditJobConfig(t *testing.T) {
	t.Parallel()
	cfg, err := jobs.ParseConfig([]byte(`{"jobs": [{"name": "sho", "kind": "audit", "schedule": "0 30 16 * * MON-FRI", "dir": "/var/lib/locator/audit"}]}`))
	if err != nil || cfg.Jobs[0].Dir != "/var/lib/locator/audit" || cfg.Jobs[0].Days != 1 {
		t.Fatalf("%+v, %v", cfg, err)
	}
	if _, err := jobs.ParseConfig([]byte(`{"jobs": [{"name": "sho", "kind": "audit", "schedule": "0 30 16 * * MON-FRI"}]}`)); err == nil || !strings.Contains(err.Error(), "dir is required") {
		t.Errorf("no dir: %v", err)
	}
}
