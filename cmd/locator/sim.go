package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
)

// simCommand serves the broker simulator until interrupted.
type simCommand struct {
	m             *Main
	addr          string
	scenario      string
	speed         float64
	start         string
	seed          uint64
	noRateLimits  bool
	printScenario bool
	faults        brokersim.Faults
	faultDelay    time.Duration
}

func (c *simCommand) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.addr, "addr", "127.0.0.1:0", "address to listen on")
	fs.StringVar(&c.scenario, "scenario", "", "scenario JSON file (default: the embedded scenario)")
	fs.Float64Var(&c.speed, "speed", 1, "run the simulator's clock N times faster than real time")
	fs.StringVar(&c.start, "start", "", "start the simulator's clock at this RFC 3339 instant")
	fs.Uint64Var(&c.seed, "seed", 0, "seed for settle delays and fault draws (default: the scenario's)")
	fs.BoolVar(&c.noRateLimits, "no-rate-limits", false, "lift the per-route rate limits")
	fs.BoolVar(&c.printScenario, "print-scenario", false, "print the scenario as JSON and exit")
	fs.StringVar(&c.faults.Match, "fault-match", "", `limit faults to requests whose "METHOD /path" contains this`)
	fs.Float64Var(&c.faults.Rate500, "fault-500", 0, "fraction of requests answered 500")
	fs.Float64Var(&c.faults.Rate503, "fault-503", 0, "fraction of requests answered 503")
	fs.Float64Var(&c.faults.Rate429, "fault-429", 0, "fraction of requests answered 429")
	fs.Float64Var(&c.faults.RateReset, "fault-reset", 0, "fraction of connections reset before processing")
	fs.Float64Var(&c.faults.RateResetAfter, "fault-reset-after", 0, "fraction of connections reset after processing")
	fs.Float64Var(&c.faults.RateDelay, "fault-delay", 0, "fraction of requests delayed")
	fs.Float64Var(&c.faults.RatePushLoss, "fault-push-loss", 0, "fraction of portfolio stream pushes lost, the connection kept")
	fs.DurationVar(&c.faultDelay, "fault-delay-time", 2*time.Second, "how long a delayed request waits (wall time)")
}

func (c *simCommand) run(ctx context.Context, args []string) error {
	sc := brokersim.DefaultScenario()
	if c.scenario != "" {
		var err error
		if sc, err = brokersim.LoadScenario(c.scenario); err != nil {
			return console.Usagef("%v", err)
		}
	}
	if c.noRateLimits {
		sc.RateLimits = false
	}
	if c.printScenario {
		enc := json.NewEncoder(c.m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sc)
	}
	if c.speed <= 0 {
		return console.Usagef("--speed must be positive")
	}
	clk := c.m.Clock
	_, wall := clk.(clock.Real)
	switch {
	case !wall && (c.start != "" || c.speed != 1):
		return console.Usagef("--start and --speed: the clock is set by %s", clock.SettingEnv)
	case c.start != "" || c.speed != 1:
		start := time.Now()
		if c.start != "" {
			t, err := time.Parse(time.RFC3339, c.start)
			if err != nil {
				return console.Usagef("--start %q: want RFC 3339, like 2026-11-25T15:00:00Z", c.start)
			}
			start = t
		}
		clk = clock.NewScaled(start, c.speed)
	}
	c.faults.Delay = brokersim.Duration(c.faultDelay)
	// The admin routes are part of the command's contract (docs/design.md).
	opts := []brokersim.Option{brokersim.WithClock(clk), brokersim.WithFaults(c.faults), brokersim.WithAdmin()}
	if c.seed != 0 {
		opts = append(opts, brokersim.WithSeed(c.seed))
	}
	sim, err := brokersim.New(sc, opts...)
	if err != nil {
		return console.Usagef("%v", err)
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return console.Usagef("--addr %s: %v", c.addr, err)
	}
	if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil && !brokerclient.Loopback(host) {
		fmt.Fprintf(c.m.Stderr, "warning: locator sim listens on %s, beyond this machine's loopback: its /_sim/ admin routes (request log, clock, faults) take no credentials, so whoever reaches this address can read every request and change the simulator's clock and faults\n", ln.Addr())
	}
	return brokersim.Serve(ctx, sim, sc, ln, c.m.Stdout)
}
