// Package release says which build of locator is running, for `locator
// version` and bug reports: the release, the commit and its time, from
// what the Go toolchain recorded in the binary, and the time of the build
// when the build command set one (Go records none of its own).
package release

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Read is the running binary's build; release and built are what a
// release build set with -ldflags -X (the version, and the build's time in
// RFC 3339; empty otherwise).
func Read(release, built string) Build {
	info, _ := debug.ReadBuildInfo()
	return Of(release, built, info)
}

// Build says which build this is: the release (the -X version, else the
// module version Go recorded, "(devel)" when none), the commit it was built
// from, its time and whether the tree had changes, when Go recorded them
// (a build in a git checkout; `go run` records none), and when it was built,
// when the build command said (vcs.time is the commit's time, not the
// build's).
type Build struct {
	Version    string    `json:"version"`
	Go         string    `json:"go"`
	Commit     string    `json:"commit,omitempty"`
	CommitTime time.Time `json:"commitTime,omitzero"`
	Modified   bool      `json:"modified,omitempty"`
	BuildTime  time.Time `json:"buildTime,omitzero"`
}

// Of is the build that info describes (nil: nothing was recorded), built
// at built (RFC 3339; a time that does not parse is not shown, rather than
// shown wrong).
func Of(release, built string, info *debug.BuildInfo) Build {
	b := Build{Version: release, Go: runtime.Version(), BuildTime: parse(built)}
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
			b.CommitTime = parse(s.Value)
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// parse reads an RFC 3339 time as UTC; zero when s is empty or wrong.
func parse(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}
