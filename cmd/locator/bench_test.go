package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/bench"
)

// locator bench runs both runners on a small watchlist on the sped-up
// in-process simulator and writes the report and the chart (the real
// figures come from a full run, not from this test).
func TestBenchWritesReportAndChart(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	dir := t.TempDir()
	code, out, errOut := b.MustRunMain(t, nil, "bench", "--n", "3", "--speed", "20", "--changes", "40", "--workflows", "0", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Modes) != 1 || len(rep.Modes[0].Runs) != 2 || rep.Store.GroupedPerSecond <= 0 || len(rep.Targets) == 0 {
		t.Errorf("report %+v", rep)
	}
	for _, r := range rep.Modes[0].Runs {
		if r.Filled != 3 {
			t.Errorf("%s filled %d of 3", r.Runner, r.Filled)
		}
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "bench.svg")); err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("chart: %v", err)
	}
	if !strings.Contains(out, "engine") || !strings.Contains(out, "naive") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestBenchRefusesBadFlags(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, args := range [][]string{{"bench", "--mode", "fast"}, {"bench", "--n", "0"}, {"bench", "--speed", "0"}} {
		if code, _, errOut := b.MustRunMain(t, nil, args...); code != account.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, account.ExitUsage, errOut)
		}
	}
}
