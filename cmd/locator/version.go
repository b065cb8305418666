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
	info, _ := debug.ReadBuildInfo()
	b := buildOf(version, info)
	c.m.printer(c.format).Event(b, b.String())
	return nil
}

// build says which build this is: the release (the -X version, else the
// module version Go recorded, "(devel)" when none), and the commit it was
// built from, its time and whether the tree had changes, when Go recorded
// them (a build in a git checkout; `go run` records none).
type build struct {
	Version    string `json:"version"`
	Go         string `json:"go"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
}

func buildOf(release string, info *debug.BuildInfo) build {
	b := build{Version: release, Go: runtime.Version()}
	if info == nil {
		if b.Version == "" {
			b.Version = "(unknown)"
		}
		return b
	}
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the line people read: "locator v1.2.3 (commit 0123456789ab
// of 2026-11-26T10:00:00Z, modified; go1.26.8)".
func (b build) String() string {
	s := "locator " + b.Version + " ("
	if b.Commit != "" {
		s += "commit " + b.Commit[:min(12, len(b.Commit))]
		if b.CommitTime != "" {
			s += " of " + b.CommitTime
		}
		if b.Modified {
			s += ", modified"
		}
		s += "; "
	}
	return s + b.Go + ")"
}
