//go:build !linux

package proc

// NoDump does nothing where prctl(PR_SET_DUMPABLE) does not exist.
func NoDump() error { return nil }
