//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
)

// emptyRowsBytes is the size of the red team's answer: 8 MB of `{},{},…`
// (2.7 million rows), which took `locator inventory` to 1.6 GB.
const emptyRowsBytes = 8 << 20

// emptyRows is an answer of emptyRowsBytes of empty rows between open and
// close.
func emptyRows(open, close string) []byte {
	var b bytes.Buffer
	b.Grow(emptyRowsBytes + len(open) + len(close))
	b.WriteString(open + "{}")
	for b.Len() < emptyRowsBytes {
		b.WriteString(",{}")
	}
	b.WriteString(close)
	return b.Bytes()
}

// hostileLists are the list endpoints of LV100001 a hostileBroker answers
// with emptyRows once armed, each in the envelope the spec shows (spec:
// Endpoints, "Short locates", "Orders", "Positions"), with the cap the
// client holds them to.
var hostileLists = map[string]struct {
	open, close string
	cap         int
}{
	"/v1/api/accounts/LV100001/locates/inventory": {`{"locateInventory":[`, `]}`, 10_000},
	"/v1/api/accounts/LV100001/locates/history":   {`{"locateHistory":[`, `]}`, 50_000},
	"/v1/api/accounts/LV100001/orders":            {`[`, `]`, 50_000},
	"/v1/api/accounts/LV100001/positions":         {`[`, `]`, 10_000},
}

// hostileBroker is the simulator, on the tests' shared clock, behind a
// handler that answers GETs of an armed path of hostileLists with its
// emptyRows and everything else as the simulator does. It counts the
// hostile answers asked for, and served receives the path of each once it
// has been written, or the client went away.
type hostileBroker struct {
	sim     *brokersim.Sim
	url     string
	setting string // the shared clock, for clock.SettingEnv
	armed   sync.Map
	mu      sync.Mutex
	asked   map[string]int
	served  chan string
}

func newHostileBroker(t *testing.T) *hostileBroker {
	t.Helper()
	clk, setting := testClock(testStart, testSpeed)
	sim, err := brokersim.New(brokersim.DefaultScenario(), brokersim.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{}
	for path, l := range hostileLists {
		bodies[path] = emptyRows(l.open, l.close)
	}
	h := &hostileBroker{sim: sim, setting: setting, asked: map[string]int{}, served: make(chan string, 64)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, armed := h.armed.Load(r.URL.Path); !armed || r.Method != http.MethodGet {
			sim.ServeHTTP(w, r)
			return
		}
		h.mu.Lock()
		h.asked[r.URL.Path]++
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(bodies[r.URL.Path])
		select {
		case h.served <- r.URL.Path:
		default: // nobody counts this many
		}
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// askedFor is how many hostile answers path was asked for.
func (h *hostileBroker) askedFor(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked[path]
}

// arm makes the broker answer path with its empty rows from now on.
func (h *hostileBroker) arm(path string) { h.armed.Store(path, true) }

// env is the environment of a locator process talking to the broker.
func (h *hostileBroker) env() []string {
	return []string{"LOCATOR_BASE_URL=" + h.url, "LOCATOR_KEY_ID=SIMLIVEKEY01", "LOCATOR_SECRET=sim-live-secret-01",
		clock.SettingEnv + "=" + h.setting}
}

// checkPeak fails when a run's peak RSS is 300 MB or more.
func checkPeak(t *testing.T, run *peakRun, what string) {
	t.Helper()
	peakKiB, spawnerKiB := run.peak(t)
	if peak := peakKiB << 10; peak >= 300e6 {
		t.Errorf("%s: peak RSS %d MB, want under 300 MB", what, peak/1e6)
	}
	t.Logf("%s: peak RSS %d MB (%d KiB, of which up to %d KiB the spawner's)", what, (peakKiB<<10)/1e6, peakKiB, spawnerKiB)
}

// The red team's finding, on the built binary: the read commands against
// a broker answering 8 MB of empty rows (2.7 million) for the locate
// inventory, the locate history, the order book and the open positions
// (spec: Endpoints, "Short locates", "Orders", "Positions") each end with
// the client's error naming the endpoint and its cap (exit 1, no crash),
// having asked once, and the process's peak RSS (its rusage's ru_maxrss,
// through the spawner) stays under 300 MB: it was 1.6 GB for inventory.
func TestCLIAnswerOfManyRowsPeakRSS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	bin := buildBinary(t)
	h := newHostileBroker(t)
	for path := range hostileLists {
		h.arm(path)
	}
	for _, tc := range []struct {
		command, path, endpoint string
	}{
		{"inventory", "/v1/api/accounts/LV100001/locates/inventory", "GET /v1/api/accounts/{accountId}/locates/inventory"},
		{"history", "/v1/api/accounts/LV100001/locates/history", "GET /v1/api/accounts/{accountId}/locates/history"},
		{"orders", "/v1/api/accounts/LV100001/orders", "GET /v1/api/accounts/{accountId}/orders"},
		{"positions", "/v1/api/accounts/LV100001/positions", "GET /v1/api/accounts/{accountId}/positions"},
	} {
		run := newPeakRun(t, t.TempDir(), bin, h.env(), tc.command)
		var stdout, stderr bytes.Buffer
		run.cmd.Stdout, run.cmd.Stderr = &stdout, &stderr
		err := run.cmd.Run()
		want := fmt.Sprintf("(%s): the broker's answer holds more than %d rows, this endpoint's cap; none of it was used", tc.endpoint, hostileLists[tc.path].cap)
		switch {
		case run.cmd.ProcessState == nil:
			t.Fatalf("locator %s: %v", tc.command, err)
		case run.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), want):
			t.Errorf("locator %s: exit %d, stderr %q; want exit 1 and %q", tc.command, run.cmd.ProcessState.ExitCode(), stderr.String(), want)
		case strings.Contains(stderr.String(), "goroutine "):
			t.Errorf("locator %s crashed: %s", tc.command, stderr.String())
		}
		if n := h.askedFor(tc.path); n != 1 {
			t.Errorf("locator %s: asked %d times, want once (no retry)", tc.command, n)
		}
		checkPeak(t, run, "locator "+tc.command)
	}
}

// stderrLines is a process's stderr line by line as it comes (lines,
// closed at its end), and what it said so far (said).
type stderrLines struct {
	lines chan string
	said  []string
}

func readLines(r io.Reader) *stderrLines {
	l := &stderrLines{lines: make(chan string, 256)}
	go func() {
		defer close(l.lines)
		for sc := bufio.NewScanner(r); sc.Scan(); {
			l.lines <- sc.Text()
		}
	}()
	return l
}

// next is the next line, failing the test when the process ends or ctx
// does first.
func (l *stderrLines) next(t *testing.T, ctx context.Context, what string) string {
	t.Helper()
	select {
	case line, ok := <-l.lines:
		if !ok {
			t.Fatalf("the process ended while waiting for %s; it said:\n%s", what, l)
		}
		l.said = append(l.said, line)
		return line
	case <-ctx.Done():
		t.Fatalf("no %s; the process said:\n%s", what, l)
	}
	return ""
}

func (l *stderrLines) String() string { return strings.Join(l.said, "\n") }

// The daemon's read path: a `locator serve` owning LV100001 starts on the
// simulator's answers, then its poller's quiet history reads (spec:
// "Short locates": the day's history) meet 8 MB of empty rows. Each read fails with
// the client's error (logged: the account stays served and the poller
// backs off and reads again) and nothing of the answer is used; after
// three such reads serve still stops cleanly on SIGTERM (exit 0), its
// peak RSS under 300 MB, having sent the broker nothing but reads.
func TestServeAnswerOfManyRowsPeakRSS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	bin := buildBinary(t)
	h := newHostileBroker(t)
	run := newPeakRun(t, t.TempDir(), bin, h.env(), "serve", "--listen", "")
	stderr, err := run.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.cmd.Process.Kill(); run.cmd.Wait() })
	log := readLines(stderr)
	// A hang guard, several times what the run takes: serving within a
	// few seconds, then the quiet poller's history read every 2 minutes of
	// the shared clock (24 s of the wall's) and its back-off after each
	// failure.
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	for !strings.HasPrefix(log.next(t, ctx, "serving line"), "serving LV100001") {
	}
	h.arm("/v1/api/accounts/LV100001/locates/history")
	want := "locate history (GET /v1/api/accounts/{accountId}/locates/history): the broker's answer holds more than 50000 rows, this endpoint's cap; none of it was used"
	// Three reads, each answered whole or cut off by the client, and the
	// poller's error said at least once.
	for reads, said := 0, false; reads < 3 || !said; {
		select {
		case <-h.served:
			reads++
		default:
			said = strings.Contains(log.next(t, ctx, "a hostile read and the poller's error"), want) || said
		}
	}
	run.cmd.Process.Signal(syscall.SIGTERM)
	for line := range log.lines {
		log.said = append(log.said, line)
	}
	if err := run.cmd.Wait(); err != nil {
		t.Errorf("serve on SIGTERM: %v, want exit 0; it said:\n%s", err, log)
	}
	for _, line := range log.said {
		if strings.HasPrefix(line, "panic") || strings.HasPrefix(line, "goroutine ") {
			t.Errorf("serve crashed: %s", line)
		}
	}
	for _, r := range h.sim.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("serve sent %s %s: nothing was to be acted on", r.Method, r.Path)
		}
	}
	checkPeak(t, run, "locator serve")
}
