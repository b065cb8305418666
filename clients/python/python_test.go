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
// `locator sim` and a `locator serve` of the binary built here and drives
// them through locator_client: a capped locate of HTBX 300 fills with one
// quote and one accept and reads as filled, an uncapped one is refused
// with nothing sent, another secret earns no session, quote takes
// nothing, a credit-back returns shares, the updates iterator sees a
// locate to its end, and the ensure-located-then-short example places
// its one order. The simulator, the daemon and the test share one clock
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
