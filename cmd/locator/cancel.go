package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/service"
)

// cancelCommand cancels an unfinished workflow, through the account's
// owner.
type cancelCommand struct{ conn connFlags }

func (c *cancelCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *cancelCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want one workflow ID (see 'locator status')")
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, "cancel", nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	if err := sess.Cancel(ctx, account.CancelRequest{ID: args[0], Via: "'locator cancel'"}); err != nil {
		return err
	}
	w, err := sess.Follow(ctx, account.FollowRequest{ID: args[0]}, console.Progress(out, c.conn.m.display()))
	if err != nil {
		return err
	}
	return finish(out, w)
}

// answerCommand answers an offer waiting on a person, from any shell:
// approve takes it within its policy, decline refuses and cancels it.
type answerCommand struct {
	conn   connFlags
	accept bool
}

func (c *answerCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *answerCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want one workflow ID (see 'locator status')")
	}
	out := c.conn.out()
	name := "approve"
	if !c.accept {
		name = "decline"
	}
	sess, err := c.conn.open(ctx, name, nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	if err := sess.Answer(ctx, account.AnswerRequest{ID: args[0], Accept: c.accept, Via: "'locator " + name + "'"}); err != nil {
		return err
	}
	w, err := sess.Follow(ctx, account.FollowRequest{ID: args[0]}, console.Progress(out, c.conn.m.display()))
	if err != nil {
		return err
	}
	return finish(out, w)
}
