package bench

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/tradingday"
)

// Command is `locator bench`: its flags (Register), then the benchmark
// its --mode names (Run): generated trading days (Days), serve processes
// on one database (Fleet), or the batch locates, store, memory and
// recovery runs of Options (Measure).
type Command struct {
	Options
	Fleet   FleetOptions
	Days    DaysOptions
	victim  string
	victimN int
	worker  bool
}

// Register declares the flags of every mode on fs.
func (c *Command) Register(fs *pflag.FlagSet) {
	fs.IntSliceVar(&c.Sizes, "n", []int{20, 100}, "watchlist sizes to run")
	fs.StringVar(&c.Mode, "mode", "in-process", `"in-process" (a sped-up clock), "sim" (a locator sim in real time), "both", "fleet" (serve processes on Postgres), or "days" (generated trading days checked against the simulator)`)
	fs.Float64Var(&c.Speed, "speed", 10, "clock speed of the in-process runs")
	fs.BoolVar(&c.Naive, "naive", true, "run the naive loop beside the engine (--naive=false: the engine alone, a sim run's N = 100 in two minutes rather than eight)")
	fs.StringVar(&c.SimURL, "sim-url", "", "base URL of a running `locator sim` (default: start one); it must serve the pools of --print-scenario")
	fs.StringVar(&c.Out, "out", "docs", "directory for bench.json and bench.svg, or fleet.json (empty: write none)")
	fs.IntVar(&c.Changes, "changes", 4000, "state changes of the store throughput run")
	fs.IntVar(&c.Group, "group", 64, "steps per transaction of the grouped store run")
	fs.IntVar(&c.Workflows, "workflows", 1000, "open workflows of the memory and recovery runs (0: skip them)")
	fs.StringVar(&c.victim, "victim", "", "internal: seed open workflows in this database and wait to be killed")
	fs.IntVar(&c.victimN, "victim-workflows", 1000, "internal: how many --victim seeds")
	c.Fleet.Register(fs)
	c.Days.Register(fs)
	fs.BoolVar(&c.worker, "days-worker", false, "internal: run the generated days read from stdin, one at a time, their results on stdout")
	fs.MarkHidden("victim")
	fs.MarkHidden("days-worker")
	fs.MarkHidden("victim-workflows")
}

// Run runs the benchmark, its report printed on w and its steps logged on
// logw; exe is the locator binary (the processes it starts), db the
// database of a fleet (LOCATOR_DB). An option a mode cannot run with is
// refused (exit 2) before anything runs.
func (c *Command) Run(ctx context.Context, w, logw io.Writer, exe, db string) error {
	switch {
	case c.victim != "":
		return Victim(ctx, c.victim, c.victimN)
	case c.worker:
		return tradingday.Work(ctx, os.Stdin, w)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(logw, "bench: "+format+"\n", args...) }
	switch c.Mode {
	case "days":
		if err := c.Days.Check(); err != nil {
			return console.Usagef("%v", err)
		}
		return Days(ctx, c.Days, w, exe)
	case "fleet":
		c.Fleet.Exe, c.Fleet.DB, c.Fleet.Logf = exe, db, logf
		if err := c.Fleet.Check(); err != nil {
			return console.Usagef("%v", err)
		}
		run, err := Fleet(ctx, c.Fleet)
		if err != nil {
			return err
		}
		return run.Print(w, c.Out)
	}
	c.Exe, c.Logf = exe, logf
	if err := c.Check(); err != nil {
		return console.Usagef("%v", err)
	}
	rep, err := Measure(ctx, c.Options)
	if err != nil {
		return err
	}
	rep.Print(w)
	return nil
}
