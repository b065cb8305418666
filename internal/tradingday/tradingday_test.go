package tradingday_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/tradingday"
)

var (
	seedFlag = flag.Uint64("seed", 0, "run only the generated day of this seed")
	daysFlag = flag.Int("days", 30, "generated days to run (-short: at most 4)")
	opsFlag  = flag.Int("ops", 40, "operations a generated day")
)

// workerEnv, set, makes this test binary a worker process of RunDays.
const workerEnv = "LOCATOR_TRADINGDAY_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "" {
		os.Exit(m.Run())
	}
	if err := tradingday.Work(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestGeneratedDays runs generated trading days (30 of 40 operations by
// default, seeds 1..30; -seed N runs one) against the simulator and checks
// every invariant of the checker on each: a failure names the seed, the
// first invariant broken, the operations that led to it and the command
// that runs the day again; with -seed, the failed day is shrunk too (the
// fewest of its operations that still break the same invariant).
func TestGeneratedDays(t *testing.T) {
	seeds := []uint64{}
	if *seedFlag != 0 {
		seeds = append(seeds, *seedFlag)
	} else {
		days := *daysFlag
		if testing.Short() {
			days = min(days, 4) // the edit loop's few; CI runs the 30
		}
		for i := range days {
			seeds = append(seeds, uint64(i+1))
		}
	}
	t.Logf("days of seeds %d..%d, %d operations each", seeds[0], seeds[len(seeds)-1], *opsFlag)
	// Four worker processes, each this test binary (TestMain) running a
	// day at a time.
	results := tradingday.RunDays(t.Context(), seeds, *opsFlag, 4, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"=1")
		return cmd
	})
	for _, d := range results {
		switch {
		case d.Err != nil:
			t.Errorf("seed %d: %v", d.Seed, d.Err)
		case d.Result.Violation != nil:
			t.Errorf("%s", tradingday.Describe(d.Result, *opsFlag))
			if *seedFlag != 0 { // one day asked for: make it smaller too
				small, res := tradingday.Shrink(t.Context(), tradingday.Generate(d.Seed, *opsFlag), d.Result, t.TempDir(), 60)
				t.Logf("shrunk to %d of %d operations, still breaking %s:\n%s", len(small.Ops), *opsFlag, res.Violation.Invariant, tradingday.Describe(res, *opsFlag))
			}
		default:
			t.Logf("seed %d: %d operations, every invariant held", d.Seed, d.Result.Ran)
		}
	}
}

// TestGenerateIsDeterministic: one seed is one day.
func TestGenerateIsDeterministic(t *testing.T) {
	a, b := tradingday.Generate(7, 60), tradingday.Generate(7, 60)
	for i := range a.Ops {
		if a.Ops[i].String() != b.Ops[i].String() {
			t.Fatalf("op %d: %s then %s", i, a.Ops[i], b.Ops[i])
		}
	}
	if c := tradingday.Generate(8, 60); c.Ops[0].String() == a.Ops[0].String() && c.Ops[1].String() == a.Ops[1].String() && c.Ops[2].String() == a.Ops[2].String() {
		t.Errorf("seeds 7 and 8 start alike: %v", c.Ops[:3])
	}
}

// TestRunDaysSaysWhyADayDidNotRun: a worker that cannot start, or ends
// before it answers, fails the days it was given with why, and the others
// are said not run; none is lost or counted as passed.
func TestRunDaysSaysWhyADayDidNotRun(t *testing.T) {
	for name, worker := range map[string]func() *exec.Cmd{
		"cannot start": func() *exec.Cmd { return exec.Command(filepath.Join(t.TempDir(), "no-such-worker")) },
		"ends at once": func() *exec.Cmd { return exec.Command("true") },
	} {
		runs := tradingday.RunDays(t.Context(), []uint64{1, 2, 3}, 5, 2, worker)
		for i, d := range runs {
			if d.Seed != uint64(i+1) || d.Err == nil || d.Result != nil {
				t.Errorf("%s: day %d: %+v, want seed %d failed", name, i, d, i+1)
			}
		}
		if !strings.Contains(runs[0].Err.Error(), map[string]string{"cannot start": "start a worker process", "ends at once": "the worker process ended"}[name]) {
			t.Errorf("%s: %v", name, runs[0].Err)
		}
	}
}
