package proc_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/locatorhq/locator/internal/proc"
)

// Serve and run are made non-dumpable.
func TestNoDump(t *testing.T) {
	if err := proc.NoDump(); err != nil {
		t.Fatal(err)
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 0 {
		t.Errorf("PR_GET_DUMPABLE = %d, %v; want 0", v, err)
	}
}
