package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
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

// asker answers the questions of this command's requests at the
// terminal: an offer to take, its seconds left counting down, or a short's
// order to confirm. One reader serves every prompt of the process, so an
// answer typed late is never lost to a prompt that gave up.
func (m *Main) asker(cmd context.Context) func(context.Context, account.Question) bool {
	return func(q context.Context, ques account.Question) bool {
		switch {
		case ques.Offer != nil:
			o := ques.Offer
			d := m.display()
			return m.answer(cmd, q, countdown(d.w, d.live, d.clk, ques.Deadline, func(left time.Duration) string {
				return fmt.Sprintf("Accept %s %d shares at %s (%s) = %s? %s left [y/N] ",
					o.Symbol, o.Shares, price4(o.Price), brokercode.LocateTypeForCode(o.LocateType), money(o.Total), left)
			}))
		case ques.Order != nil:
			o := ques.Order
			where := o.Route
			if where == "" {
				where = "assigned by the broker"
			}
			fmt.Fprintf(m.Stderr, "Sell short %d %s at %s (route %s)? [y/N] ", o.Quantity, o.Symbol, priceShown(o.LimitPrice), where)
			return m.answer(cmd, q, func() {})
		}
		return false
	}
}

// answer waits for the answer line to question q, stopping its countdown
// before anything else is printed; anything but y or yes is a no. A
// question withdrawn says why; an interrupted command (cmd's end) leaves
// its question to be withdrawn and says nothing: the command says
// "interrupted", once.
func (m *Main) answer(cmd, q context.Context, stop func()) bool {
	select {
	case line, ok := <-m.stdinLines():
		stop()
		a := strings.TrimSpace(strings.ToLower(line))
		return ok && (a == "y" || a == "yes")
	case <-q.Done():
		stop()
		if errors.Is(context.Cause(q), account.ErrAnsweredElsewhere) {
			fmt.Fprintln(m.Stderr, "\nanswered elsewhere")
		} else {
			fmt.Fprintln(m.Stderr, "\nno answer in time")
		}
		return false
	case <-cmd.Done():
		stop()
		fmt.Fprintln(m.Stderr)
		<-q.Done() // withdrawn by the command's withdrawal, or its window
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
