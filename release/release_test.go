package release_test

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/locatorhq/locator/release"
)

// Issue 19 item 4: version shows the commit a build was made from, its
// time and whether the tree had changes, when Go recorded them, and says
// (devel) or (unknown) plainly when it did not.
func TestOf(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126100000-0123456789ab+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-26T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		release string
		info    *debug.BuildInfo
		want    string
	}{
		{"", info, "locator v0.0.0-20261126100000-0123456789ab+dirty (commit 0123456789ab of 2026-11-26T10:00:00Z, modified; " + runtime.Version() + ")"},
		{"v1.2.3", info, "locator v1.2.3 (commit 0123456789ab of 2026-11-26T10:00:00Z, modified; " + runtime.Version() + ")"},
		{"", &debug.BuildInfo{}, "locator (devel) (" + runtime.Version() + ")"},
		{"", nil, "locator (unknown) (" + runtime.Version() + ")"},
	} {
		if got := release.Of(tc.release, tc.info).String(); got != tc.want {
			t.Errorf("release.Of(%q, ...) = %q, want %q", tc.release, got, tc.want)
		}
	}
	b, err := json.Marshal(release.Of("", info))
	if err != nil || !strings.Contains(string(b), `"commit":"0123456789abcdef0123456789abcdef01234567"`) || !strings.Contains(string(b), `"modified":true`) {
		t.Errorf("JSON %s %v", b, err)
	}
}
