package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/bench"
)

// benchCommand measures the engine against the naive loop on the
// simulator, and the store, memory and recovery figures (package bench).
type benchCommand struct {
	m     *Main
	bench bench.Command
}

func (c *benchCommand) flags(fs *pflag.FlagSet) { c.bench.Register(fs) }

func (c *benchCommand) run(ctx context.Context, args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return c.bench.Run(ctx, c.m.Stdout, c.m.Stderr, exe, c.m.Getenv("LOCATOR_DB"))
}
