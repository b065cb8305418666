package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
)

// daemonConfig is a config with one job of each kind plus two that cannot
// end located; schedules are far away, the tests use --once. These tests
// run on the wall clock, whatever the day: "holidays": "run" keeps an
// exchange holiday (a run recorded as skipped) out of them.
const daemonConfig = `{
  "jobs": [
    {"name": "watch", "kind": "locate", "schedule": "0 0 9 * * MON-FRI", "holidays": "run",
     "symbols": ["HTBX"], "quantity": 300, "policy": {"maxPrice": "0.02"}},
    {"name": "pricey", "kind": "locate", "schedule": "0 0 9 * * MON-FRI", "holidays": "run",
     "symbols": ["HTBY"], "quantity": 100, "policy": {"maxPrice": 0.02}},
    {"name": "restricted", "kind": "locate", "schedule": "0 0 9 * * MON-FRI", "holidays": "run",
     "symbols": ["RSTR"], "quantity": 100, "policy": {"maxCost": 50}},
    {"name": "eod", "kind": "credit-back-unused", "schedule": "0 45 15 * * MON-FRI", "holidays": "run"},
    {"name": "ledger", "kind": "ledger-sync", "schedule": "0 0 18 * * *", "days": 30, "holidays": "run"},
    {"name": "fees", "kind": "reconcile", "schedule": "0 30 18 * * *", "grace": "1h", "holidays": "run"}
  ]
}
`

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// jobRuns reads the job_runs of the bundle's database.
func (b *cliBundle) jobRuns(t *testing.T) []locator.JobRun {
	t.Helper()
	st, err := store.Open(t.Context(), b.env["LOCATOR_DB"], clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.JobRuns(t.Context(), store.JobRunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// quotes counts the quotes the simulator received.
func (b *cliBundle) quotes() int {
	n := 0
	for _, w := range b.writes() {
		if strings.HasSuffix(w, "/locates/quote") {
			n++
		}
	}
	return n
}

// A malformed config or cron spec is refused at start, with
// the file, line and reason, exit 2, and nothing is sent.
func TestRunRefusesBadConfig(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	good := writeFile(t, "good.json", daemonConfig)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no --config", []string{"run"}, "--config FILE is required"},
		{"missing file", []string{"run", "--config", filepath.Join(t.TempDir(), "nope.json")}, "no such file"},
		{"syntax error", []string{"run", "--config", writeFile(t, "c.json", "{\n  \"jobs\": [\n    {\"name\": \"a\",}\n  ]\n}")}, "c.json:3: invalid JSON"},
		{"cron spec", []string{"run", "--config", writeFile(t, "c.json", strings.Replace(daemonConfig, "0 45 15 * * MON-FRI", "0 45 25 * * MON-FRI", 1))},
			`c.json:9: job "eod": schedule "0 45 25 * * MON-FRI": end of range (25) above maximum (23)`},
		{"unknown kind", []string{"run", "--config", writeFile(t, "c.json", strings.Replace(daemonConfig, `"ledger-sync"`, `"ledger_sync"`, 1))},
			`c.json:10: job "ledger": unknown kind "ledger_sync"`},
		{"--once unknown job", []string{"run", "--config", good, "--once", "nightly"}, `no job "nightly" in the config (jobs: `},
		{"webhook variable unset", []string{"run", "--config", writeFile(t, "c.json", strings.Replace(daemonConfig, "\n  ]\n}", "\n  ],\n  \"notify\": {\"webhooks\": [{\"urlEnv\": \"LOCATOR_TEST_NO_HOOK\", \"format\": \"slack\"}]}\n}", 1))},
			`webhook LOCATOR_TEST_NO_HOOK: the environment variable is not set`},
		{"answer link secret unset", []string{"run", "--config", writeFile(t, "c.json", strings.Replace(daemonConfig, "\n  ]\n}",
			"\n  ],\n  \"notify\": {\"webhooks\": [], \"links\": {\"baseURL\": \"https://locator.example\", \"secretEnv\": \"LOCATOR_TEST_NO_LINK_SECRET\"}}\n}", 1))},
			`links: the environment variable LOCATOR_TEST_NO_LINK_SECRET is not set`},
		{"stray argument", []string{"run", "--config", good, "watch"}, "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(b.sim.Requests())
			code, _, errOut := b.MustRunMain(t, nil, tc.args...)
			if code != console.ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 with %q", code, errOut, tc.want)
			}
			if n := len(b.sim.Requests()) - before; n != 0 {
				t.Errorf("%d requests sent for a refused config", n)
			}
		})
	}
}

// --once: each kind runs now, once, is recorded in
// job_runs, and sets the exit code from its outcome (0 ok, 4 declined by the
// policy, 3 rejected by the broker). Run again, the locate job is covered
// by the inventory and quotes nothing.
func TestRunOnce(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	// The fee lands an hour after the fill, so that the fees job finds it
	// pending however long the machine takes to start the job's run (5 s,
	// the scenario's, were one second of the wall under the test clock).
	hour := brokersim.Duration(time.Hour)
	b.sim.ApplySettings(brokersim.Settings{FeeDelay: &hour})
	cfg := writeFile(t, "locator.json", daemonConfig)
	for _, tc := range []struct {
		job  string
		code int
		want string
	}{
		{"watch", console.ExitOK, "HTBX filled 300 @ 0.0150"},
		{"fees", console.ExitOK, "1 pending"}, // the fee lands an hour after the fill
		{"watch", console.ExitOK, "HTBX covered"},
		{"pricey", console.ExitDeclined, "HTBY declined"},
		{"restricted", console.ExitBroker, "RSTR rejected"},
		{"ledger", console.ExitOK, "rows read"},
		{"eod", console.ExitOK, "HTBX Locate credited 300"},
	} {
		code, out, errOut := b.MustRunMain(t, nil, "run", "--config", cfg, "--once", tc.job)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("--once %s: exit %d, stdout %q; want %d with %q\nstderr %s", tc.job, code, out, tc.code, tc.want, errOut)
		}
	}
	if n := b.quotes(); n != 3 {
		t.Errorf("%d quotes, want 3 (HTBX once, HTBY, RSTR)", n)
	}
	runs := b.jobRuns(t)
	var got []string
	for _, r := range runs {
		got = append(got, r.Job+" "+string(r.Outcome))
		if r.EndedAt.Before(r.StartedAt) || r.Account != "LV100001" {
			t.Errorf("run %+v", r)
		}
	}
	want := "watch ok,fees ok,watch ok,pricey failed,restricted failed,ledger ok,eod ok"
	if strings.Join(got, ",") != want {
		t.Errorf("job_runs %v, want %s", got, want)
	}
	// --json prints the run record.
	code, out, _ := b.MustRunMain(t, nil, "run", "--config", cfg, "--once", "ledger", "--json")
	var rec console.RunJSON
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &rec); code != 0 || err != nil || rec.Job != "ledger" || rec.Outcome != "ok" || !strings.Contains(rec.Detail, "rows read") {
		t.Errorf("--json: exit %d %q %v", code, out, err)
	}
}

// runningMain is the CLI running with a context the test cancels, as SIGTERM does
// through signal.NotifyContext in main.
type runningMain struct {
	cancel         context.CancelFunc
	done           chan int
	stdout, stderr *syncBuffer
}

func (b *cliBundle) startMain(t *testing.T, args ...string) *runningMain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	r := &runningMain{cancel: cancel, done: make(chan int, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	t.Cleanup(cancel)
	go func() {
		r.done <- NewMain(r.stdout, r.stderr, func(k string) string { return b.env[k] }).Run(ctx, args)
	}()
	return r
}

// startServe runs `locator serve` in this process until the test ends and
// returns it once it serves LV100001: the owner a command under test
// bothWays runs test in two parallel subtests, each on a CLI whose clock
// runs at speed (setupCLIAt): "owner", whose commands own the account
// themselves, and "follower", whose commands hand their calls to a
// `serve` owning it (the same account API both ways).
func bothWays(t *testing.T, speed float64, test func(t *testing.T, b *cliBundle)) {
	for _, follower := range []bool{false, true} {
		t.Run(map[bool]string{false: "owner", true: "follower"}[follower], func(t *testing.T) {
			t.Parallel()
			b := setupCLIAt(t, testStart, speed)
			if follower {
				b.startServe(t)
			}
			test(t, b)
		})
	}
}

// follows.
func (b *cliBundle) startServe(t *testing.T) *runningMain {
	t.Helper()
	owner := b.startMain(t, "serve")
	waitFor(t, "the owner", func() bool { return strings.Contains(owner.stderr.String(), "serving LV100001") })
	return owner
}

// stop signals the process and returns its exit code.
func (r *runningMain) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	select {
	case code := <-r.done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("the command did not stop\nstderr %s", r.stderr)
		return -1
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond (a signal, not a time window) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The daemon itself: the robfig runner fires an
// every-second job on the wall clock (robfig sleeps on time.Timer, so this
// one test runs in real time: about two seconds); every run is recorded; a
// run a dead process left "running" is marked failed at start; SIGTERM stops
// it cleanly with exit 0.
func TestRunDaemonSchedulesAndStops(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	cfg := writeFile(t, "locator.json", `{"jobs": [
  {"name": "tick", "kind": "credit-back-unused", "schedule": "* * * * * *", "holidays": "run"}
]}`)
	// A run left behind by a process that died.
	st, err := store.Open(t.Context(), b.env["LOCATOR_DB"], clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartJobRun(t.Context(), "tick", "credit-back-unused", "LV100001"); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r := b.startMain(t, "run", "--config", cfg)
	ok := func() int {
		n := 0
		for _, run := range b.jobRuns(t) {
			if run.Outcome == locator.JobOK {
				n++
			}
		}
		return n
	}
	waitFor(t, "two scheduled runs", func() bool { return ok() >= 2 })
	if code := r.stop(t); code != console.ExitOK {
		t.Fatalf("exit %d after SIGTERM\nstderr %s", code, r.stderr)
	}
	runs := b.jobRuns(t)
	if runs[0].Outcome != locator.JobFailed || !strings.Contains(runs[0].Detail, "interrupted") {
		t.Errorf("the dead process's run: %+v", runs[0])
	}
	for i, run := range runs[1:] {
		if run.Outcome != locator.JobOK || run.Detail != "nothing to credit back" {
			t.Errorf("run %d: %+v", i+1, run)
		}
		// One run a tick: two of one tick start together; a run the
		// machine's load started late can start well under a second
		// before the next tick's.
		if i > 0 && run.StartedAt.Sub(runs[i].StartedAt) < 500*time.Millisecond {
			t.Errorf("runs %d and %d started %s apart on an every-second schedule", i, i+1, run.StartedAt.Sub(runs[i].StartedAt))
		}
	}
	if lines := strings.Count(r.stdout.String(), "tick ok"); lines < 2 {
		t.Errorf("stdout %q: want a line per run", r.stdout)
	}
	for _, w := range []string{"job scheduled", "daemon running", "stopping", "stopped"} {
		if !strings.Contains(r.stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// SIGTERM mid-job: with a grace period the job finishes the
// locate in flight and the run ends ok; with none it stops at once, the run
// is recorded as interrupted, the command exits 130 (as an interrupt
// does everywhere), and the workflow resumes at the next start: the
// same job run again quotes nothing more.
func TestRunOnceSIGTERM(t *testing.T) {
	t.Parallel()
	cfg := `{"jobs": [{"name": "watch", "kind": "locate", "schedule": "@daily", "holidays": "run",
  "symbols": ["HTBX"], "quantity": 300, "policy": {"maxPrice": "0.02"}}]}`
	for _, tc := range []struct {
		grace string
		code  int
		runs  string
	}{
		{"30s", console.ExitOK, "ok"},
		{"0s", console.ExitInterrupted, "failed,ok"},
	} {
		t.Run("grace "+tc.grace, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			path := writeFile(t, "locator.json", cfg)
			r := b.startMain(t, "run", "--config", path, "--once", "watch", "--stop-grace", tc.grace)
			waitFor(t, "the quote", func() bool { return b.quotes() > 0 })
			if code := r.stop(t); code != tc.code {
				t.Fatalf("exit %d after SIGTERM, want %d\nstderr %s", code, tc.code, r.stderr)
			}
			if tc.code != console.ExitOK {
				if !strings.Contains(r.stdout.String(), "interrupted") {
					t.Errorf("stdout %q: want the interrupted run", r.stdout)
				}
				code, out, errOut := b.MustRunMain(t, nil, "run", "--config", path, "--once", "watch")
				if code != console.ExitOK || !strings.Contains(out, "covered") {
					t.Errorf("after restart: exit %d %q\nstderr %s", code, out, errOut)
				}
			}
			if n := b.quotes(); n != 1 {
				t.Errorf("%d quotes, want 1", n)
			}
			var got []string
			for _, run := range b.jobRuns(t) {
				got = append(got, string(run.Outcome))
			}
			if strings.Join(got, ",") != tc.runs {
				t.Errorf("job_runs outcomes %v, want %s", got, tc.runs)
			}
		})
	}
}

// End to end: a --once run that fails posts one
// notification to the webhook named by its variable before the command
// exits; the URL appears nowhere in the output.
func TestRunOnceNotifiesWebhook(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	got := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		got <- body
	}))
	defer hook.Close()
	url := hook.URL + "/services/T0/B0/s3cret"
	cfg := writeFile(t, "locator.json", strings.Replace(daemonConfig, "\n  ]\n}",
		"\n  ],\n  \"notify\": {\"webhooks\": [{\"urlEnv\": \"LOCATOR_TEST_HOOK\", \"format\": \"json\"}]}\n}", 1))
	code, out, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_TEST_HOOK": url}, "run", "--config", cfg, "--once", "pricey", "-v")
	if code != console.ExitDeclined {
		t.Fatalf("exit %d, want %d\nstderr %s", code, console.ExitDeclined, errOut)
	}
	close(got)
	var bodies []map[string]any
	for body := range got {
		bodies = append(bodies, body)
	}
	if len(bodies) != 1 || bodies[0]["event"] != "job_failed" || bodies[0]["job"] != "pricey" || bodies[0]["account"] != "LV100001" {
		t.Errorf("webhook received %v, want one job_failed for pricey", bodies)
	}
	if strings.Contains(out+errOut, "s3cret") || strings.Contains(out+errOut, hook.URL) {
		t.Errorf("the webhook URL is in the output:\n%s\n%s", out, errOut)
	}
}
