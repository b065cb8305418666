package main

import (
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
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

// Issue 12: the prompt's "30s left" counts down, redrawn in place on a
// terminal each second of the clock (a fake one here).
func TestCountdownTicksOnATerminal(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(t0)
	var out syncBuffer
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
	var out syncBuffer
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
		var out syncBuffer
		d := &display{w: &out, live: live, clk: clk}
		show := progress(printer{w: &out}, d)
		loc := &workflow.Workflow{ID: "wf-1", Kind: states.Locate, Symbol: "HTBX", State: states.Requested, Quantity: 300}
		show(engine.Update{Workflow: loc, From: states.Requested, QueuedUntil: t0.Add(20 * time.Second)})
		if live {
			tick(clk)
		}
		quoting := *loc
		quoting.State = states.Quoting
		show(engine.Update{Workflow: &quoting, From: states.Requested})

		cb := &workflow.Workflow{ID: "wf-2", Kind: states.CreditBack, Symbol: "HTBX", State: states.Submitted, Quantity: 100}
		show(engine.Update{Workflow: cb, From: states.Requested})
		if live {
			tick(clk)
			tick(clk)
		}
		accepted := *cb
		accepted.State = states.New
		show(engine.Update{Workflow: &accepted, From: states.Submitted})
		if live {
			tick(clk)
		}
		done := accepted
		done.State = states.Credited
		show(engine.Update{Workflow: &done, From: states.New})
		d.close()

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

// The engine says when a locate is queued behind the same-symbol spacing,
// and the command shows it at once rather than nothing for half a minute
// (here as its JSON event), whether this process owns the account or hands
// the locate to the owner, then withdraws it on Ctrl-C: nothing more was
// quoted, exit 130.
func TestQueuedQuoteIsShown(t *testing.T) {
	t.Parallel()
	for _, follower := range []bool{false, true} {
		t.Run(map[bool]string{false: "owner", true: "follower"}[follower], func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			if follower {
				owner := b.startMain(t, "serve")
				waitFor(t, "the owner", func() bool { return strings.Contains(owner.stderr.String(), "serving LV100001") })
			}
			if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--max-price", "0.02"); code != exitOK {
				t.Fatalf("first locate: exit %d\n%s\n%s", code, out, errOut)
			}
			quotes := b.quotes()
			r := b.startMain(t, "locate", "HTBX", "600", "--max-price", "0.02", "--json")
			waitFor(t, "the queued event", func() bool { return strings.Contains(r.stdout.String(), `"event":"queued"`) })
			if code := r.stop(t); code != exitInterrupt {
				t.Errorf("exit %d after the interrupt, want 130\n%s", code, r.stderr)
			}
			for _, o := range jsonLines(t, r.stdout.String()) {
				if o["event"] == "queued" && (o["symbol"] != "HTBX" || o["until"] == nil) {
					t.Errorf("queued event %v", o)
				}
			}
			if n := b.quotes(); n != quotes {
				t.Errorf("%d more quotes sent", n-quotes)
			}
		})
	}
}
