package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
)

// jobsCommand lists the job runs the daemons recorded in the database
// (sends nothing): what ran, when, and how it ended.
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
	s, err := c.conn.picked()
	if err != nil {
		return err
	}
	// Every account's runs: the whole database, read here, as status's
	// list is.
	s.Account = ""
	db, err := c.conn.dialer().Reader(ctx, s, "jobs")
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := db.Records(ctx, account.RecordsRequest{What: account.RecordsJobRuns, Job: c.job, Limit: c.limit})
	if err != nil {
		return err
	}
	console.JobRuns(c.conn.out(), r.JobRuns)
	return nil
}
