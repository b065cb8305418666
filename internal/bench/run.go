package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/locatorhq/locator/clock"
)

// Options are one benchmark run's settings (locator bench's flags).
type Options struct {
	Sizes     []int   // watchlist sizes
	Mode      string  // "in-process", "sim" or "both"
	Speed     float64 // clock speed of the in-process runs
	Naive     bool    // run the naive loop beside the engine
	SimURL    string  // a running simulator to use (default: spawn one)
	Out       string  // folder for bench.json and bench.svg ("": write neither)
	Changes   int     // state changes of the store throughput run
	Group     int     // steps per transaction of the grouped store run
	Workflows int     // open workflows of the memory and recovery runs (0: skip)
	// Exe is the locator binary: it serves a spawned simulator and is the
	// process the recovery run kills.
	Exe string
	// Logf receives a line per step.
	Logf func(format string, args ...any)
}

// Check refuses options that cannot run, before anything runs.
func (o Options) Check() error {
	if o.Mode != "in-process" && o.Mode != "sim" && o.Mode != "both" {
		return fmt.Errorf("--mode %q: want in-process, sim, both, fleet or days", o.Mode)
	}
	if o.Speed <= 0 || o.Group <= 0 || o.Changes < 2 {
		return fmt.Errorf("--speed and --group must be positive, --changes at least 2")
	}
	for _, n := range o.Sizes {
		if n < 1 || n > 9999 {
			return fmt.Errorf("--n %d: want 1 to 9999", n)
		}
	}
	return nil
}

// Measure measures batch locates (the engine against the naive loop) in the
// modes asked for, the store's throughput, and the memory and recovery
// figures; it checks the report against its targets and writes it under
// Out.
func Measure(ctx context.Context, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "locator-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rep := Report{Command: o.commandLine(), Date: time.Now().UTC().Format(time.RFC3339), Host: ThisHost()}
	if o.Mode != "sim" {
		m, err := o.locates(ctx, fmt.Sprintf("in-process ×%g", o.Speed), o.Speed, func(sc []string) (*Target, error) {
			return InProcess(Scenario(sc), clock.NewScaled(time.Now(), o.Speed))
		})
		if err != nil {
			return nil, err
		}
		rep.Modes = append(rep.Modes, m)
	}
	if o.Mode != "in-process" {
		m, err := o.locates(ctx, "locator sim", 1, func(sc []string) (*Target, error) {
			if o.SimURL != "" {
				return Remote(o.SimURL), nil
			}
			return Spawn(ctx, o.Exe, dir, Scenario(sc))
		})
		if err != nil {
			return nil, err
		}
		rep.Modes = append(rep.Modes, m)
	}
	o.Logf("store: %d durable state changes", o.Changes)
	if rep.Store, err = StoreThroughput(ctx, dir, o.Changes, o.Group); err != nil {
		return nil, err
	}
	if o.Workflows > 0 {
		t, err := InProcess(Scenario(nil), clock.Real{})
		if err != nil {
			return nil, err
		}
		defer t.Close()
		o.Logf("memory and recovery: %d open workflows", o.Workflows)
		if rep.MemoryMB, err = Memory(ctx, t, dir, o.Workflows); err != nil {
			return nil, err
		}
		victim := func(db string, n int) *exec.Cmd {
			return exec.CommandContext(ctx, o.Exe, "bench", "--victim", db, "--victim-workflows", fmt.Sprint(n))
		}
		if rep.Recovery, err = Recovery(ctx, t, victim, dir, o.Workflows); err != nil {
			return nil, err
		}
	}
	rep.Check()
	return &rep, rep.save(o.Out)
}

// locates runs the engine and (with Naive) the naive loop for every size
// against the target open() gives for the symbols of all runs.
func (o Options) locates(ctx context.Context, name string, speed float64, open func([]string) (*Target, error)) (Mode, error) {
	mode := Mode{Name: name, Speed: speed}
	var all []string
	for _, n := range o.Sizes {
		all = append(all, Symbols('E', n, n)...)
		all = append(all, Symbols('N', n, n)...)
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
	for _, n := range o.Sizes {
		o.Logf("%s: engine, N=%d", name, n)
		r, err := RunEngine(ctx, t, dir, Symbols('E', n, n))
		if err != nil {
			return mode, err
		}
		mode.Runs = append(mode.Runs, r)
		if !o.Naive {
			continue
		}
		o.Logf("%s: naive loop, N=%d", name, n)
		if r, err = RunNaive(ctx, t, Symbols('N', n, n)); err != nil {
			return mode, err
		}
		mode.Runs = append(mode.Runs, r)
	}
	return mode, nil
}

// commandLine is the command that reproduces this run, for the report.
func (o Options) commandLine() string {
	ns := make([]string, len(o.Sizes))
	for i, n := range o.Sizes {
		ns[i] = fmt.Sprint(n)
	}
	line := fmt.Sprintf("locator bench --mode %s --n %s --speed %g --changes %d --group %d --workflows %d --naive=%t",
		o.Mode, strings.Join(ns, ","), o.Speed, o.Changes, o.Group, o.Workflows, o.Naive)
	if o.SimURL != "" {
		line += " --sim-url URL"
	}
	return line
}

// save writes the report as bench.json and its chart as bench.svg in
// folder out (nothing when out is empty).
func (r *Report) save(out string) error {
	if out == "" {
		return nil
	}
	if err := writeJSON(out, "bench.json", r); err != nil {
		return err
	}
	return r.Chart(filepath.Join(out, "bench.svg"))
}

// writeJSON writes v, indented, as file name in folder out.
func writeJSON(out, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, name), append(b, '\n'), 0o644)
}

// CallsPerFill shows a run's calls per fill by route, the busiest routes
// first by name.
func CallsPerFill(m map[string]float64) string {
	var parts []string
	for _, k := range []string{"quote", "accept", "history", "inventory", "easyToBorrow", "orderBook"} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, v))
		}
	}
	return strings.Join(parts, ", ")
}
