package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/bench"
	"github.com/locatorhq/locator/internal/console"
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
		if code, _, errOut := b.MustRunMain(t, nil, args...); code != console.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, console.ExitUsage, errOut)
		}
	}
}

// TestBenchDays: locator bench --mode days runs generated days and says
// days/s and violations; its exit code is 0 exactly when no day broke an
// invariant, and a failed day is printed with the command that reruns it.
// Bad day flags are usage errors.
func TestBenchDays(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary, whose worker processes run the days")
	}
	// The built binary: its days run in worker processes of itself
	// (bench --days-worker), which this test's own binary is not.
	bin := buildBinary(t)
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append([]string{"bench", "--mode", "days"}, args...)...)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	code, out, errOut := run("--days", "2", "--seed", "3", "--ops", "15", "--days-parallel", "2")
	if !strings.Contains(out, "2 days,") || !strings.Contains(out, "days/s") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	broke := strings.Contains(out, "invariant")
	if broke != (code == console.ExitFailure) || (!broke && code != 0) {
		t.Errorf("exit %d with a violation printed: %v\n%s", code, broke, out)
	}
	if broke && !strings.Contains(out, "locator bench --mode days --days 1 --seed") {
		t.Errorf("a failed day without its rerun command:\n%s", out)
	}
	for _, args := range [][]string{{"--days", "0"}, {"--seed", "0"}} {
		if code, _, errOut := run(args...); code != console.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, console.ExitUsage, errOut)
		}
	}
}
