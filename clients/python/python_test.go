// Package python_test runs the Python client's own tests (python3 -m
// unittest in this folder) against the binary built from this tree, so
// that CI runs them with the Go tests.
package python_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
)

// TestPythonClient runs clients/python's unittest suite, which starts a
// `locator sim` and a `locator serve` (with its TLS port admitting a
// bearer) of the binary built here and drives them through locator_client:
// a capped locate of HTBX 300 fills with one quote and one accept and
// reads as filled, an uncapped one and every bad argument are refused
// with nothing sent, another secret earns no session, quote takes nothing
// and says why it priced nothing, a batch and a raw request, a
// credit-back, the updates iterator, the socket found whatever the
// address's spelling, a locate through the TLS port as a bearer (and
// another pin refused), pip installing the package offline, and the
// example and docs/library.md's Python blocks run as a reader runs them.
// The simulator, the daemon and the test share one clock
// five times faster than the wall clock (clock.SettingEnv, a test aid), so
// the broker's windows and spacing pass in a fifth of the time. Without
// python3 it skips, except under CI=true (.ci/run
// installs Debian's python3), where it fails.
func TestPythonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary and runs processes")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is not installed (.ci/run installs Debian's)")
		}
		t.Skip("python3 is not installed")
	}
	bin := filepath.Join(t.TempDir(), "locator")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/locator").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(t.Context(), py, "-m", "unittest", "-v")
	clk := clock.NewScaled(time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC), 5) // a Wednesday noon in New York
	cmd.Env = append(os.Environ(), "LOCATOR_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1", clock.SettingEnv+"="+clk.Setting())
	out, err := cmd.CombinedOutput()
	t.Logf("python3 -m unittest:\n%s", out)
	if err != nil {
		t.Fatalf("the Python client's tests failed: %v", err)
	}
}
