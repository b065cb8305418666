// Package release says which build of locator is running, for `locator
// version` and bug reports: the release, the commit and its time, from
// what the Go toolchain recorded in the binary.
package release

import (
	"runtime"
	"runtime/debug"
)

// Read is the running binary's build; release is the version a release
// build set with -ldflags -X (empty otherwise).
func Read(release string) Build {
	info, _ := debug.ReadBuildInfo()
	return Of(release, info)
}

// Build says which build this is: the release (the -X version, else the
// module version Go recorded, "(devel)" when none), and the commit it was
// built from, its time and whether the tree had changes, when Go recorded
// them (a build in a git checkout; `go run` records none).
type Build struct {
	Version    string `json:"version"`
	Go         string `json:"go"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
}

// Of is the build that info describes (nil: nothing was recorded).
func Of(release string, info *debug.BuildInfo) Build {
	b := Build{Version: release, Go: runtime.Version()}
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
func (b Build) String() string {
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
