package main

import (
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/workflow"
)

// exitFor is a workflow's end as the exit-code contract says (nil for 0),
// in the words of its outcome (package account says how it ended,
// console.Ended its code).
func exitFor(w *workflow.Workflow) error { return console.Ended(account.OutcomeOf(w)) }

// out is the printer of a command's results, in the console.Format of -o.
func (c *connFlags) out() console.Printer { return c.m.printer(c.format) }

// printer prints to Main's stdout in console.Format f.
func (m *Main) printer(f console.Format) console.Printer {
	return console.Printer{W: m.Stdout, Notes: m.Stderr, Format: f}
}
