package console

import (
	"runtime"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/release"
)

// The version line names the commit, its time and the
// build's in New York time, labelled, each only when recorded.
func TestVersion(t *testing.T) {
	t.Parallel()
	full := release.Build{Version: "v1.2.3", Go: runtime.Version(), Commit: "0123456789abcdef0123456789abcdef01234567",
		CommitTime: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), Modified: true, BuildTime: time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		b    release.Build
		want string
	}{
		{full, "locator v1.2.3 (commit 0123456789ab of 2026-11-26 05:00:00 ET, modified; built 2026-11-26 09:00:00 ET; " + runtime.Version() + ")"},
		{release.Build{Version: "(devel)", Go: runtime.Version()}, "locator (devel) (" + runtime.Version() + ")"},
	} {
		if got := Version(tc.b); got != tc.want {
			t.Errorf("Version(%+v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
