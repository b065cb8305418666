package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/console"
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
		if l, ok := w.(*lockedWriter); ok {
			w = l.w // the terminal behind the lock
		}
		m.disp = console.NewDisplay(m.Stderr, console.IsTerminalWriter(w), clock.Real{})
	})
	return m.disp
}

// asker answers this command's questions at the terminal (package
// console's prompts, on Main's stdin and stderr).
func (m *Main) asker(cmd context.Context) func(context.Context, account.Question) bool {
	p := &console.Prompter{Lines: m.stdinLines, Err: m.Stderr, Display: m.display()}
	return p.Asker(cmd)
}

// stdinLines starts, once, the reader of Main's stdin.
func (m *Main) stdinLines() <-chan string {
	m.linesOnce.Do(func() {
		m.lines = make(chan string)
		in := m.Stdin
		if in == nil {
			in = strings.NewReader("")
		}
		go readLines(in, m.lines)
	})
	return m.lines
}

func readLines(r io.Reader, out chan<- string) {
	defer close(out)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out <- sc.Text()
	}
}
