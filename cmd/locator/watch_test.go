package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/console"
)

// watching runs `locator args...` until the test cancels it, handing each
// stdout line to the test as it is printed.
type watching struct {
	lines  chan string
	code   chan int
	cancel context.CancelFunc
}

func (b *cliBundle) watch(t *testing.T, args ...string) *watching {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	w := &watching{lines: make(chan string, 100), code: make(chan int, 1), cancel: cancel}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	var stderr strings.Builder
	go func() {
		code := NewMain(pw, &stderr, func(k string) string { return b.env[k] }).Run(ctx, args)
		pw.Close()
		w.code <- code
	}()
	t.Cleanup(func() {
		cancel()
		if t.Failed() {
			t.Logf("stderr: %s", stderr.String())
		}
	})
	return w
}

// next returns the next line that matches, failing after 10 s.
func (w *watching) next(t *testing.T, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-w.lines:
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("not a JSON line: %q", l)
			}
			if match(m) {
				return m
			}
		case code := <-w.code:
			t.Fatalf("exited %d before the expected line", code)
		case <-deadline:
			t.Fatal("timed out waiting for a line")
		}
	}
}

// interrupt cancels the command as Ctrl-C does and returns its exit code.
func (w *watching) interrupt(t *testing.T) int {
	t.Helper()
	w.cancel()
	select {
	case code := <-w.code:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop")
		return 0
	}
}

// `watch pnl` off a terminal prints one JSON line per change of the P&L
// stream's model: the snapshot first, then after each tick; Ctrl-C exits
// 130.
func TestWatchPnL(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	w := b.watch(t, "watch", "pnl")
	first := w.next(t, func(m map[string]any) bool { return m["connected"] == true })
	if first["account"] != "LV100001" {
		t.Errorf("first line %v", first)
	}
	b.sim.SetPrice("MSFT", decimal.NewFromInt(450))
	w.next(t, func(m map[string]any) bool {
		pnl, _ := m["pnl"].(map[string]any)
		return pnl["totalUnrealized"] == "5000" // 100 shares from 400 to 450
	})
	if code := w.interrupt(t); code != console.ExitInterrupted {
		t.Errorf("exit %d after Ctrl-C, want 130", code)
	}
}

// `watch orders --json` prints today's orders, then each order change from
// the portfolio stream, one JSON object per line.
func TestWatchOrders(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	before := b.placeLimit(t, brokerclient.SideBuy, brokerclient.OpenCloseOpen, "AAPL", 10, "150")
	w := b.watch(t, "watch", "orders", "--json")
	w.next(t, func(m map[string]any) bool { return m["clientOrderId"] == before.ClientOrderID })
	after := b.placeLimit(t, brokerclient.SideBuy, brokerclient.OpenCloseOpen, "AAPL", 10, "200")
	w.next(t, func(m map[string]any) bool {
		return m["clientOrderId"] == after.ClientOrderID && m["orderStatus"] == "Filled"
	})
	if code := w.interrupt(t); code != console.ExitInterrupted {
		t.Errorf("exit %d after Ctrl-C, want 130", code)
	}
	if code, _, errOut := b.MustRunMain(t, nil, "watch", "positions"); code != console.ExitUsage {
		t.Errorf("watch positions: exit %d (%s), want 2", code, errOut)
	}
	// A format watch cannot print is refused, not
	// answered with another one; nothing is opened.
	sent := len(b.sim.Requests())
	if code, out, errOut := b.MustRunMain(t, nil, "watch", "pnl", "-o", "csv"); code != console.ExitUsage || out != "" || !strings.Contains(errOut, "this command prints table or json, not csv") {
		t.Errorf("watch pnl -o csv: exit %d, stdout %q, stderr %q; want 2, nothing printed", code, out, errOut)
	}
	if n := len(b.sim.Requests()) - sent; n != 0 {
		t.Errorf("watch pnl -o csv sent %d requests", n)
	}
}

// Watch says its stream's state: off a terminal one JSON
// line per change (connecting, live, reconnecting), so a dropped
// connection and its recovery show, for the P&L and the orders alike.
func TestWatchShowsTheStreamsState(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for what, stream := range map[string]string{"pnl": "pnl", "orders": "portfolio"} {
		w := b.watch(t, "watch", what, "--json")
		state := func(want string) {
			t.Helper()
			w.next(t, func(m map[string]any) bool { return m["stream"] == what && m["state"] == want })
		}
		state("connecting")
		state("live")
		if n, err := b.sim.ControlStreams(brokersim.StreamControl{Stream: stream, Action: "drop"}); err != nil || n == 0 {
			t.Fatalf("drop the %s stream: %d connections, %v", stream, n, err)
		}
		state("reconnecting")
		state("live")
		if code := w.interrupt(t); code != console.ExitInterrupted {
			t.Errorf("watch %s: exit %d after Ctrl-C, want 130", what, code)
		}
	}
}
