package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
)

// statesCommand renders one workflow state machine: one diagram, as dot
// and Mermaid read one at a time.
type statesCommand struct {
	m      *Main
	format string
	kind   string
}

func (c *statesCommand) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.format, "format", "mermaid", "mermaid or dot")
	fs.StringVar(&c.kind, "kind", "", "the workflow to draw: locate, credit_back, order or price_check (required)")
}

func (c *statesCommand) run(ctx context.Context, args []string) error {
	render := states.Mermaid
	switch c.format {
	case "mermaid":
	case "dot":
		render = states.Dot
	default:
		return console.Usagef("--format %q: want mermaid or dot", c.format)
	}
	k := states.Kind(c.kind)
	if states.Events(k) == nil {
		return console.Usagef("--kind %q: want locate, credit_back, order or price_check (one diagram a run)", c.kind)
	}
	fmt.Fprint(c.m.Stdout, render(k))
	return nil
}
