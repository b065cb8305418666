package console

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

var t0 = time.Date(2026, 11, 26, 14, 30, 0, 0, time.UTC)

// tick advances the fake clock by a second once the ticker waits on it,
// and returns once the ticker has drawn and waits again.
func tick(clk *clock.Fake) {
	<-clk.BlockUntil(1)
	clk.Advance(time.Second)
	<-clk.BlockUntil(1)
}

// The prompt's "30s left" counts down, redrawn in place on a
// terminal each second of the clock (a fake one here).
func TestCountdownTicksOnATerminal(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	var out lockedBuffer
	stop := countdown(&out, true, clk, t0.Add(30*time.Second), func(left time.Duration) string {
		return "Accept? " + left.String() + " left [y/N] "
	})
	tick(clk)
	tick(clk)
	stop()
	want := "\r\x1b[KAccept? 30s left [y/N] \r\x1b[KAccept? 29s left [y/N] \r\x1b[KAccept? 28s left [y/N] "
	if out.String() != want {
		t.Errorf("drew %q\nwant %q", out.String(), want)
	}
	clk.Advance(5 * time.Second)
	if out.String() != want {
		t.Errorf("drew after stop: %q", out.String())
	}
}

// Without a terminal the question is printed once, plainly.
func TestCountdownPrintedOnceWithoutATerminal(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	var out lockedBuffer
	stop := countdown(&out, false, clk, t0.Add(30*time.Second), func(left time.Duration) string { return left.String() + " left" })
	clk.Advance(3 * time.Second)
	stop()
	if out.String() != "30s left" || clk.Timers() != 0 {
		t.Errorf("drew %q with %d timers", out.String(), clk.Timers())
	}
}

// A spinner turns while a quote is queued behind the same-symbol spacing
// (the engine's QueuedUntil) and while a credit-back is under way, and is
// erased before the next line; without a terminal only the lines show.
func TestSpinnerWhileQueuedAndCreditingBack(t *testing.T) {
	t.Parallel()
	for _, live := range []bool{true, false} {
		clk := clock.NewFake(t0)
		var out lockedBuffer
		d := NewDisplay(&out, live, clk)
		show := Progress(Printer{W: &out}, d)
		loc := &workflow.Workflow{ID: "wf-1", Kind: states.Locate, Symbol: "HTBX", State: states.Requested, Quantity: 300}
		show(workflow.Update{Workflow: loc, From: states.Requested, QueuedUntil: t0.Add(20 * time.Second)})
		if live {
			tick(clk)
		}
		quoting := *loc
		quoting.State = states.Quoting
		show(workflow.Update{Workflow: &quoting, From: states.Requested})

		cb := &workflow.Workflow{ID: "wf-2", Kind: states.CreditBack, Symbol: "HTBX", State: states.Submitted, Quantity: 100}
		show(workflow.Update{Workflow: cb, From: states.Requested})
		if live {
			tick(clk)
			tick(clk)
		}
		accepted := *cb
		accepted.State = states.New
		show(workflow.Update{Workflow: &accepted, From: states.Submitted})
		if live {
			tick(clk)
		}
		done := accepted
		done.State = states.Credited
		show(workflow.Update{Workflow: &done, From: states.New})
		d.Close()

		want := "HTBX wf-1: queued — the broker spaces quotes of a symbol; this one leaves in about 20s\n"
		if live {
			want += "\r\x1b[K| HTBX: waiting to quote, 20s\r\x1b[K/ HTBX: waiting to quote, 19s\r\x1b[K"
		}
		want += "HTBX wf-1: requested → quoting\nHTBX wf-2: requested → submitted\n"
		if live {
			want += "\r\x1b[K| HTBX: crediting back 100 shares, 0s\r\x1b[K/ HTBX: crediting back 100 shares, 1s\r\x1b[K- HTBX: crediting back 100 shares, 2s\r\x1b[K"
		}
		want += "HTBX wf-2: submitted → new\n"
		if live { // the seconds count from the credit-back's start
			want += "\r\x1b[K| HTBX: crediting back 100 shares, 2s\r\x1b[K/ HTBX: crediting back 100 shares, 3s\r\x1b[K"
		}
		want += "HTBX wf-2: new → credited\n"
		if got := out.String(); got != want {
			t.Errorf("live %v:\n got %q\nwant %q", live, got, want)
		}
		if n := clk.Timers(); n != 0 {
			t.Errorf("live %v: %d timers left running", live, n)
		}
	}
}

// lockedBuffer is a buffer the ticker's goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
