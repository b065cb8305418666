package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locatorhq/locator/brokercode"
)

// openTerminal opens a pseudo-terminal and returns its terminal side, which
// the CLI takes for a person typing.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	term, _ := openTerminalPair(t)
	return term
}

// openTerminalPair opens a pseudo-terminal: its terminal side for the CLI,
// and its controller side, where the test types as the person would.
func openTerminalPair(t *testing.T) (term, keyboard *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts, ptm
}

// docs/design.md rule 8: Ctrl-C at the offer prompt withdraws
// the request: the offer is cancelled at the broker (history status 52),
// on a context that outlives the interrupt, and the command exits 130.
func TestInterruptAtPromptCancelsOffer(t *testing.T) {
	t.Parallel()
	b := setupCLIAt(t, testStart, personSpeed) // interrupted inside a window of the broker's
	var stdout, stderr syncBuffer
	m := NewMain(&stdout, &stderr, func(k string) string { return b.env[k] })
	m.Stdin = openTerminal(t)
	ctx, interrupt := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() { done <- m.Run(ctx, []string{"locate", "HTBX", "300"}) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "Accept HTBX 300 shares") {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // watching another goroutine's output, not a window
	}
	interrupt()
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the command did not end after the interrupt:\n%s", stderr.String())
	}
	if code != 130 {
		t.Errorf("exit %d, want 130\n%s", code, stderr.String())
	}
	rows, _, err := b.brokerClient(t).Locates.History(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].LocateStatus != brokercode.LocateStatusCanceled {
		t.Errorf("history %+v, want the offer cancelled (52)\n%s", rows, stderr.String())
	}
}

// An answer the prompt does not understand (x at
// [y/N], 3 at [1-2/N]) is said and the question asked again within the
// offer's window, never taken for a no (which declined the offer and
// cancelled it at once); the answer typed next decides: y fills the
// offer, 1 takes the pair's first side.
func TestPromptAsksAgainOnATypo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, symbol, flags, question, typo, answer, want string
	}{
		{"an offer", "HTBX", "", "Accept HTBX 300 shares", "x", "y", "filled"},
		{"a Reg SHO pair", "RSHO", "--allow-single-use", "a Reg SHO pair: [1] SingleUse", "3", "1", "filled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLIAt(t, testStart, personSpeed) // a person inside the offer's window
			var stdout, stderr syncBuffer
			m := NewMain(&stdout, &stderr, func(k string) string { return b.env[k] })
			term, keyboard := openTerminalPair(t)
			m.Stdin = term
			args := []string{"locate", tc.symbol, "300"}
			if tc.flags != "" {
				args = append(args, tc.flags)
			}
			done := make(chan int, 1)
			go func() { done <- m.Run(t.Context(), args) }()
			waitFor(t, "the question", func() bool { return strings.Contains(stderr.String(), tc.question) })
			if _, err := keyboard.WriteString(tc.typo + "\n"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the question asked again", func() bool {
				s := stderr.String()
				i := strings.Index(s, "is not an answer here")
				return i >= 0 && strings.Contains(s[i:], tc.question)
			})
			if n := len(b.writes()); n != 1 { // the quote alone: nothing declined or cancelled
				t.Errorf("after the typo: %v sent, want the quote alone", b.writes())
			}
			if _, err := keyboard.WriteString(tc.answer + "\n"); err != nil {
				t.Fatal(err)
			}
			select {
			case code := <-done:
				if code != 0 || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
					t.Errorf("exit %d, want 0 and %s\n%s\n%s", code, tc.want, stdout.String(), stderr.String())
				}
			case <-time.After(60 * time.Second): // a hang guard
				t.Fatalf("no end after the answer:\n%s", stderr.String())
			}
		})
	}
}
