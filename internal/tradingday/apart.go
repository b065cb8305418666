package tradingday

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// DayRun is one seed's day as RunDays ran it.
type DayRun struct {
	Seed   uint64
	Result *Result
	Err    error
	Wall   time.Duration
}

// RunDay runs the day of seed, ops operations, on its own simulator and
// database under dir, within dayWait.
func RunDay(ctx context.Context, seed uint64, ops int, dir string) DayRun {
	dctx, cancel := context.WithTimeout(ctx, dayWait)
	defer cancel()
	start := time.Now()
	res, err := Run(dctx, Generate(seed, ops), dir)
	return DayRun{Seed: seed, Result: res, Err: err, Wall: time.Since(start)}
}

// RunDays runs the days of seeds, ops operations each, in procs worker
// processes that each run one day at a time (Work), and returns them in
// the order of seeds; worker makes a worker's command, its stdin and
// stdout left for RunDays.
//
// Days run apart because a day's virtual clock moves only while its
// whole process is quiet (driveDays asks clock.Busy, which counts every
// goroutine of the process): days side by side in one process wait on
// each other's work, six of them ran barely faster than one, and
// whether a day's goroutines were counted depended on its neighbours.
// A process each makes a seed's run the same at any parallelism.
func RunDays(ctx context.Context, seeds []uint64, ops, procs int, worker func() *exec.Cmd) []DayRun {
	out := make([]DayRun, len(seeds))
	next := make(chan int)
	// The feeder stops when the run is cancelled or every worker ended.
	feed, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer close(next)
		for i := range seeds {
			select {
			case next <- i:
			case <-feed.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range max(procs, 1) {
		wg.Go(func() { runWorker(ctx, worker(), ops, seeds, next, out) })
	}
	wg.Wait()
	stop()
	for i, d := range out {
		if d.Result == nil && d.Err == nil {
			out[i] = DayRun{Seed: seeds[i], Err: errors.New("not run: the run was cancelled, or every worker process ended")}
		}
	}
	return out
}

// dayLine is a DayRun as a worker writes it: a JSON line.
type dayLine struct {
	Seed   uint64
	Result *Result `json:",omitempty"`
	Err    string  `json:",omitempty"`
	Wall   time.Duration
}

// runWorker starts cmd and runs on it the days whose index next hands
// it, one at a time, into out; a worker that cannot start or ends early
// fails the day it had.
func runWorker(ctx context.Context, cmd *exec.Cmd, ops int, seeds []uint64, next <-chan int, out []DayRun) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err1 := cmd.StdinPipe()
	lines, err2 := cmd.StdoutPipe()
	err := errors.Join(err1, err2)
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		for i := range next {
			out[i] = DayRun{Seed: seeds[i], Err: fmt.Errorf("start a worker process: %w", err)}
		}
		return
	}
	defer cmd.Wait()
	defer in.Close()
	read := bufio.NewScanner(lines)
	read.Buffer(nil, 64<<20)
	for i := range next {
		fmt.Fprintln(in, seeds[i], ops)
		var l dayLine
		if !read.Scan() {
			out[i] = DayRun{Seed: seeds[i], Err: fmt.Errorf("the worker process ended: %v %s", read.Err(), strings.TrimSpace(stderr.String()))}
			break
		}
		if err := json.Unmarshal(read.Bytes(), &l); err != nil {
			out[i] = DayRun{Seed: seeds[i], Err: fmt.Errorf("the worker process wrote %q: %w", read.Bytes(), err)}
			break
		}
		out[i] = DayRun{Seed: l.Seed, Result: l.Result, Wall: l.Wall}
		if l.Err != "" {
			out[i].Err = errors.New(l.Err)
		}
	}
	if ctx.Err() != nil {
		cmd.Process.Kill()
	}
}

// Work is a worker process of RunDays: it reads a day a line from in
// (its seed and its count of operations), runs it in a temporary folder
// of its own, and writes its DayRun to out as a JSON line, until in ends.
func Work(ctx context.Context, in io.Reader, out io.Writer) error {
	dir, err := os.MkdirTemp("", "locator-days-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	seeds := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for seeds.Scan() {
		var seed uint64
		var ops int
		if _, err := fmt.Sscan(seeds.Text(), &seed, &ops); err != nil {
			return fmt.Errorf("days worker: %q is not a seed and a count of operations: %w", seeds.Text(), err)
		}
		d := RunDay(ctx, seed, ops, dir)
		l := dayLine{Seed: d.Seed, Result: d.Result, Wall: d.Wall}
		if d.Err != nil {
			l.Err = d.Err.Error()
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return seeds.Err()
}
