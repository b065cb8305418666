package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/workflow"
)

// Exit codes, the contract in DESIGN.md.
const (
	exitOK        = 0
	exitFailure   = 1 // unexpected failure
	exitUsage     = 2 // bad usage or input; nothing was sent
	exitBroker    = 3 // the broker rejected, expired or cancelled it
	exitDeclined  = 4 // declined by the cost policy
	exitInterrupt = 130
)

// Main is the program, separated from os so tests can drive it.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	linesOnce sync.Once
	lines     chan string // Stdin's lines, for the prompts
}

// NewMain returns a Main writing to the given streams and reading the given
// environment.
func NewMain(stdout, stderr io.Writer, getenv func(string) string) *Main {
	// Loggers of the client, the engine and the jobs write to stderr from
	// their own goroutines through their own handlers: one lock for all.
	return &Main{Stdin: os.Stdin, Stdout: stdout, Stderr: &lockedWriter{w: stderr}, Getenv: getenv}
}

// lockedWriter serialises writes from several slog handlers sharing one
// writer (os.Stderr is safe; a test's buffer is not).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// command is one subcommand: its flags are declared on fs, then Run gets the
// positional arguments.
type command interface {
	synopsis() string
	flags(fs *pflag.FlagSet)
	run(ctx context.Context, args []string) error
}

// commands lists the subcommands by name.
func (m *Main) commands() map[string]func() command {
	return map[string]func() command{
		"sim":         func() command { return &simCommand{m: m} },
		"bench":       func() command { return &benchCommand{m: m} },
		"demo":        func() command { return &demoCommand{m: m} },
		"locate":      func() command { return &locateCommand{conn: connFlags{m: m}} },
		"credit-back": func() command { return &creditBackCommand{conn: connFlags{m: m}} },
		"cancel":      func() command { return &cancelCommand{conn: connFlags{m: m}} },
		"approve":     func() command { return &answerCommand{conn: connFlags{m: m}, accept: true} },
		"decline":     func() command { return &answerCommand{conn: connFlags{m: m}} },
		"status":      func() command { return &statusCommand{conn: connFlags{m: m}} },
		"inventory":   func() command { return &inventoryCommand{conn: connFlags{m: m}} },
		"history":     func() command { return &historyCommand{conn: connFlags{m: m}} },
		"resume":      func() command { return &resumeCommand{conn: connFlags{m: m}} },
		"states":      func() command { return &statesCommand{m: m} },
		"fees":        func() command { return &feesCommand{conn: connFlags{m: m}} },
		"size":        func() command { return &sizeCommand{conn: connFlags{m: m}} },
		"accounts":    func() command { return &accountsCommand{conn: connFlags{m: m}} },
		"pnl":         func() command { return &pnlCommand{conn: connFlags{m: m}} },
		"positions":   func() command { return &positionsCommand{conn: connFlags{m: m}} },
		"orders":      func() command { return &ordersCommand{conn: connFlags{m: m}} },
		"routes":      func() command { return &routesCommand{conn: connFlags{m: m}} },
		"short":       func() command { return &shortCommand{conn: connFlags{m: m}} },
		"run":         func() command { return &runCommand{conn: connFlags{m: m}} },
		"serve":       func() command { return &serveCommand{conn: connFlags{m: m}} },
		"login":       func() command { return &loginCommand{conn: connFlags{m: m}} },
		"logout":      func() command { return &logoutCommand{conn: connFlags{m: m}} },
		"watch":       func() command { return &watchCommand{conn: connFlags{m: m}} },
	}
}

// usageError is bad usage or input: exit 2, nothing was sent.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// Run parses args, runs the subcommand and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	cmds := m.commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		m.usage(cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	mk, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(m.Stderr, "locator: unknown command %q\n\n", args[0])
		m.usage(cmds)
		return exitUsage
	}
	cmd := mk()
	fs := pflag.NewFlagSet("locator "+args[0], pflag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	cmd.flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	err := cmd.run(ctx, fs.Args())
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		fmt.Fprintf(m.Stderr, "locator %s: %v\n", args[0], err)
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(m.Stderr, "locator %s: %v\n", args[0], err)
		return exitUsage
	case errors.Is(err, workflow.ErrInput):
		fmt.Fprintf(m.Stderr, "locator %s: %v; nothing was sent\n", args[0], err)
		return exitUsage
	case errors.Is(err, engine.ErrSizing):
		fmt.Fprintf(m.Stderr, "locator %s: %v\n", args[0], err)
		return exitUsage
	case errors.Is(err, brokerclient.ErrLoginRequired):
		fmt.Fprintf(m.Stderr, "locator %s: %v\nrun 'locator login --partner' to sign in again\n", args[0], err)
		return exitFailure
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(m.Stderr, "locator %s: interrupted\n", args[0])
		return exitInterrupt
	default:
		fmt.Fprintf(m.Stderr, "locator %s: %v\n", args[0], err)
		return exitFailure
	}
}

func (m *Main) usage(cmds map[string]func() command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("usage: locator <command> [flags]\n\ncommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-12s %s\n", n, cmds[n]().synopsis())
	}
	b.WriteString("\nRun 'locator <command> --help' for a command's flags.\n")
	fmt.Fprint(m.Stderr, b.String())
}
