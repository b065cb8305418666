package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
)

// jobsCommand lists the job runs the daemon recorded (local, sends
// nothing): what ran, when, and how it ended.
type jobsCommand struct {
	conn  connFlags
	job   string
	limit int
}

func (c *jobsCommand) flags(fs *pflag.FlagSet) {
	c.conn.registerLocal(fs)
	fs.StringVar(&c.job, "job", "", "only the runs of the job named NAME")
	fs.IntVar(&c.limit, "limit", 20, "how many recent runs to list")
}

func (c *jobsCommand) run(ctx context.Context, args []string) error {
	if c.limit < 1 {
		return console.Usagef("--limit %d: want 1 or more", c.limit)
	}
	st, err := c.conn.localStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.JobRuns(ctx, store.JobRunFilter{Job: c.job, Limit: c.limit})
	if err != nil {
		return err
	}
	console.JobRuns(c.conn.out(), runs)
	return nil
}
