package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/release"
)

// version is the release this binary was built as, and buildTime when it
// was built (RFC 3339), set by the build command (-ldflags "-X
// main.version=v1.2.3 -X main.buildTime=2026-11-26T14:00:00Z", as the
// Dockerfile does); left empty, the module version Go recorded is shown,
// and no build time.
var version, buildTime string

// versionCommand prints the version, so a bug report can say which build.
type versionCommand struct {
	m      *Main
	format console.Format
}

func (c *versionCommand) flags(fs *pflag.FlagSet) { console.RegisterFormat(fs, &c.format) }

func (c *versionCommand) run(ctx context.Context, args []string) error {
	b := release.Read(version, buildTime)
	c.m.printer(c.format).Event(b, console.Version(b))
	return nil
}
