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

// watchWays runs test in two parallel subtests: "alone", where watch
// follows the broker's streams itself (no owner runs: local.Alone), and
// "beside serve", where a `serve` owns the account (its stream address
// given by serve's --ws-url) and watch gets its streams relayed through
// the account API.
func watchWays(t *testing.T, test func(t *testing.T, b *cliBundle)) {
	for _, beside := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "beside serve"}[beside], func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			if beside {
				owner := b.startMain(t, "serve", "--ws-url", wsURL(b))
				waitFor(t, "the owner", func() bool { return strings.Contains(owner.stderr.String(), "serving LV100001") })
			}
			test(t, b)
		})
	}
}

// wsURL is the simulator's stream address: its REST address with ws.
func wsURL(b *cliBundle) string { return "ws" + strings.TrimPrefix(b.env["LOCATOR_BASE_URL"], "http") }

// Spec "P&L stream": `watch pnl` off a terminal prints one JSON line per
// change of the P&L stream's model: the snapshot first, then after each
// tick; Ctrl-C exits 130.
func TestWatchPnL(t *testing.T) {
	t.Parallel()
	watchWays(t, testWatchPnL)
}

func testWatchPnL(t *testing.T, b *cliBundle) {
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

// Spec "Portfolio stream": `watch orders --json` prints today's orders,
// then each order change from the portfolio stream, one JSON object per
// line; a stream that is not one is refused (exit 2), and so is a format
// watch cannot print.
func TestWatchOrders(t *testing.T) {
	t.Parallel()
	watchWays(t, testWatchOrders)
}

func testWatchOrders(t *testing.T, b *cliBundle) {
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
	sent := len(b.sim.Requests())
	conns, err := b.sim.ControlStreams(brokersim.StreamControl{})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := b.MustRunMain(t, nil, "watch", "positions"); code != console.ExitUsage || !strings.Contains(errOut, "positions") {
		t.Errorf("watch positions: exit %d (%s), want 2 naming the stream", code, errOut)
	}
	// A format watch cannot print is refused, not
	// answered with another one; nothing is opened.
	if code, out, errOut := b.MustRunMain(t, nil, "watch", "pnl", "-o", "csv"); code != console.ExitUsage || out != "" || !strings.Contains(errOut, "this command prints table or json, not csv") {
		t.Errorf("watch pnl -o csv: exit %d, stdout %q, stderr %q; want 2, nothing printed", code, out, errOut)
	}
	for _, r := range b.sim.Requests()[sent:] {
		// A running owner reads on its own: its poller history and
		// inventory, its ledger sync the account's detail and the cash
		// ledger.
		owners := strings.HasSuffix(r.Path, "/locates/history") || strings.HasSuffix(r.Path, "/locates/inventory") ||
			r.Path == "/v1/api/account/LV100001" || strings.Contains(r.Path, "/cash-transactions/")
		if !owners {
			t.Errorf("%s %s sent by watch positions or watch pnl -o csv", r.Method, r.Path)
		}
	}
	// (The interrupted watch's own may still be closing: none is added.)
	if now, _ := b.sim.ControlStreams(brokersim.StreamControl{}); now > conns {
		t.Errorf("%d stream connections after refused watches, %d before", now, conns)
	}
}

// Spec "WebSocket streams": watch says its stream's state, off a terminal
// one JSON line per change (connecting, live, reconnecting), so a dropped
// connection and its recovery show, for the P&L and the orders alike.
func TestWatchShowsTheStreamsState(t *testing.T) {
	t.Parallel()
	watchWays(t, testWatchShowsTheStreamsState)
}

func testWatchShowsTheStreamsState(t *testing.T, b *cliBundle) {
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

// --ws-url is the stream address of a watch with no owner (the broker's
// streams followed there), and is refused beside an owner, which follows
// its own (serve --ws-url): exit 2, nothing sent. An address that is not a
// stream's is refused before anything is sent.
func TestWatchStreamURL(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	w := b.watch(t, "watch", "pnl", "--ws-url", wsURL(b))
	w.next(t, func(m map[string]any) bool { return m["connected"] == true })
	if code := w.interrupt(t); code != console.ExitInterrupted {
		t.Errorf("exit %d after Ctrl-C, want 130", code)
	}

	sent := len(b.sim.Requests())
	if code, _, errOut := b.MustRunMain(t, nil, "watch", "pnl", "--ws-url", "ftp://127.0.0.1:1"); code != console.ExitUsage {
		t.Errorf("watch --ws-url ftp://…: exit %d (%s), want 2", code, errOut)
	}
	b.startServe(t)
	if code, _, errOut := b.MustRunMain(t, nil, "watch", "orders", "--ws-url", wsURL(b)); code != console.ExitUsage || !strings.Contains(errOut, "serve --ws-url") {
		t.Errorf("watch --ws-url beside serve: exit %d (%s), want 2 saying the owner's is serve --ws-url", code, errOut)
	}
	for _, r := range b.sim.Requests()[sent:] {
		// The owner's own start-up and polls.
		if r.Method != "GET" {
			t.Errorf("%s %s sent by refused watches", r.Method, r.Path)
		}
	}
}
