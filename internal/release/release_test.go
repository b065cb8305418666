package release_test

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/release"
)

// Version knows the commit a build was made from, its
// time and whether the tree had changes, when Go recorded them, and the
// build's own time only when the build command set one (a time that does
// not parse is dropped, not shown wrong); (devel) or (unknown) plainly
// when Go recorded nothing.
func TestOf(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126100000-0123456789ab+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-26T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	commit := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	built := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		release, built string
		info           *debug.BuildInfo
		want           release.Build
	}{
		{"", "", info, release.Build{Version: "v0.0.0-20261126100000-0123456789ab+dirty", Go: runtime.Version(),
			Commit: "0123456789abcdef0123456789abcdef01234567", CommitTime: commit, Modified: true}},
		{"v1.2.3", "2026-11-26T09:00:00-05:00", info, release.Build{Version: "v1.2.3", Go: runtime.Version(),
			Commit: "0123456789abcdef0123456789abcdef01234567", CommitTime: commit, Modified: true, BuildTime: built}},
		{"", "yesterday", &debug.BuildInfo{}, release.Build{Version: "(devel)", Go: runtime.Version()}},
		{"", "", nil, release.Build{Version: "(unknown)", Go: runtime.Version()}},
	} {
		if got := release.Of(tc.release, tc.built, tc.info); got != tc.want {
			t.Errorf("release.Of(%q, %q, ...) = %+v, want %+v", tc.release, tc.built, got, tc.want)
		}
	}
	b, err := json.Marshal(release.Of("", "2026-11-26T14:00:00Z", info))
	for _, want := range []string{`"commit":"0123456789abcdef0123456789abcdef01234567"`, `"commitTime":"2026-11-26T10:00:00Z"`, `"modified":true`, `"buildTime":"2026-11-26T14:00:00Z"`} {
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("JSON %s %v, want %s", b, err, want)
		}
	}
	if b, _ := json.Marshal(release.Of("", "", nil)); strings.Contains(string(b), "Time") {
		t.Errorf("JSON %s: times recorded by nobody", b)
	}
}
