package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/mcpserver"
	"github.com/locatorhq/locator/internal/release"
	"github.com/locatorhq/locator/internal/wire"
)

// mcpCommand serves the account to an agent over the Model Context
// Protocol on stdin and stdout (package mcpserver), until the agent
// closes stdin. It opens the account as every command does: following
// its owner, or owning it while none runs. Nobody can be asked on a
// protocol's stdin, so the owner refuses what would need a person; the
// tools ask the person behind the agent's client themselves.
type mcpCommand struct {
	conn     connFlags
	readOnly bool
	tools    []string
}

func (c *mcpCommand) flags(fs *pflag.FlagSet) {
	c.conn.registerAccount(fs)
	fs.BoolVar(&c.readOnly, "read-only", false, "serve only the tools that change nothing: "+strings.Join(mcpserver.ToolNames(true), ", "))
	fs.StringSliceVar(&c.tools, "tools", nil, "serve only these tools, by name (quote,locate,...): "+strings.Join(mcpserver.ToolNames(false), ", "))
}

// An account that cannot be opened (no settings, paper asked of a live
// account, the owner's refusal) is still served: the agent's host
// initializes and lists the tools, each call says why, and the command
// ends with that refusal once stdin closes. A choice of tools that names
// none the server has is refused before anything is opened.
func (c *mcpCommand) run(ctx context.Context, args []string) error {
	m := c.conn.m
	opts := mcpserver.Options{ReadOnly: c.readOnly, Tools: c.tools, Clock: m.Clock}
	if err := opts.Validate(); err != nil {
		return console.Usagef("--tools: %v", err)
	}
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
		server = mcpserver.Refused(refused, v, opts)
	default:
		defer sess.Close()
		server = mcpserver.New(sess.Handle, v, opts)
	}
	err := server.Run(ctx, mcpserver.Stdio(m.Stdin, m.Stdout))
	if errors.Is(err, io.EOF) || err == nil { // the agent closed stdin: done
		return refused
	}
	return err
}
