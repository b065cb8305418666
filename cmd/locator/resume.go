package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/states"
)

// resumeCommand drives every unfinished workflow of the account to its end,
// and settles every order left unanswered (by looking it up, never by
// sending it again).
type resumeCommand struct{ conn connFlags }

func (c *resumeCommand) synopsis() string {
	return "drive every unfinished workflow to a final state (after a crash or an interrupt), then exit"
}

func (c *resumeCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *resumeCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	out := c.conn.out()
	acct, err := c.conn.attach(ctx, "resume", nil, progress(out, c.conn.m.display()))
	if err != nil {
		return err
	}
	defer acct.close()
	eng, owned := acct.Engine()
	if !owned {
		lease := acct.followed()
		out.event(map[string]any{"owner": lease.PID, "host": lease.Host, "since": lease.Since},
			lease.String()+": it drives the unfinished workflows")
		return nil
	}
	// Nobody is asked during a resume: an offer the policy does not accept
	// by itself waits for its asker until its window nearly closes.
	open := eng.Active()
	for _, w := range open {
		acct.watch(w.ID)
	}
	if err := eng.Resume(ctx); err != nil {
		return err
	}
	counts := map[states.State]int{}
	for _, w := range open {
		final, err := acct.store.Get(ctx, w.ID)
		if err != nil {
			return err
		}
		counts[final.State]++
		out.event(outcomeOf(final), fmt.Sprintf("%s %s %s: %s %s", final.ID, final.Kind, final.Symbol, final.State, final.Reason))
	}
	summary := fmt.Sprintf("resumed %d workflow(s)", len(open))
	for st, n := range counts {
		summary += fmt.Sprintf(", %d %s", n, st)
	}
	if !out.json() {
		fmt.Fprintln(c.conn.m.Stdout, summary)
	}
	return nil
}
