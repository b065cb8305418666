package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/states"
)

// statesCommand renders the workflow state machines.
type statesCommand struct {
	m      *Main
	format string
	kind   string
}

func (c *statesCommand) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.format, "format", "mermaid", "mermaid or dot")
	fs.StringVar(&c.kind, "kind", "", "locate, credit_back, order or price_check (default: all four)")
}

func (c *statesCommand) run(ctx context.Context, args []string) error {
	render := states.Mermaid
	switch c.format {
	case "mermaid":
	case "dot":
		render = states.Dot
	default:
		return usagef("--format %q: want mermaid or dot", c.format)
	}
	kinds := states.Kinds()
	if c.kind != "" {
		k := states.Kind(c.kind)
		if states.Events(k) == nil {
			return usagef("--kind %q: want locate, credit_back, order or price_check", c.kind)
		}
		kinds = []states.Kind{k}
	}
	for i, k := range kinds {
		if i > 0 {
			fmt.Fprintln(c.m.Stdout)
		}
		fmt.Fprint(c.m.Stdout, render(k))
	}
	return nil
}
