package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/bench"
	"github.com/locatorhq/locator/internal/console"
)

// benchCommand measures the engine against the naive loop on the
// simulator, and the store, memory and recovery figures (package bench).
type benchCommand struct {
	m         *Main
	sizes     []int
	speed     float64
	mode      string
	simURL    string
	out       string
	changes   int
	group     int
	workflows int
	victim    string
	victimN   int
	fleet     bench.FleetOptions
	days      bench.DaysOptions
}

func (c *benchCommand) flags(fs *pflag.FlagSet) {
	fs.IntSliceVar(&c.sizes, "n", []int{20, 100}, "watchlist sizes to run")
	fs.StringVar(&c.mode, "mode", "in-process", `"in-process" (a sped-up clock), "sim" (a locator sim in real time), "both", "fleet" (serve processes on Postgres), or "days" (generated trading days checked against the simulator)`)
	fs.Float64Var(&c.speed, "speed", 10, "clock speed of the in-process runs")
	fs.StringVar(&c.simURL, "sim-url", "", "base URL of a running `locator sim` (default: start one); it must serve the pools of --print-scenario")
	fs.StringVar(&c.out, "out", "docs", "directory for bench.json and bench.svg, or fleet.json (empty: write none)")
	fs.IntVar(&c.changes, "changes", 4000, "state changes of the store throughput run")
	fs.IntVar(&c.group, "group", 64, "steps per transaction of the grouped store run")
	fs.IntVar(&c.workflows, "workflows", 1000, "open workflows of the memory and recovery runs (0: skip them)")
	fs.StringVar(&c.victim, "victim", "", "internal: seed open workflows in this database and wait to be killed")
	fs.IntVar(&c.victimN, "victim-workflows", 1000, "internal: how many --victim seeds")
	c.fleet.Register(fs)
	c.days.Register(fs)
	fs.MarkHidden("victim")
	fs.MarkHidden("victim-workflows")
}

func (c *benchCommand) run(ctx context.Context, args []string) error {
	if c.victim != "" {
		return bench.Victim(ctx, c.victim, c.victimN)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(c.m.Stderr, "bench: "+format+"\n", args...) }
	if c.mode == "days" {
		if err := c.days.Check(); err != nil {
			return console.Usagef("%v", err)
		}
		return bench.Days(ctx, c.days, c.m.Stdout)
	}
	if c.mode == "fleet" {
		c.fleet.Exe, c.fleet.DB, c.fleet.Logf = exe, c.m.Getenv("LOCATOR_DB"), logf
		if err := c.fleet.Check(); err != nil {
			return console.Usagef("%v", err)
		}
		run, err := bench.Fleet(ctx, c.fleet)
		if err != nil {
			return err
		}
		return run.Print(c.m.Stdout, c.out)
	}
	o := bench.Options{Sizes: c.sizes, Mode: c.mode, Speed: c.speed, SimURL: c.simURL, Out: c.out, Changes: c.changes,
		Group: c.group, Workflows: c.workflows, Exe: exe, Logf: logf}
	if err := o.Check(); err != nil {
		return console.Usagef("%v", err)
	}
	rep, err := bench.Measure(ctx, o)
	if err != nil {
		return err
	}
	rep.Print(c.m.Stdout)
	return nil
}
