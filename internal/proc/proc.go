// Package proc hardens the running process that holds a trader's secrets:
// the secrets leave its environment once read (Env), and a long-running
// process is made non-dumpable (NoDump), so another process of the same
// user can neither read its memory nor its /proc files, nor get a core
// dump of it.
package proc

import (
	"os"
	"strings"
)

// Env is a snapshot of the process's environment, taken at start: Get
// keeps answering from it after Forget has removed a variable from the
// process's environment.
type Env struct{ vars map[string]string }

// Snapshot takes the process's environment as it is now.
func Snapshot() *Env {
	e := &Env{vars: map[string]string{}}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		e.vars[k] = v
	}
	return e
}

// Get returns the variable's value in the snapshot ("" when unset).
func (e *Env) Get(name string) string { return e.vars[name] }

// Forget removes the variable from the process's environment (not from
// the snapshot): children and code that reads the environment later do
// not see it. The kernel's copy of the initial environment
// (/proc/PID/environ) stays; NoDump keeps it from other processes.
func (e *Env) Forget(name string) { os.Unsetenv(name) }
