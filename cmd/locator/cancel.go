package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/engine"
)

// cancelCommand cancels an unfinished workflow.
type cancelCommand struct{ conn connFlags }

func (c *cancelCommand) synopsis() string {
	return "ID: cancel an unfinished locate or credit-back and wait for the broker to confirm"
}

func (c *cancelCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *cancelCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want one workflow ID (see 'locator status')")
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, engine.Config{OnUpdate: progress(out, c.conn.m, time.Now)})
	if err != nil {
		return err
	}
	defer sess.close()
	if err := sess.engine.Cancel(ctx, args[0]); err != nil {
		if errors.Is(err, engine.ErrNotOpen) {
			return usagef("%v", err)
		}
		return err
	}
	w, err := sess.engine.Wait(ctx, args[0])
	if err != nil {
		return err
	}
	return finish(out, w)
}
