package main

import (
	"context"
	"runtime"
	"runtime/debug"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/console"
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
	v := buildVersion()
	c.m.printer(c.format).Event(map[string]string{"version": v, "go": runtime.Version()}, "locator "+v+" ("+runtime.Version()+")")
	return nil
}

// buildVersion is the -X version, else the module version from the build
// info ("(devel)" for a build from a checkout, with its commit when known).
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && v == "(devel)" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
