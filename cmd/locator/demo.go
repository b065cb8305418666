package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/demo"
)

// demoCommand runs the demo (package demo) with its narration on stdout.
type demoCommand struct {
	m     *Main
	speed float64
	keep  string
}

func (c *demoCommand) flags(fs *pflag.FlagSet) {
	fs.Float64Var(&c.speed, "speed", 10, "run the shared clock N times faster than real time")
	fs.StringVar(&c.keep, "db", "", "keep the demo's database at this path (default: a temporary file)")
}

func (c *demoCommand) run(ctx context.Context, args []string) error {
	if c.speed <= 0 || c.speed > 100 {
		return console.Usagef("--speed must be in (0, 100]")
	}
	return demo.Run(ctx, demo.Config{Out: c.m.Stdout, Speed: c.speed, DB: c.keep})
}
