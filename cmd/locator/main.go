// Command locator runs the short-locate workflow against the broker, serves
// the broker simulator, and demonstrates both. See the README and docs/.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/locatorhq/locator/internal/proc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Secrets are read from a snapshot of the environment and removed
	// from the process's own as they are read; serve and run make the
	// process non-dumpable.
	env := proc.Snapshot()
	m := NewMain(os.Stdout, os.Stderr, env.Get)
	m.Forget, m.NoDump = env.Forget, proc.NoDump
	os.Exit(m.Run(ctx, os.Args[1:]))
}
