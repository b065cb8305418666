package bench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/bench"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The engine and the naive loop both fill a small watchlist on a sped-up
// in-process simulator, and the report reads sensible figures from the
// request log (the figures themselves come from `locator bench`, not from
// here).
func TestLocateRunsSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the engine and the naive loop side by side (CI runs it)")
	}
	t.Parallel()
	const n = 4
	eng, naive := bench.Symbols('E', n, n), bench.Symbols('N', n, n)
	// Twice real speed, not ten: on a sped-up clock a scheduling hiccup of
	// the test machine counts that many times over on the broker's, and can
	// bunch two requests into one rate-limit window.
	clk := clock.NewScaled(time.Now(), 2)
	target, err := bench.InProcess(bench.Scenario(append(eng, naive...)), clk)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		run  func() (bench.Run, error)
	}{
		{"engine", func() (bench.Run, error) { return bench.RunEngine(ctx, target, t.TempDir(), eng) }},
		{"naive", func() (bench.Run, error) { return bench.RunNaive(ctx, target, naive) }},
	} {
		r, err := tc.run()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t.Logf("%s: %+v", tc.name, r)
		// At most one 429, recovered: under a loaded machine (CI compiles
		// every package meanwhile) the first requests of a route can reach the
		// broker late and together, and its bucket, started at their arrival,
		// refills later than the client's, started at their sending. The
		// figures with none come from `locator bench` in real time.
		if r.Filled != n || r.Expired != 0 || r.Status429 > 1 {
			t.Errorf("%s: %d filled, %d expired, %d 429s; want %d, 0, at most 1", tc.name, r.Filled, r.Expired, r.Status429, n)
			if log, err := target.Requests(ctx); err == nil {
				for _, q := range log {
					t.Logf("%s %s %s %d", q.Time.Format("15:04:05.000000"), q.Method, q.Path, q.Status)
				}
			}
		}
		if r.CallsPerFill["quote"] != 1 || r.CallsPerFill["accept"] < 1 || r.Wall < r.Floor || r.Floor < n-1 {
			t.Errorf("%s: implausible figures %+v", tc.name, r)
		}
	}
}

// BenchmarkDurableStateChanges measures the store's durable state changes
// (a workflow's record and its transition, synchronous WAL) per second, one
// per transaction and grouped as the engine's loop commits a batch.
func BenchmarkDurableStateChanges(b *testing.B) {
	for _, group := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("group=%d", group), func(b *testing.B) {
			st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), clock.Real{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ws, err := bench.Seed(b.Context(), st, nil, b.N, states.Requested, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			steps := make([]store.Step, len(ws))
			for i, w := range ws {
				s := workflow.StepWorkflow(w, workflow.QuoteTurn{}, workflow.Env{Now: time.Now()})
				steps[i] = store.Step{Prev: w, Next: s.Next, Transition: s.Transition}
			}
			b.ResetTimer()
			for i := 0; i < len(steps); i += group {
				if _, err := st.CommitAll(b.Context(), steps[i:min(i+group, len(steps))]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
		})
	}
}

// BenchmarkLiveWorkflowMemory reports the heap an engine holds per 1,000
// live (quoted, unanswered) workflows.
func BenchmarkLiveWorkflowMemory(b *testing.B) {
	t, err := bench.InProcess(bench.Scenario(nil), clock.Real{})
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	var mb float64
	for i := range b.N {
		if mb, err = bench.Memory(b.Context(), t, b.TempDir(), 1000); err != nil {
			b.Fatalf("run %d: %v", i, err)
		}
	}
	b.ReportMetric(mb, "MB/1000wf")
}

// Recovery kills a process that left open workflows with SIGKILL and an
// engine's Start finds every one of them.
func TestRecoveryAfterSIGKILL(t *testing.T) {
	t.Parallel()
	target, err := bench.InProcess(bench.Scenario(nil), clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	victim := func(db string, n int) *exec.Cmd {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestVictimProcess$")
		cmd.Env = append(os.Environ(), "BENCH_VICTIM_DB="+db, fmt.Sprintf("BENCH_VICTIM_N=%d", n))
		return cmd
	}
	r, err := bench.Recovery(t.Context(), target, victim, t.TempDir(), 50)
	if err != nil {
		t.Fatal(err)
	}
	if r.Open != 50 || r.StartSeconds <= 0 {
		t.Errorf("recovery %+v, want 50 open workflows found", r)
	}
}

// TestVictimProcess is the process TestRecoveryAfterSIGKILL kills; it does
// nothing in a normal run.
func TestVictimProcess(t *testing.T) {
	db := os.Getenv("BENCH_VICTIM_DB")
	if db == "" {
		t.Skip("run by TestRecoveryAfterSIGKILL")
	}
	n, _ := strconv.Atoi(os.Getenv("BENCH_VICTIM_N"))
	bench.Victim(t.Context(), db, n)
}
