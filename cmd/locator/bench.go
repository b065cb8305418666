package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/bench"
	"github.com/locatorhq/locator/clock"
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

func (c *benchCommand) synopsis() string {
	return "benchmark batch locates (engine against the naive loop) on the simulator; writes bench.json and bench.svg"
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
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if c.mode != "in-process" && c.mode != "sim" && c.mode != "both" {
		return usagef("--mode %q: want in-process, sim or both", c.mode)
	}
	if c.speed <= 0 || c.group <= 0 || c.changes < 2 {
		return usagef("--speed and --group must be positive, --changes at least 2")
	}
	for _, n := range c.sizes {
		if n < 1 || n > 9999 {
			return usagef("--n %d: want 1 to 9999", n)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "locator-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rep := bench.Report{Command: c.commandLine(), Date: time.Now().UTC().Format(time.RFC3339), Host: bench.ThisHost()}
	if c.mode != "sim" {
		m, err := c.locates(ctx, fmt.Sprintf("in-process ×%g", c.speed), c.speed, func(sc []string) (*bench.Target, error) {
			return bench.InProcess(bench.Scenario(sc), clock.NewScaled(time.Now(), c.speed))
		})
		if err != nil {
			return err
		}
		rep.Modes = append(rep.Modes, m)
	}
	if c.mode != "in-process" {
		m, err := c.locates(ctx, "locator sim", 1, func(sc []string) (*bench.Target, error) {
			if c.simURL != "" {
				return bench.Remote(c.simURL), nil
			}
			return bench.Spawn(ctx, exe, dir, bench.Scenario(sc))
		})
		if err != nil {
			return err
		}
		rep.Modes = append(rep.Modes, m)
	}
	c.logf("store: %d durable state changes", c.changes)
	if rep.Store, err = bench.StoreThroughput(ctx, dir, c.changes, c.group); err != nil {
		return err
	}
	if c.workflows > 0 {
		t, err := bench.InProcess(bench.Scenario(nil), clock.Real{})
		if err != nil {
			return err
		}
		defer t.Close()
		c.logf("memory and recovery: %d open workflows", c.workflows)
		if rep.MemoryMB, err = bench.Memory(ctx, t, dir, c.workflows); err != nil {
			return err
		}
		victim := func(db string, n int) *exec.Cmd {
			return exec.CommandContext(ctx, exe, "bench", "--victim", db, "--victim-workflows", fmt.Sprint(n))
		}
		if rep.Recovery, err = bench.Recovery(ctx, t, victim, dir, c.workflows); err != nil {
			return err
		}
	}
	rep.Check()
	return c.write(&rep)
}

// locates runs the engine and the naive loop for every size against the
// target open() gives for the symbols of all runs.
func (c *benchCommand) locates(ctx context.Context, name string, speed float64, open func([]string) (*bench.Target, error)) (bench.Mode, error) {
	mode := bench.Mode{Name: name, Speed: speed}
	var all []string
	for _, n := range c.sizes {
		all = append(all, bench.Symbols('E', n, n)...)
		all = append(all, bench.Symbols('N', n, n)...)
	}
	t, err := open(all)
	if err != nil {
		return mode, err
	}
	defer t.Close()
	dir, err := os.MkdirTemp("", "locator-bench-")
	if err != nil {
		return mode, err
	}
	defer os.RemoveAll(dir)
	for _, n := range c.sizes {
		c.logf("%s: engine, N=%d", name, n)
		r, err := bench.RunEngine(ctx, t, dir, bench.Symbols('E', n, n))
		if err != nil {
			return mode, err
		}
		mode.Runs = append(mode.Runs, r)
		c.logf("%s: naive loop, N=%d", name, n)
		if r, err = bench.RunNaive(ctx, t, bench.Symbols('N', n, n)); err != nil {
			return mode, err
		}
		mode.Runs = append(mode.Runs, r)
	}
	return mode, nil
}

// commandLine is the command that reproduces this run, for the report.
func (c *benchCommand) commandLine() string {
	ns := make([]string, len(c.sizes))
	for i, n := range c.sizes {
		ns[i] = fmt.Sprint(n)
	}
	line := fmt.Sprintf("locator bench --mode %s --n %s --speed %g --changes %d --group %d --workflows %d",
		c.mode, strings.Join(ns, ","), c.speed, c.changes, c.group, c.workflows)
	if c.simURL != "" {
		line += " --sim-url URL"
	}
	return line
}

func (c *benchCommand) logf(format string, args ...any) {
	fmt.Fprintf(c.m.Stderr, "bench: "+format+"\n", args...)
}

// write prints the summary and the targets, and saves the JSON and the
// chart under --out.
func (c *benchCommand) write(rep *bench.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if c.out != "" {
		if err := os.MkdirAll(c.out, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(c.out, "bench.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
		if err := rep.Chart(filepath.Join(c.out, "bench.svg")); err != nil {
			return err
		}
	}
	out := console.Printer{W: c.m.Stdout}
	var rows [][]string
	var objs []any
	for _, m := range rep.Modes {
		for _, r := range m.Runs {
			rows = append(rows, []string{m.Name, r.Runner, fmt.Sprint(r.N), fmt.Sprintf("%.2f", r.Wall), fmt.Sprintf("%.2f", r.Floor),
				fmt.Sprintf("%.3f", r.Ratio), fmt.Sprintf("%.3f", r.QuoteGapP50), fmt.Sprintf("%.3f/%.3f", r.OfferToAcceptP50, r.OfferToAcceptP99),
				calls(r.CallsPerFill), fmt.Sprint(r.Status429), fmt.Sprint(r.Expired)})
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

// calls shows calls per fill by route, the busiest routes first by name.
func calls(m map[string]float64) string {
	var parts []string
	for _, k := range []string{"quote", "accept", "history", "inventory", "easyToBorrow", "orderBook"} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, v))
		}
	}
	return strings.Join(parts, ", ")
}
