package main

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/mcpserver"
	"github.com/locatorhq/locator/internal/release"
	"github.com/locatorhq/locator/internal/service"
)

// mcpCommand serves the account to an agent over the Model Context
// Protocol on stdin and stdout (package mcpserver), until the agent
// closes stdin. It opens the account as every command does: following
// its owner, or owning it while none runs. Nobody can be asked on a
// protocol's stdin, so the owner refuses what would need a person.
type mcpCommand struct{ conn connFlags }

func (c *mcpCommand) flags(fs *pflag.FlagSet) { c.conn.registerAccount(fs) }

func (c *mcpCommand) run(ctx context.Context, args []string) error {
	sess, err := c.conn.open(ctx, "mcp", nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	m := c.conn.m
	server := mcpserver.New(sess.Handle, release.Read(version, buildTime).Version)
	err = server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(m.Stdin), Writer: nopWriteCloser{m.Stdout}})
	if errors.Is(err, io.EOF) { // the agent closed stdin: done
		return nil
	}
	return err
}

// nopWriteCloser is stdout as the protocol's writer, left open when the
// session ends.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
