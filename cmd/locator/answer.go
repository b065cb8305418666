package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/service"
)

// answerCommand acts on one unfinished workflow from any shell, through
// the account's owner, and follows it to its end: approve takes its offer
// within its policy, decline refuses the offer (it is cancelled at the
// broker), cancel withdraws the workflow.
type answerCommand struct {
	conn connFlags
	name string // approve, decline or cancel
}

func (c *answerCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *answerCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want one workflow ID (see 'locator status')")
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, c.name, nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	via := "'locator " + c.name + "'"
	if c.name == "cancel" {
		err = sess.Cancel(ctx, account.CancelRequest{ID: args[0], Via: via})
	} else {
		err = sess.Answer(ctx, account.AnswerRequest{ID: args[0], Accept: c.name == "approve", Via: via})
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
