package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/release"
)

// version is the release this binary was built as, set by the release
// build (-ldflags "-X main.version=v1.2.3"); left empty, the module version
// Go recorded in the binary is shown.
var version string

// versionCommand prints the version, so a bug report can say which build.
type versionCommand struct {
	m      *Main
	format console.Format
}

func (c *versionCommand) flags(fs *pflag.FlagSet) { console.RegisterJSON(fs, &c.format) }

func (c *versionCommand) run(ctx context.Context, args []string) error {
	b := release.Read(version)
	c.m.printer(c.format).Event(b, b.String())
	return nil
}
