package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/tradingday"
)

// DaysOptions are the settings of `locator bench --mode days`: generated
// trading days (package tradingday) on the in-process fake clock.
type DaysOptions struct {
	Days     int    // days to run, of seeds Seed, Seed+1, ...
	Seed     uint64 // the first seed
	Ops      int    // operations a day
	Parallel int    // days at once, each in a worker process of its own
}

// Register adds the flags of --mode days.
func (o *DaysOptions) Register(fs *pflag.FlagSet) {
	fs.IntVar(&o.Days, "days", 100, "--mode days: generated trading days to run")
	fs.Uint64Var(&o.Seed, "seed", 1, "--mode days: the first day's seed (one day: --days 1 --seed N)")
	fs.IntVar(&o.Ops, "ops", 40, "--mode days: operations a day")
	fs.IntVar(&o.Parallel, "days-parallel", 6, "--mode days: days run at once, each in a process of its own")
}

// Check refuses options that cannot run.
func (o DaysOptions) Check() error {
	if o.Days < 1 || o.Ops < 1 || o.Parallel < 1 || o.Seed == 0 {
		return fmt.Errorf("--days, --ops and --days-parallel must be positive, --seed at least 1")
	}
	return nil
}

// Days runs the generated days, in o.Parallel worker processes of exe
// (`locator bench --days-worker`, tradingday.Work), and writes a line per failed day (its
// seed, the first invariant broken, the command that reruns it and the
// operations that led to it), then days/s and the count of violations;
// it reports an error when a day broke an invariant or failed to run.
func Days(ctx context.Context, o DaysOptions, w io.Writer, exe string) error {
	seeds := make([]uint64, o.Days)
	for i := range seeds {
		seeds[i] = o.Seed + uint64(i)
	}
	fmt.Fprintf(w, "generated days: seeds %d..%d, %d operations each, %d at once\n", seeds[0], seeds[len(seeds)-1], o.Ops, o.Parallel)
	start := time.Now()
	runs := tradingday.RunDays(ctx, seeds, o.Ops, o.Parallel, func() *exec.Cmd {
		return exec.CommandContext(ctx, exe, "bench", "--days-worker")
	})
	wall := time.Since(start)
	violations, failed, ops := 0, 0, 0
	for _, d := range runs {
		switch {
		case d.Err != nil:
			failed++
			fmt.Fprintf(w, "seed %d: did not run: %v\n", d.Seed, d.Err)
		case d.Result.Violation != nil:
			violations++
			fmt.Fprint(w, tradingday.Describe(d.Result, o.Ops))
		}
		if d.Result != nil {
			ops += d.Result.Ran
		}
	}
	fmt.Fprintf(w, "%d days, %d operations in %s: %.2f days/s; %d violations, %d days that did not run\n",
		len(runs), ops, wall.Round(time.Millisecond), float64(len(runs))/wall.Seconds(), violations, failed)
	if violations+failed > 0 {
		return fmt.Errorf("%d of %d generated days broke an invariant or did not run", violations+failed, len(runs))
	}
	return nil
}
