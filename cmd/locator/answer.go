package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// answerCommand acts on one unfinished workflow from any shell, through
// the account's owner, and follows it to its end: approve takes its offer
// within its policy, decline refuses the offer (it is cancelled at the
// broker), cancel withdraws the workflow.
type answerCommand struct {
	conn connFlags
	name string // approve, decline or cancel
	yes  bool   // approve: no confirmation at the terminal
}

func (c *answerCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	if c.name == "approve" {
		fs.BoolVar(&c.yes, "yes", false, "approve without asking at the terminal (the offer approved is still printed first)")
	}
}

func (c *answerCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return console.Usagef("want one workflow ID (see 'locator status')")
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, c.name, nil, wire.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	via := "'locator " + c.name + "'"
	switch c.name {
	case "cancel":
		err = sess.Cancel(ctx, account.CancelRequest{ID: args[0], Via: via})
	case "approve":
		req := account.AnswerRequest{ID: args[0], Accept: true, Via: via}
		var approved bool
		if approved, err = c.bind(ctx, sess, &req); err != nil {
			return err
		}
		if !approved {
			fmt.Fprintf(c.conn.m.Stderr, "not approved: the offer still waits on %s; nothing was sent\n", req.ID)
			return nil
		}
		err = sess.Answer(ctx, req)
	default:
		err = sess.Answer(ctx, account.AnswerRequest{ID: args[0], Accept: false, Via: via})
	}
	if err != nil {
		return err
	}
	w, err := sess.Follow(ctx, account.FollowRequest{ID: args[0]}, console.Progress(out, c.conn.m.display()))
	if err != nil {
		return err
	}
	return finish(out, w)
}

// bind finds the offer waiting on the workflow an approval names
// (workflow.Offered, the side and price `locator status` shows), says it,
// asks the person at a terminal to confirm it unless --yes, and binds the
// approval to it: the owner refuses it (exit 2, nothing sent) when the
// offer waiting is another, or at another price, by the time it arrives.
// It reports false when the person said no. A workflow not found, or with
// no offer waiting, is left to the owner to refuse in its own words.
func (c *answerCommand) bind(ctx context.Context, sess *session, req *account.AnswerRequest) (bool, error) {
	r, err := sess.Records(ctx, account.RecordsRequest{What: account.RecordsOne, ID: req.ID})
	if err != nil || r.Workflow == nil || r.Workflow.State != states.Offered {
		return true, nil
	}
	w := r.Workflow
	o := workflow.Offered(w)
	if o == nil {
		return true, nil
	}
	req.ID, req.Offer, req.Price = w.ID, o.QuoteReqID, o.Price
	m := c.conn.m
	fmt.Fprintf(m.Stderr, "approving %s %s: %d shares at %s (%s, offer %s) = %s\n", o.Symbol, w.ID, o.Shares,
		console.Price4(o.Price), brokercode.LocateTypeForCode(o.LocateType), o.QuoteReqID, console.Money(o.Total))
	if c.yes || !m.interactive(c.conn.format) {
		return true, nil
	}
	by := o.ExpiresAt.Add(-workflow.DefaultRules.AcceptMargin)
	q, cancel := clock.WithDeadline(ctx, m.Clock, by)
	defer cancel()
	yes := m.asker(ctx)(q, account.Question{ID: w.ID, Offer: o, Deadline: by})
	if !yes && errors.Is(q.Err(), context.DeadlineExceeded) {
		return false, account.Errorf(account.KindNotOpen, fmt.Sprintf("%s: the offer's window closed before an answer; nothing was sent", w.ID))
	}
	return yes, ctx.Err()
}
