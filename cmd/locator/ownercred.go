package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/wire"
)

// ownerCredentialCommand prints the credential of one follower host, made
// from this host's LOCATOR_OWNER_TOKEN (see wire.IssueFollowerCredential):
// the follower host holds it as its own LOCATOR_OWNER_TOKEN, and the
// owner admits it while its line "HOST UNTIL" is in the file serve's
// --owner-followers names ("HOST UNTIL bearer" also as a bearer).
type ownerCredentialCommand struct {
	m     *Main
	until string
}

func (c *ownerCredentialCommand) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.until, "until", "", "when the credential ends, RFC 3339 (2027-01-31T00:00:00Z): the followers file's line must say the same")
}

func (c *ownerCredentialCommand) run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return console.Usagef("want one follower host name")
	}
	cred, err := wire.IssueFollowerCredential(c.m.secretEnv(wire.OwnerTokenEnv), args[0], c.until, time.Now())
	if err != nil {
		return console.Usagef("%v", err)
	}
	fmt.Fprintln(c.m.Stdout, cred)
	fmt.Fprintf(c.m.Stderr, "add this line to the file serve --owner-followers names:\n%s %s\n"+
		"(end it with the word bearer to let a client that is not locator send the credential as Authorization: Bearer; see docs/library.md)\n",
		args[0], c.until)
	return nil
}
