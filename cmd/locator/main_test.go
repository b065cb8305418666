package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// This package's tests mostly wait: on the processes they start, on
	// the shared clock's windows, on the broker's pace. Two at a time
	// (GOMAXPROCS on two cores) left the machine three quarters idle, so
	// eight run at once unless -parallel says otherwise.
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", "8")
	}
	code := m.Run()
	removeBinary()
	os.Exit(code)
}

// testStart is where the tests' clocks start: a Wednesday noon in New
// York, so that no run is warned about the exchange's calendar and none
// meets the broker's 8 PM rollover, whatever day the tests run.
var testStart = time.Date(2026, 11, 25, 12, 0, 0, 0, market.NewYork)

// The speeds of the tests' shared clocks, against the wall clock.
const (
	// testSpeed: the broker's 30-second windows and rate limits pass in
	// a fifth of the time, and a stall of the machine of up to six
	// seconds still leaves an offer's window open.
	testSpeed = 5
	// personSpeed is for a test that plays a person inside one of the
	// broker's windows (answering an offer at a terminal, from another
	// shell, by link; interrupting a command while its offer or its
	// same-symbol spacing is open), with commands and processes in
	// between: the 30 seconds are the wall's, as a person has them.
	personSpeed = 1
)

// testClock is a clock shared with the processes and Mains of a test
// through the environment (clock.SettingEnv), starting at start and
// running speed times faster than the wall clock.
func testClock(start time.Time, speed float64) (*clock.Scaled, string) {
	clk := clock.NewScaled(start, speed)
	return clk, clk.Setting()
}

// A locate or a short on a holiday, or after an early
// close, warns on stderr before it goes (market.ClosedNote), and still
// goes; on a trading day before the close nothing is said. Each run has a
// simulator of its own on its day.
func TestClosedWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		at   time.Time
		args []string
		want string
	}{
		{"Thanksgiving", time.Date(2026, 11, 26, 10, 0, 0, 0, market.NewYork), []string{"locate", "HTBX", "100", "--max-price", "0.02"},
			"warning: the exchange is closed today (Thanksgiving Day); its next session opens Fri 2026-11-27 09:30 EST"},
		{"after the early close", time.Date(2026, 11, 27, 13, 30, 0, 0, market.NewYork), []string{"short", "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.02", "--yes"},
			"warning: the exchange closed early today, at 13:00 EST"},
		{"a trading morning", time.Date(2026, 11, 27, 11, 0, 0, 0, market.NewYork), []string{"locate", "HTBY", "100", "--max-price", "0.05"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, errOut := setupCLIAt(t, tc.at, testSpeed).MustRunMain(t, nil, tc.args...)
			if code != 0 || (tc.want == "" && strings.Contains(errOut, "warning")) || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 0 and %q", code, errOut, tc.want)
			}
		})
	}
}

// cliBundle is a simulator on a clock it shares with every command the
// test runs (in its environment, clock.SettingEnv) and the environment a
// user would export.
type cliBundle struct {
	sim *brokersim.Sim
	clk *clock.Scaled
	env map[string]string
}

func setupCLI(t *testing.T, opts ...brokersim.Option) *cliBundle {
	t.Helper()
	return setupCLIAt(t, testStart, testSpeed, opts...)
}

// setupCLIAt is setupCLI with the shared clock starting at start and
// running speed times faster than the wall clock.
func setupCLIAt(t *testing.T, start time.Time, speed float64, opts ...brokersim.Option) *cliBundle {
	t.Helper()
	clk, setting := testClock(start, speed)
	sim, err := brokersim.New(brokersim.DefaultScenario(), append([]brokersim.Option{brokersim.WithClock(clk)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { logRequestsIfFailed(t, sim) })
	return &cliBundle{sim: sim, clk: clk, env: map[string]string{
		"LOCATOR_BASE_URL": srv.URL, "LOCATOR_KEY_ID": "SIMLIVEKEY01", "LOCATOR_SECRET": "sim-live-secret-01",
		"LOCATOR_ACCOUNT": "LV100001", "LOCATOR_DB": filepath.Join(t.TempDir(), "locator.db"),
		// No settings file unless a test writes one: never the user's own.
		"XDG_CONFIG_HOME": t.TempDir(),
		clock.SettingEnv:  setting,
	}}
}

// logRequestsIfFailed logs what the simulator was asked, on the
// simulator's clock, when t failed: a flake under load is told by the
// spacing of the reads and the answers.
func logRequestsIfFailed(t *testing.T, sim *brokersim.Sim) {
	if !t.Failed() {
		return
	}
	var b strings.Builder
	for _, r := range sim.Requests() {
		fmt.Fprintf(&b, "%s %d %s %s\n", r.Time.Format("15:04:05.000"), r.Status, r.Method, r.Path)
	}
	t.Logf("the simulator's requests:\n%s", b.String())
}

// MustRunMain runs the CLI in-process and returns its exit code and output.
func (b *cliBundle) MustRunMain(tb testing.TB, env map[string]string, args ...string) (int, string, string) {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return b.env[k]
	}
	// A hang guard, past ten times the longest a run takes here (a few
	// seconds; a bench run of generated days, ten): a loaded machine
	// (two suites side by side) took a minute for one.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m := NewMain(&stdout, &stderr, getenv)
	m.Stdin = strings.NewReader("") // nobody at a terminal
	code := m.Run(ctx, args)
	return code, stdout.String(), stderr.String()
}

// workflowCount counts the workflows recorded in the CLI's database.
func (b *cliBundle) workflowCount(t *testing.T) int {
	t.Helper()
	st, err := store.Open(t.Context(), b.env["LOCATOR_DB"], clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.List(t.Context(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(ws)
}

func (b *cliBundle) writes() []string {
	var out []string
	for _, r := range b.sim.Requests() {
		if r.Method != "GET" {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// docs/design.md "Contracts": locate --json ends with the outcome object; exit 0.
func TestLocateJSON(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--max-price", "0.02", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var o console.OutcomeRecord
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &o); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if o.State != "filled" || o.Symbol != "HTBX" || o.Shares != 300 || o.PricePerShare != "0.0150" || o.LocateType != "Locate" || o.QuoteReqID == "" || o.ID == "" {
		t.Errorf("outcome %+v", o)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("--json printed a non-JSON line %q", l)
		}
	}
	// status reads the same workflow back from the database.
	code, out, _ = b.MustRunMain(t, nil, "status", o.ID, "--json")
	if code != 0 || !strings.Contains(out, `"state":"filled"`) || !strings.Contains(out, `"to":"accepting"`) {
		t.Errorf("status: exit %d %s", code, out)
	}
	// A unique prefix of the id names it too, as does
	// the quoteReqID; one naming nothing is refused.
	for _, ref := range []string{o.ID[:7], o.QuoteReqID} {
		if code, out, errOut := b.MustRunMain(t, nil, "status", ref, "--json"); code != 0 || !strings.Contains(out, `"id":"`+o.ID+`"`) {
			t.Errorf("status %s: exit %d\n%s\n%s", ref, code, out, errOut)
		}
	}
	if code, _, errOut := b.MustRunMain(t, nil, "status", "wf-nothing"); code != console.ExitUsage || !strings.Contains(errOut, "no workflow") {
		t.Errorf("status wf-nothing: exit %d %q", code, errOut)
	}
	if strings.Contains(out+errOut, "sim-live-secret-01") {
		t.Error("the secret was printed")
	}
}

// Exit codes (docs/design.md): 4 declined by the policy, 3 rejected by the
// broker, 0 not needed / covered.
func TestLocateExitCodes(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"locate", "AAPL", "100", "--yes"}, 0, "not_needed"},
		{[]string{"locate", "HTBY", "1000", "--max-price", "0.02"}, 4, "declined"},
		{[]string{"locate", "RSTR", "100", "--yes"}, 3, "rejected"},
		{[]string{"locate", "HTBX", "100", "--yes"}, 0, "filled"},
		{[]string{"locate", "HTBX", "100", "--yes"}, 0, "covered"},
		{[]string{"credit-back", "HTBX", "100", "--type", "Locate"}, 0, "credited"},
	} {
		code, out, errOut := b.MustRunMain(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\nstdout %s\nstderr %s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}

// Bad input exits 2 with a clear message and sends nothing (issue: "Bad
// input ... exits 2 ... asserted from the simulator's request log").
func TestBadInputSendsNothing(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"quantity 150", nil, []string{"locate", "HTBX", "150", "--yes"}, "multiple of 100"},
		{"quantity 0", nil, []string{"locate", "HTBX", "0", "--yes"}, "multiple of 100"},
		{"empty symbol", nil, []string{"locate", "", "100", "--yes"}, "symbol"},
		{"lowercase with slash", nil, []string{"locate", "ht/bx", "100", "--yes"}, "symbol"},
		{"unknown account", map[string]string{"LOCATOR_ACCOUNT": "ZZ999999"}, []string{"locate", "HTBX", "100", "--yes"}, "not found"},
		{"non-Active account", map[string]string{"LOCATOR_ACCOUNT": "LV100002"}, []string{"locate", "HTBX", "100", "--yes"}, "not active"},
		{"paper account under --env live", map[string]string{"LOCATOR_KEY_ID": "SIMPAPERKEY01", "LOCATOR_SECRET": "sim-paper-secret-01", "LOCATOR_ACCOUNT": "PP200001"}, []string{"locate", "HTBX", "100", "--yes"}, "but live was selected"},
		{"live account under --env paper", nil, []string{"locate", "HTBX", "100", "--yes", "--env", "paper"}, "but paper was selected"},
		{"credit-back type in wrong case", nil, []string{"credit-back", "HTBX", "100", "--type", "locate"}, "case-sensitive"},
		{"credit-back above inventory", nil, []string{"credit-back", "HTBX", "100"}, "available"},
		{"no key", map[string]string{"LOCATOR_SECRET": ""}, []string{"locate", "HTBX", "100"}, "API key"},
		// Input the domain refuses before anything is recorded.
		{"quantity above the spec's bound", nil, []string{"locate", "HTBX", "2147483700", "--yes"}, "multiple of 100 from 100 to 2147483647"},
		{"quantity that would overflow", nil, []string{"locate", "HTBX", "9223372036854775800", "--yes"}, "multiple of 100"},
		{"40-character symbol", nil, []string{"locate", strings.Repeat("A", 40), "100", "--yes"}, "longer than"},
		{"non-ASCII symbol", nil, []string{"locate", "ÄÖÜ", "100", "--yes"}, "not a ticker"},
		{"infinite cap", nil, []string{"locate", "HTBX", "100", "--max-price", "1e400"}, "at most 9999.99"},
		{"cap with five decimals", nil, []string{"locate", "HTBX", "100", "--max-price", "0.00001"}, "decimal places"},
		{"nobody to confirm and no cap", nil, []string{"locate", "HTBY", "9000"}, "confirmation"},
		{"unknown command", nil, []string{"borrow", "HTBX"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, recorded := len(b.writes()), b.workflowCount(t)
			code, _, errOut := b.MustRunMain(t, tc.env, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", code, errOut)
			}
			if !strings.Contains(strings.ToLower(errOut), strings.ToLower(tc.want)) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
			if w := b.writes(); len(w) != before {
				t.Errorf("writes sent: %v", w[before:])
			}
			if n := b.workflowCount(t); n != recorded {
				t.Errorf("%d workflows recorded for bad input", n-recorded)
			}
		})
	}
}

func TestStatesCommand(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, out, _ := b.MustRunMain(t, nil, "states", "--format", "dot", "--kind", "credit_back")
	if code != 0 || !strings.HasPrefix(out, "digraph credit_back") {
		t.Errorf("exit %d: %s", code, out)
	}
	if code, _, _ := b.MustRunMain(t, nil, "states", "--format", "png", "--kind", "locate"); code != 2 {
		t.Errorf("bad console.Format: exit %d", code)
	}
	// One diagram a run (dot renders only the first of
	// several), so the kind is required.
	if code, out, errOut := b.MustRunMain(t, nil, "states", "--format", "dot"); code != 2 || out != "" || !strings.Contains(errOut, "one diagram a run") {
		t.Errorf("states without --kind: exit %d, stdout %q, stderr %q; want 2", code, out, errOut)
	}
}

// The state diagrams of docs/states.md are what `locator states` prints: a
// change to the tables that is not in that page fails here.
func TestREADMEDiagramsMatchTheTables(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/states.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(raw), "```mermaid\n")[1:]
	kinds := states.Kinds()
	if len(blocks) != len(kinds) {
		t.Fatalf("docs/states.md has %d mermaid diagrams, want %d (one per workflow kind)", len(blocks), len(kinds))
	}
	for i, k := range kinds {
		got, _, _ := strings.Cut(blocks[i], "```")
		if got != states.Mermaid(k) {
			t.Errorf("docs/states.md diagram %d is not `locator states --kind %s --format mermaid`; regenerate it", i+1, k)
		}
	}
}

// A workflow declined after an offer keeps the price it
// was offered, in its outcome and in status (no total: nothing was paid).
func TestDeclinedKeepsItsOffer(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBY", "1000", "--max-price", "0.02", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var o console.OutcomeRecord
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &o); err != nil || code != console.ExitDeclined {
		t.Fatalf("exit %d, last line %q: %v\n%s", code, lines[len(lines)-1], err, errOut)
	}
	if o.State != "declined" || o.PricePerShare == "" || o.Total != "" || o.LocateType == "" {
		t.Errorf("declined outcome %+v, want the offered price and type, no total", o)
	}
	code, out, _ = b.MustRunMain(t, nil, "status", o.ID, "--json")
	if code != 0 || !strings.Contains(out, `"pricePerShare":"`+o.PricePerShare+`"`) {
		t.Errorf("status %s: exit %d, want price %s\n%s", o.ID, code, o.PricePerShare, out)
	}
}
