package tradingday

import (
	"context"
	"slices"
)

// Shrink makes a failed day smaller: it cuts the operations after the one
// the violation followed, then drops one operation at a time, from the
// last, keeping each drop after which a run of the day (same seed, same
// scenario) still breaks the same invariant. It runs the day at most
// budget times and returns the smallest day found and its result (day
// and res themselves when nothing smaller breaks it). TestGeneratedDays
// shrinks the one day asked for with -seed; it is built with the tests
// alone (the bench reports a day's seed and rerun command instead).
func Shrink(ctx context.Context, day Day, res *Result, dir string, budget int) (Day, *Result) {
	if res == nil || res.Violation == nil {
		return day, res
	}
	inv := res.Violation.Invariant
	best, bestRes := day, res
	try := func(ops []Op) bool {
		if budget <= 0 || ctx.Err() != nil {
			return false
		}
		budget--
		d := day
		d.Ops = ops
		r, err := Run(ctx, d, dir)
		if err != nil || r.Violation == nil || r.Violation.Invariant != inv {
			return false
		}
		best, bestRes = d, r
		return true
	}
	if v := res.Violation.Op; v >= 0 && v+1 < len(day.Ops) {
		try(slices.Clone(day.Ops[:v+1]))
	}
	for i := len(best.Ops) - 1; i >= 0 && budget > 0; i-- {
		if i >= len(best.Ops) {
			continue
		}
		try(slices.Delete(slices.Clone(best.Ops), i, i+1))
	}
	return best, bestRes
}
