package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
)

// ownerBundle is a `locator sim` subprocess and the environment of the
// commands run against it, with one database.
type ownerBundle struct {
	bin, dir, db string
	ready        brokersim.Ready
	clk          *clock.Scaled // the simulator's, shared with the bundle's processes
	env          []string
}

func setupOwners(t *testing.T, symbols int) *ownerBundle {
	t.Helper()
	return setupOwnersAt(t, symbols, testSpeed)
}

// setupOwnersAt is setupOwners with the bundle's clock at speed.
func setupOwnersAt(t *testing.T, symbols int, speed float64) *ownerBundle {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	dir := t.TempDir()
	b := &ownerBundle{dir: dir, bin: buildBinary(t), db: filepath.Join(dir, "locator.db")}
	sc := brokersim.DefaultScenario()
	sc.Timing.SettleMin = brokersim.Duration(150 * time.Millisecond)
	sc.Timing.SettleMax = brokersim.Duration(400 * time.Millisecond)
	for i := range symbols {
		sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: fmt.Sprintf("OW%02d", i), LocateType: 1, Shares: 100000, Price: brokersim.Dec(decimal.RequireFromString("0.0100"))})
	}
	sim := startSim(t, b.bin, dir, sc, speed)
	b.ready, b.clk = sim.Ready, sim.clk
	b.env = append(sim.env, "LOCATOR_DB="+b.db)
	return b
}

// onClock is d of the wall clock on the bundle's clock: how far the
// simulator's clock moves while d passes on the wall (the lease and its
// trust are kept on the wall clock, the broker's world on the test's).
func (b *ownerBundle) onClock(d time.Duration) time.Duration {
	return time.Duration(float64(d) * b.clk.Speed())
}

// wall is d of the bundle's clock on the wall clock.
func (b *ownerBundle) wall(d time.Duration) time.Duration {
	return time.Duration(float64(d) / b.clk.Speed())
}

// inProcess is a Main of this test process with the bundle's environment,
// writing to stdout and stderr: a command run in process (its terminal a
// test's pty) beside the bundle's real processes.
func (b *ownerBundle) inProcess(stdout, stderr io.Writer) *Main {
	env := map[string]string{}
	for _, kv := range b.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return NewMain(stdout, stderr, func(k string) string { return env[k] })
}

func (b *ownerBundle) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = b.env
	return cmd
}

// serve starts `locator serve` and waits until it owns the account.
func (b *ownerBundle) serve(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := b.command(context.Background(), "serve")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "serving LV100001") {
		t.Fatalf("serve: %q %v", line, err)
	}
	go io.Copy(io.Discard, stderr)
	return cmd
}

func (b *ownerBundle) requests(t *testing.T) []brokersim.RequestRecord {
	t.Helper()
	return simRequestLog(t, b.ready.BaseURL)
}

func (b *ownerBundle) workflows(t *testing.T) []string {
	t.Helper()
	st, err := store.Open(t.Context(), b.db, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.List(t.Context(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range ws {
		if !w.Terminal() {
			t.Errorf("%s %s left %s", w.ID, w.Symbol, w.State)
		}
		out = append(out, fmt.Sprintf("%s:%s:%s", w.Symbol, w.State, w.Asker))
	}
	return out
}

// noBrokerTrouble checks the request log for 429s, duplicate quotes, and
// history rows rejected as pending or too close (spec "Locate limits").
func (b *ownerBundle) noBrokerTrouble(t *testing.T) {
	t.Helper()
	quotes := map[string]int{}
	log := b.requests(t)
	for i, r := range log {
		if r.Status == http.StatusTooManyRequests {
			var before []string // the route's recent requests, to see what crowded it
			for _, p := range log[max(0, i-40):i] {
				if p.Method == r.Method && p.Path == r.Path {
					before = append(before, p.Time.Format("15:04:05.000")+" "+fmt.Sprint(p.Status))
				}
			}
			t.Errorf("429 on %s %s at %s after %v", r.Method, r.Path, r.Time.Format("15:04:05.000"), before)
		}
		if r.Method == "POST" && r.Path == "/v1/api/accounts/locates/quote" {
			var q struct {
				QuoteReqID string `json:"quoteReqID"`
			}
			json.Unmarshal([]byte(r.Body), &q)
			if quotes[q.QuoteReqID]++; quotes[q.QuoteReqID] > 1 {
				t.Errorf("quote %s sent twice", q.QuoteReqID)
			}
		}
	}
	out, err := b.command(t.Context(), "history", "--json").Output()
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(l, "already pending") || strings.Contains(l, "30 seconds apart") {
			t.Errorf("broker rejection: %s", l)
		}
	}
}

// An owner (`locator serve`) and three CLI processes issuing 12
// locates over 6 symbols on one account: every request is handed to the
// owner, so the broker sees no 429, no "already pending", no duplicate
// quote, and every locate ends final and correct.
func TestOwnerServesConcurrentProcesses(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 6)
	serve := b.serve(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for p := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4 {
				sym := fmt.Sprintf("OW%02d", (p*4+i)%6)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				out, err := b.command(ctx, "locate", sym, fmt.Sprint(100*(p+1)), "--max-price", "0.02").CombinedOutput()
				cancel()
				if err != nil || !(bytes.Contains(out, []byte("filled")) || bytes.Contains(out, []byte("covered"))) {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("process %d locate %s: %v\n%s", p, sym, err, out))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	ws := b.workflows(t)
	if len(ws) != 12 {
		t.Errorf("%d workflows, want 12: %v", len(ws), ws)
	}
	for _, w := range ws {
		if strings.Contains(w, fmt.Sprintf(":%d@", serve.Process.Pid)) {
			t.Errorf("workflow %s recorded as asked by the owner, not by the process that asked", w)
		}
	}
	b.noBrokerTrouble(t)
}

// A second `locator serve` on the same database and account
// refuses with exit 2 and names the owner.
func TestSecondServeRefused(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	serve := b.serve(t)
	out, err := b.command(t.Context(), "serve").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), fmt.Sprintf("owned by pid %d", serve.Process.Pid)) {
		t.Fatalf("second serve: %v\n%s", err, out)
	}
	if out, err := b.command(t.Context(), "status").CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("owned by pid %d", serve.Process.Pid)) {
		t.Errorf("status does not name the owner: %v\n%s", err, out)
	}
}

// SIGKILL of the owner while a follower's offer is open (its
// accept held up at the broker): the follower takes the account over at
// once (the dead owner's socket refuses), recovers the workflow, and it
// ends filled with one quote.
func TestOwnerKilledWhileOfferOpen(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 1)
	serve := b.serve(t)
	faults, _ := json.Marshal(brokersim.Faults{Delay: brokersim.Duration(3 * time.Second),
		Script: []brokersim.FaultStep{{Match: "POST /v1/api/accounts/locates/accept", Kind: "delay", Count: 1}}})
	if resp, err := http.Post(b.ready.BaseURL+"/_sim/faults", "application/json", bytes.NewReader(faults)); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("faults: %v %v", resp, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	follower := b.command(ctx, "locate", "OW00", "300", "--max-price", "0.02")
	var out bytes.Buffer
	follower.Stdout, follower.Stderr = &out, &out
	if err := follower.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(fmt.Sprint(b.requests(t)), "/locates/accept") {
		if time.Now().After(deadline) {
			t.Fatalf("no accept reached the broker\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond) // polling a subprocess's effect, not waiting out a window
	}
	serve.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	if err := follower.Wait(); err != nil {
		t.Fatalf("follower: %v\n%s", err, out.String())
	}
	t.Logf("the workflow ended %s after the owner died", time.Since(killed)) // filled: within its offer's window
	ws := b.workflows(t)
	if len(ws) != 1 || !strings.HasPrefix(ws[0], "OW00:"+string(states.Filled)) {
		t.Errorf("workflows %v, want OW00 filled", ws)
	}
	b.noBrokerTrouble(t)
}

// The daemon (the owner) with a locate job every 20 s and a
// credit-back job, and a hand-run loop of locates and credit-backs on the
// same symbols: no job or command hangs, no job fails, every workflow ends,
// and the broker sees no 429 and no rejection for a pending quote or the
// spacing. No run is skipped: a run that must wait out the broker's
// 30-second same-symbol spacing behind a hand-run quote outlasts a
// 20-second schedule, and the tick that came meanwhile runs right after it
// (jobs.CatchUp). The schedules run on the wall clock (robfig/cron's), the
// broker's world on the test clock, five times faster: the jobs file's
// 4 and 9 s are the 20 and 45 s of the broker's time. It soaks
// 20 s of wall time (100 s of the broker's); LOCATOR_SOAK=1m runs the
// issue's five minutes. `go test -short` skips it.
func TestDaemonAndHandRunLoop(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 2)
	soak := 20 * time.Second
	if d, err := time.ParseDuration(os.Getenv("LOCATOR_SOAK")); err == nil {
		soak = d
	}
	cfg := filepath.Join(b.dir, "jobs.json")
	if err := os.WriteFile(cfg, []byte(`{"jobs": [
		{"name": "loc", "kind": "locate", "schedule": "@every 4s", "holidays": "run", "symbols": ["OW00", "OW01"], "quantity": 300, "policy": {"maxPrice": 0.02}},
		{"name": "cb", "kind": "credit-back-unused", "schedule": "@every 9s", "holidays": "run"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	daemon := b.command(context.Background(), "run", "--config", cfg, "--json", "-v")
	var daemonErr syncBuffer
	daemon.Stderr = &daemonErr
	owned := make(chan struct{})
	daemonOut, _ := daemon.StdoutPipe()
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	var runs []map[string]any
	var runsMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(daemonOut)
		for sc.Scan() {
			var r map[string]any
			if json.Unmarshal(sc.Bytes(), &r) == nil && r["job"] != nil {
				runsMu.Lock()
				runs = append(runs, r)
				runsMu.Unlock()
			}
		}
	}()
	go func() { // the daemon owns the account once it says it runs
		for !strings.Contains(daemonErr.String(), "daemon running") {
			if t.Context().Err() != nil {
				return
			}
			time.Sleep(50 * time.Millisecond) // watching a subprocess's log
		}
		close(owned)
	}()
	select {
	case <-owned:
	case <-time.After(time.Minute):
		t.Fatalf("the daemon did not start:\n%s", daemonErr.String())
	}
	end := time.Now().Add(soak)
	commands := 0
	for i := 0; time.Now().Before(end); i++ {
		commands++
		sym := fmt.Sprintf("OW%02d", i%2)
		args := []string{"locate", sym, fmt.Sprint(100 * (1 + i%4)), "--max-price", "0.02"}
		if i%3 == 2 {
			args = []string{"credit-back", sym, "100"}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := b.command(ctx, args...).CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		var ee *exec.ExitError
		switch {
		case hung:
			t.Errorf("%v hung\n%s", args, out)
		case err == nil:
		case args[0] == "credit-back" && errors.As(err, &ee) && ee.ExitCode() == 2:
			// The credit-back job sold it first: refused, nothing sent.
		default:
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	stopped := b.clk.Now()
	daemon.Process.Signal(syscall.SIGTERM)
	daemon.Wait()
	t.Logf("%d runs delayed behind the one before", strings.Count(daemonErr.String(), "run delayed"))
	runsMu.Lock()
	defer runsMu.Unlock()
	var loc, cb int
	for _, r := range runs {
		if ended, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(r["endedAt"])); r["outcome"] != "ok" && ended.Before(stopped) {
			t.Errorf("job run %v", r) // a run the test's own stop cut short is not counted
		}
		switch r["job"] {
		case "loc":
			loc++
		case "cb":
			cb++
		}
	}
	// How many ticks a slow machine fits in the soak is its own business;
	// that both jobs ran, and the locate job more than once (a tick that
	// came while a run waited out the spacing runs after it), is not.
	if loc < 2 || cb < 1 {
		t.Errorf("%d locate and %d credit-back runs in %s", loc, cb, soak)
	}
	ws := b.workflows(t)
	t.Logf("%s: %d locate and %d credit-back job runs, %d hand-run commands, %d workflows", soak, loc, cb, commands, len(ws))
	b.noBrokerTrouble(t)
}

// With a live owner, `run --once` and `orders cancel` from
// other processes hand their work to it (they used to refuse): the job runs
// on the owner's engine and is reported by the process that asked, and the
// order is cancelled through the owner's order workflow.
func TestRunOnceAndOrderCancelHandedToOwner(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 1)
	serve := b.serve(t)
	cfg := filepath.Join(b.dir, "jobs.json")
	if err := os.WriteFile(cfg, []byte(`{"jobs": [{"name": "loc", "kind": "locate", "schedule": "@every 1h", "holidays": "run", "symbols": ["OW00"], "quantity": 300, "policy": {"maxPrice": 0.02}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := b.command(ctx, "run", "--config", cfg, "--once", "loc", "--json").Output()
	var run console.RunJSON
	if err != nil || json.Unmarshal(out, &run) != nil || run.Outcome != "ok" || !strings.Contains(run.Detail, "OW00 filled 300") {
		t.Fatalf("run --once through the owner: %v\n%s", err, out)
	}

	// A sell far above the market (past the fat-finger guard, on purpose)
	// stays working; another process cancels it.
	out, err = b.command(ctx, "short", "AAPL", "10", "--limit", "250.00", "--force", "--yes", "--json").Output()
	var short struct {
		ClientOrderID string `json:"clientOrderId"`
		State         string `json:"state"`
	}
	if lines := bytes.Split(bytes.TrimSpace(out), []byte("\n")); err != nil || json.Unmarshal(lines[len(lines)-1], &short) != nil || short.State != string(states.OrderWorking) {
		t.Fatalf("short: %v\n%s", err, out)
	}
	out, err = b.command(ctx, "orders", "cancel", short.ClientOrderID).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "canceled (Canceled)") {
		t.Fatalf("orders cancel through the owner: %v\n%s", err, out)
	}
	out, err = b.command(ctx, "orders", "cancel", short.ClientOrderID).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "nothing was sent") {
		t.Errorf("cancel again: %v, want exit 2\n%s", err, out)
	}
	// The owner never changed hands.
	if out, err := b.command(ctx, "status").CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("owned by pid %d", serve.Process.Pid)) {
		t.Errorf("status: %v\n%s", err, out)
	}
	b.noBrokerTrouble(t)
}

// An offer waiting at one process's prompt, with `locator
// serve` owning the account, is put to that process only: another process
// locating meanwhile neither declines it nor answers it, and the person's
// "y" typed after that fills it.
func TestPromptNotDeclinedByAnotherProcess(t *testing.T) {
	t.Parallel()
	b := setupOwnersAt(t, 1, personSpeed)
	b.serve(t)
	var stdout, stderr syncBuffer
	m := b.inProcess(&stdout, &stderr)
	term, keyboard := openTerminalPair(t)
	m.Stdin = term
	done := make(chan int, 1)
	go func() { done <- m.Run(t.Context(), []string{"locate", "HTBX", "300"}) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "Accept HTBX 300 shares") {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // watching another goroutine's output, not a window
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if out, err := b.command(ctx, "locate", "OW00", "300", "--max-price", "0.02").CombinedOutput(); err != nil {
		t.Fatalf("the other process's locate: %v\n%s", err, out)
	}
	select {
	case code := <-done:
		t.Fatalf("the prompt ended (exit %d) while the other process ran:\n%s\n%s", code, stdout.String(), stderr.String())
	default:
	}
	if _, err := keyboard.WriteString("y\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stdout.String(), "filled") {
			t.Fatalf("exit %d after yes:\n%s\n%s", code, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no end after yes:\n%s", stderr.String())
	}
	ws := b.workflows(t)
	if len(ws) != 2 {
		t.Errorf("workflows %v, want HTBX and OW00", ws)
	}
	for _, w := range ws {
		if !strings.Contains(w, ":"+string(states.Filled)+":") {
			t.Errorf("workflow %s, want filled", w)
		}
	}
	b.noBrokerTrouble(t)
}
