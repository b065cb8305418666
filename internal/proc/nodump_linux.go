package proc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// NoDump makes the process non-dumpable (prctl PR_SET_DUMPABLE 0): no
// core dump, and its /proc files (memory, environ) and ptrace are closed
// to other processes of the same user.
func NoDump() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("proc: make the process non-dumpable: %w", err)
	}
	return nil
}
