package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/locatorhq/locator/bench"
	"github.com/locatorhq/locator/clock"
)

// The engine and the naive loop both fill a small watchlist on a sped-up
// in-process simulator, and the report reads sensible figures from the
// request log (the figures themselves come from `locator bench`, not from
// here).
func TestLocateRunsSideBySide(t *testing.T) {
	t.Parallel()
	const n = 4
	eng, naive := bench.Symbols('E', n, n), bench.Symbols('N', n, n)
	clk := clock.NewScaled(time.Now(), 20)
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
		if r.Filled != n || r.Expired != 0 || r.Status429 != 0 {
			t.Errorf("%s: %d filled, %d expired, %d 429s; want %d, 0, 0", tc.name, r.Filled, r.Expired, r.Status429, n)
		}
		if r.CallsPerFill["quote"] != 1 || r.CallsPerFill["accept"] < 1 || r.Wall < r.Floor || r.Floor < n-1 {
			t.Errorf("%s: implausible figures %+v", tc.name, r)
		}
	}
}
