package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/mcpserver"
	"github.com/locatorhq/locator/internal/release"
	"github.com/locatorhq/locator/internal/wire"
)

// mcpCommand serves the account to an agent over the Model Context
// Protocol on stdin and stdout (package mcpserver), until the agent
// closes stdin. It opens the account as every command does: following
// its owner, or owning it while none runs. Nobody can be asked on a
// protocol's stdin, so the owner refuses what would need a person.
type mcpCommand struct{ conn connFlags }

func (c *mcpCommand) flags(fs *pflag.FlagSet) { c.conn.registerAccount(fs) }

// An account that cannot be opened (no settings, paper asked of a live
// account, the owner's refusal) is still served: the agent's host
// initializes and lists the tools, each call says why, and the command
// ends with that refusal once stdin closes.
func (c *mcpCommand) run(ctx context.Context, args []string) error {
	m := c.conn.m
	// An agent's server runs long, following the owner or owning the
	// account, its environment holding the keys: no other process of the
	// user's may read its memory, as the daemons'.
	if err := m.noDump(); err != nil {
		return err
	}
	v := release.Read(version, buildTime).Version
	var server *mcp.Server
	sess, refused := c.conn.open(ctx, "mcp", nil, wire.RoleCommand)
	switch {
	case refused != nil && ctx.Err() != nil:
		return refused
	case refused != nil:
		fmt.Fprintf(m.Stderr, "locator mcp: %v (every tool call says so)\n", refused)
		server = mcpserver.Refused(refused, v)
	default:
		defer sess.Close()
		server = mcpserver.New(sess.Handle, v)
	}
	err := server.Run(ctx, mcpserver.Stdio(m.Stdin, m.Stdout))
	if errors.Is(err, io.EOF) || err == nil { // the agent closed stdin: done
		return refused
	}
	return err
}
