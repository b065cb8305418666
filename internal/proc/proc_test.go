package proc_test

import (
	"os"
	"testing"

	"github.com/locatorhq/locator/internal/proc"
)

// A secret read from the snapshot and forgotten is gone from the process's
// environment, and the snapshot still answers.
func TestEnvForget(t *testing.T) {
	t.Setenv("PROC_TEST_SECRET", "hunter2")
	e := proc.Snapshot()
	if got := e.Get("PROC_TEST_SECRET"); got != "hunter2" {
		t.Fatalf("Get = %q", got)
	}
	e.Forget("PROC_TEST_SECRET")
	if v, ok := os.LookupEnv("PROC_TEST_SECRET"); ok {
		t.Errorf("still in the environment: %q", v)
	}
	if got := e.Get("PROC_TEST_SECRET"); got != "hunter2" {
		t.Errorf("Get after Forget = %q", got)
	}
}
