package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/bench"
	"github.com/locatorhq/locator/console"
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
}

func (c *benchCommand) flags(fs *pflag.FlagSet) {
	fs.IntSliceVar(&c.sizes, "n", []int{20, 100}, "watchlist sizes to run")
	fs.StringVar(&c.mode, "mode", "in-process", `"in-process" (a sped-up clock), "sim" (a locator sim in real time) or "both"`)
	fs.Float64Var(&c.speed, "speed", 10, "clock speed of the in-process runs")
	fs.StringVar(&c.simURL, "sim-url", "", "base URL of a running `locator sim` (default: start one); it must serve the pools of --print-scenario")
	fs.StringVar(&c.out, "out", "docs", "directory for bench.json and bench.svg (empty: write neither)")
	fs.IntVar(&c.changes, "changes", 4000, "state changes of the store throughput run")
	fs.IntVar(&c.group, "group", 64, "steps per transaction of the grouped store run")
	fs.IntVar(&c.workflows, "workflows", 1000, "open workflows of the memory and recovery runs (0: skip them)")
	fs.StringVar(&c.victim, "victim", "", "internal: seed open workflows in this database and wait to be killed")
	fs.IntVar(&c.victimN, "victim-workflows", 1000, "internal: how many --victim seeds")
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
	o := bench.Options{Sizes: c.sizes, Mode: c.mode, Speed: c.speed, SimURL: c.simURL, Out: c.out, Changes: c.changes,
		Group: c.group, Workflows: c.workflows, Exe: exe,
		Logf: func(format string, args ...any) { fmt.Fprintf(c.m.Stderr, "bench: "+format+"\n", args...) }}
	if err := o.Check(); err != nil {
		return usagef("%v", err)
	}
	rep, err := bench.Measure(ctx, o)
	if err != nil {
		return err
	}
	out := console.Printer{W: c.m.Stdout}
	var rows [][]string
	var objs []any
	for _, m := range rep.Modes {
		for _, r := range m.Runs {
			rows = append(rows, []string{m.Name, r.Runner, fmt.Sprint(r.N), fmt.Sprintf("%.2f", r.Wall), fmt.Sprintf("%.2f", r.Floor),
				fmt.Sprintf("%.3f", r.Ratio), fmt.Sprintf("%.3f", r.QuoteGapP50), fmt.Sprintf("%.3f/%.3f", r.OfferToAcceptP50, r.OfferToAcceptP99),
				bench.CallsPerFill(r.CallsPerFill), fmt.Sprint(r.Status429), fmt.Sprint(r.Expired)})
			objs = append(objs, r)
		}
	}
	out.Table([]string{"MODE", "RUNNER", "N", "WALL s", "FLOOR s", "×FLOOR", "QUOTE GAP p50", "OFFER→ACCEPT p50/p99", "CALLS/FILL", "429", "EXPIRED"}, rows, objs)
	fmt.Fprintln(c.m.Stdout)
	for _, t := range rep.Targets {
		mark := "MISSED"
		if t.Met {
			mark = "met"
		}
		fmt.Fprintf(c.m.Stdout, "%-6s %s: %s\n", mark, t.Target, t.Got)
	}
	return nil
}
