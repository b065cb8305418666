package main

import (
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/workflow"
)

// exitFor is a workflow's end as the exit-code contract says (nil for 0),
// in the words of its outcome (package account says how it ended,
// console.Exit its code).
func exitFor(w *workflow.Workflow) error { return exitOf(account.OutcomeOf(w)) }

// exitOf is an outcome as the command's end: nil for 0.
func exitOf(o account.Outcome) error {
	code := console.Exit(o.End)
	if code == console.ExitOK {
		return nil
	}
	return &exitError{code: code, msg: o.Words}
}

// exitError ends the command with a specific exit code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// out is the printer of a command's results, in the console.Format of -o.
func (c *connFlags) out() console.Printer { return c.m.printer(c.format) }

// printer prints to Main's stdout in console.Format f.
func (m *Main) printer(f console.Format) console.Printer {
	return console.Printer{W: m.Stdout, Notes: m.Stderr, Format: f}
}
