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

// Issue 9 item 5 and docs/design.md rule 8: Ctrl-C at the offer prompt withdraws
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
