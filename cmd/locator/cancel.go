package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/engine"
)

// cancelCommand cancels an unfinished workflow, through the account's
// owner.
type cancelCommand struct{ conn connFlags }

func (c *cancelCommand) synopsis() string {
	return "cancel an unfinished locate or credit-back and wait for the broker to confirm"
}

func (c *cancelCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *cancelCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want one workflow ID (see 'locator status')")
	}
	out := c.conn.out()
	acct, err := c.conn.attach(ctx, "cancel", nil, progress(out, c.conn.m.display()))
	if err != nil {
		return err
	}
	defer acct.close()
	acct.watch(args[0])
	if err := acct.Cancel(ctx, args[0]); err != nil {
		if errors.Is(err, engine.ErrNotOpen) {
			return usagef("%v", err)
		}
		return err
	}
	w, err := acct.Wait(ctx, args[0])
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

func (c *answerCommand) synopsis() string {
	if c.accept {
		return "accept the offer waiting on workflow ID (within its policy)"
	}
	return "decline the offer waiting on workflow ID (it is cancelled at the broker)"
}

func (c *answerCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *answerCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want one workflow ID (see 'locator status')")
	}
	out := c.conn.out()
	name, reason := "approve", ""
	if !c.accept {
		name, reason = "decline", "declined with 'locator decline'"
	}
	acct, err := c.conn.attach(ctx, name, nil, progress(out, c.conn.m.display()))
	if err != nil {
		return err
	}
	defer acct.close()
	acct.watch(args[0])
	if err := acct.Answer(ctx, args[0], c.accept, reason); err != nil {
		if errors.Is(err, engine.ErrNotOpen) {
			return usagef("%v", err)
		}
		return err
	}
	w, err := acct.Wait(ctx, args[0])
	if err != nil {
		return err
	}
	return finish(out, w)
}
