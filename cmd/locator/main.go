// Command locator runs the short-locate workflow against the broker, serves
// the broker simulator, and demonstrates both. See the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain(os.Stdout, os.Stderr, os.Getenv)
	os.Exit(m.Run(ctx, os.Args[1:]))
}
