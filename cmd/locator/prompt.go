package main

import (
	"context"
	"errors"
	"os"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
)

// interactive reports whether a person can answer a prompt: stdin is a
// terminal (not /dev/null, which cron and CI give) and output is for people.
func (m *Main) interactive(f console.Format) bool {
	in, ok := m.Stdin.(*os.File)
	return ok && console.IsTerminal(in) && f == console.Table
}

// display is the run's progress display on stderr, made on first use.
func (m *Main) display() *console.Display {
	m.displayOnce.Do(func() {
		w := m.Stderr
		if l, ok := w.(*console.SyncWriter); ok {
			w = l.W // the terminal behind the lock
		}
		m.disp = console.NewDisplay(m.Stderr, console.IsTerminalWriter(w), m.Clock)
	})
	return m.disp
}

// asker answers this command's questions at the terminal (package
// console's prompts, on Main's stdin and stderr).
func (m *Main) asker(cmd context.Context) func(context.Context, account.Question) bool {
	if m.lines == nil {
		m.lines = console.Lines(m.Stdin)
	}
	p := &console.Prompter{Lines: m.lines, Err: m.Stderr, Display: m.display(), Answer: func(ctx context.Context, req account.AnswerRequest) error {
		h := m.opened.Load()
		if h == nil {
			return errors.New("no account open to answer through")
		}
		return h.Answer(ctx, req)
	}}
	return p.Asker(cmd)
}
