package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
)

// resumeCommand drives every unfinished workflow of the account to its end,
// and settles every order left unanswered (by looking it up, never by
// sending it again).
type resumeCommand struct{ conn connFlags }

func (c *resumeCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *resumeCommand) run(ctx context.Context, args []string) error {
	out := c.conn.out()
	sess, err := c.conn.open(ctx, "resume", nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	// The owner (this process, or another) resumed them: follow each to
	// its end, once the orders left unanswered are settled (looked up,
	// as the owner started: a resume that ended first left them unknown).
	// Nobody is asked during a resume: an offer the policy does not
	// accept by itself waits for its asker until its window nearly
	// closes.
	st, err := sess.Status(ctx, account.StatusRequest{SettleOrders: true})
	if err != nil {
		return err
	}
	counts := map[states.State]int{}
	show := console.Progress(out, c.conn.m.display())
	for _, w := range st.Open {
		final, err := account.FollowOrWithdraw(ctx, sess, account.FollowRequest{ID: w.ID}, show)
		if err != nil {
			return err
		}
		counts[final.State]++
		out.Event(console.OutcomeRecordOf(final), fmt.Sprintf("%s %s %s: %s", final.ID, final.Kind, final.Symbol, account.OutcomeOf(final).Words))
	}
	summary := fmt.Sprintf("resumed %d workflow(s)", len(st.Open))
	for st, n := range counts {
		summary += fmt.Sprintf(", %d %s", n, st)
	}
	if !out.JSON() {
		fmt.Fprintln(c.conn.m.Stdout, summary)
	}
	return nil
}
