package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/locatorhq/locator/clock"
)

// interactive reports whether a person can answer a prompt: stdin is a
// terminal (not /dev/null, which cron and CI give) and output is for people.
func (m *Main) interactive(f format) bool {
	in, ok := m.Stdin.(*os.File)
	return ok && isTerminal(in) && f == formatTable
}

// isTerminal reports whether f is a terminal (a person typing): a character
// device that is not /dev/null.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}

// ask prints question and reads one answer line from Main's stdin; anything
// but y or yes, or no answer before ctx ends, is a no. One reader serves
// every prompt of the process, so an answer typed late is never lost to a
// prompt that gave up.
func (m *Main) ask(ctx context.Context, question string) bool {
	fmt.Fprint(m.Stderr, question)
	return m.answer(ctx, func() {})
}

// askBefore is ask about something that lapses at deadline: the question
// says the time left, counting down on a terminal.
func (m *Main) askBefore(ctx context.Context, deadline time.Time, question func(left time.Duration) string) bool {
	d := m.display()
	return m.answer(ctx, countdown(d.w, d.live, d.clk, deadline, question))
}

// answer waits for the answer line, stopping the question's countdown
// before anything else is printed.
func (m *Main) answer(ctx context.Context, stop func()) bool {
	select {
	case line, ok := <-m.stdinLines():
		stop()
		a := strings.TrimSpace(strings.ToLower(line))
		return ok && (a == "y" || a == "yes")
	case <-ctx.Done():
		stop()
		fmt.Fprintln(m.Stderr, "\nno answer in time")
		return false
	}
}

// display is the run's progress display on stderr, made on first use.
func (m *Main) display() *display {
	m.displayOnce.Do(func() {
		w := m.Stderr
		if l, ok := w.(*lockedWriter); ok {
			w = l.w // the terminal behind the lock
		}
		m.disp = &display{w: m.Stderr, live: isTerminalWriter(w), clk: clock.Real{}}
	})
	return m.disp
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
