package tradingday_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/locatorhq/locator/tradingday"
)

var (
	seedFlag = flag.Uint64("seed", 0, "run only the generated day of this seed")
	daysFlag = flag.Int("days", 30, "generated days to run")
	opsFlag  = flag.Int("ops", 40, "operations a generated day")
)

// TestGeneratedDays runs generated trading days (30 of 40 operations by
// default, seeds 1..30; -seed N runs one) against the simulator and checks
// every invariant of the checker on each: a failure names the seed, the
// first invariant broken, the operations that led to it and the command
// that runs the day again.
func TestGeneratedDays(t *testing.T) {
	seeds := []uint64{}
	if *seedFlag != 0 {
		seeds = append(seeds, *seedFlag)
	} else {
		for i := range *daysFlag {
			seeds = append(seeds, uint64(i+1))
		}
	}
	t.Logf("days of seeds %d..%d, %d operations each", seeds[0], seeds[len(seeds)-1], *opsFlag)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			// Days run side by side: each is mostly virtual time waiting
			// for its goroutines to sleep, not CPU.
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			res, err := tradingday.Run(ctx, tradingday.Generate(seed, *opsFlag), t.TempDir())
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if res.Violation != nil {
				t.Errorf("%s", tradingday.Describe(res, *opsFlag))
				return
			}
			t.Logf("seed %d: %d operations, every invariant held", seed, res.Ran)
		})
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
