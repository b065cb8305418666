package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/bench"
	"github.com/locatorhq/locator/internal/store/storetest"
)

// A desk's accounts on one Postgres served by two `locator serve
// --standby` processes, as `locator bench --mode fleet` runs them (8
// accounts over 4 key pairs here; 200 over 100 for docs/benchmarks.md). The
// broker's rate limits are per key pair (spec "Rate limits": several
// processes sharing one key pair share the buckets), so each key pair's
// accounts are owned by one process; both processes own some; a locate
// per account through its owner fills with no 429 and no quote twice; the
// first process killed, the other owns its accounts and a locate on each
// of them fills through it.
func TestFleetOnPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	server := storetest.Postgres(t) // a database on the test cluster; the run makes one of its own beside it
	o := bench.FleetOptions{Exe: buildBinary(t), DB: server, Accounts: 8, KeyPairs: 4, Processes: 2, Parallel: 8,
		Failover: true, Logf: t.Logf}
	run, err := bench.Fleet(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *run)
	for _, p := range run.Processes {
		t.Logf("process %+v", *p)
		if p.Owned == 0 {
			t.Errorf("process %d owned nothing; want each to own its share", p.PID)
		}
	}
	if run.SplitKeyPairs != 0 {
		t.Errorf("%d key pairs owned by two processes; want none", run.SplitKeyPairs)
	}
	if run.Filled != 8 || run.Status429 != 0 || run.Duplicates != 0 {
		t.Errorf("%d of 8 filled, %d responses 429, %d quotes twice; want 8, 0, 0", run.Filled, run.Status429, run.Duplicates)
	}
	// How fast is the benchmark's to say (locator bench --mode fleet); that
	// the accounts moved and their locates filled is this test's.
	t.Logf("failover: %d accounts moved in %.1f s", run.Moved, run.FailoverSeconds)
	if run.Moved == 0 || run.MovedFilled != run.Moved {
		t.Errorf("failover: %d accounts moved, %d locates filled after; want them all filled", run.Moved, run.MovedFilled)
	}
	if run.RSSMBPerAccount <= 0 || run.CPUmsPerLocate <= 0 {
		t.Errorf("no cost measured: %+v", *run)
	}
}

// A desk on one key pair. The broker's rate limits are per key
// pair (spec "Rate limits": history and inventory 2/s, quotes 1/s, shared
// by every account under it), so 20 accounts on one key pair share one
// budget. One `locator serve --standby` process owns all 20 (its start-up
// reads queue on the key pair's pacer without its leases lapsing), then a
// `locator locate` on every account at once, each through the serve: every
// locate fills, the simulator answers no 429 and sees no quote twice, and
// the serve never ends by itself. On SQLite, and on Postgres too when the
// test cluster is there.
func TestDeskOnOneKeyPair(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	exe := buildBinary(t)
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			server := ""
			if db == "postgres" {
				server = storetest.Postgres(t)
			}
			o := bench.FleetOptions{Exe: exe, DB: server, Accounts: 20, KeyPairs: 1, Processes: 1, Parallel: 20, Logf: t.Logf}
			run, err := bench.Fleet(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", *run)
			if run.Processes[0].Owned != 20 || run.Exited != 0 {
				t.Errorf("the serve owned %d of 20 accounts, %d serve processes ended by themselves; want 20, 0", run.Processes[0].Owned, run.Exited)
			}
			if run.Filled != 20 || run.Status429 != 0 || run.Duplicates != 0 {
				t.Errorf("%d of 20 filled, %d responses 429, %d quotes twice; want 20, 0, 0", run.Filled, run.Status429, run.Duplicates)
			}
		})
	}
}

// Commands meet a starting owner. A `locator serve` of 12
// accounts on one key pair takes them at once and starts each (its
// start-up reads queued on the key pair's pacer); a `locator
// locate` on every account, started with the serve (before it owns
// them), waits for the serve to own its account and follows it: every
// locate fills, the serve ends owning all 12 (no command became the owner
// of one account of the pair, which would have kept the serve from the
// rest: spec "Rate limits", one process per key pair), no 429, no quote
// twice, and the serve never ends by itself. On SQLite, and on Postgres
// too when the test cluster is there.
func TestCommandsMeetAStartingServe(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	exe := buildBinary(t)
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			server := ""
			if db == "postgres" {
				server = storetest.Postgres(t)
			}
			o := bench.FleetOptions{Exe: exe, DB: server, Accounts: 12, KeyPairs: 1, Processes: 1, Parallel: 12, AtStart: true, Logf: t.Logf}
			run, err := bench.Fleet(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", *run)
			if run.Processes[0].Owned != 12 || run.Exited != 0 {
				t.Errorf("the serve owned %d of 12 accounts, %d serve processes ended by themselves; want 12, 0", run.Processes[0].Owned, run.Exited)
			}
			if run.Filled != 12 || run.Status429 != 0 || run.Duplicates != 0 {
				t.Errorf("%d of 12 filled, %d responses 429, %d quotes twice; want 12, 0, 0", run.Filled, run.Status429, run.Duplicates)
			}
		})
	}
}

// As a user sees it: a `locator serve --listen` of two
// accounts, one of them (LV300001) under a secret the broker does not know
// (spec "Failure behavior": foreign credentials read 404), serves the other
// and says on its /metrics which account it cannot serve, with why, since
// when and when it tries again; `locator status` of that account answers at
// once with the same refusal.
func TestServeMetricsSayWhatItCannotServe(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	var bad brokersim.ReadyKey
	for _, k := range b.ready.Keys {
		if slices.Contains(k.Accounts, "LV300001") {
			bad = k
		}
	}
	b.env = append(b.env, "BAD_KEY_ID="+bad.KeyID, "BAD_SECRET=not-the-secret")
	cfg := writeFile(t, "serve.json", `{"accounts": [{"account": "LV100001", "keyIdEnv": "LOCATOR_KEY_ID", "secretEnv": "LOCATOR_SECRET"},
  {"account": "LV300001", "keyIdEnv": "BAD_KEY_ID", "secretEnv": "BAD_SECRET"}]}`)
	serve := b.command(context.Background(), "serve", "--config", cfg, "--listen", "127.0.0.1:0")
	stderr, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	login := ""
	var said strings.Builder
	for lines := bufio.NewScanner(stderr); login == "" && lines.Scan(); {
		said.WriteString(lines.Text() + "\n")
		if _, addr, ok := strings.Cut(lines.Text(), "dashboard: open "); ok {
			login, _, _ = strings.Cut(addr, " ")
		}
	}
	go io.Copy(io.Discard, stderr)
	u, err := url.Parse(login)
	if err != nil || login == "" {
		t.Fatalf("no login address in serve's start lines (%v):\n%s", err, said.String())
	}
	metrics := func() string {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u.Scheme+"://"+u.Host+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+u.Query().Get("token"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: %s %s", resp.Status, body)
		}
		return string(body)
	}
	// series is the value of the first series named name of account, or
	// "" when there is none.
	series := func(page, name, account string) string {
		for line := range strings.Lines(page) {
			if strings.HasPrefix(line, name+"{") && strings.Contains(line, `account="`+account+`"`) {
				return strings.TrimSpace(line[strings.LastIndexByte(line, ' ')+1:])
			}
		}
		return ""
	}
	var page string
	for deadline := time.Now().Add(30 * time.Second); ; {
		page = metrics()
		if series(page, "locator_account_not_served", "LV300001") == "1" && series(page, "locator_lease_held", "LV100001") == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no refusal of LV300001 beside LV100001 served in 30 s; serve said:\n%s\n/metrics:\n%s", said.String(), page)
		}
		time.Sleep(100 * time.Millisecond)
	}
	line := ""
	for l := range strings.Lines(page) {
		if strings.HasPrefix(l, "locator_account_not_served{") && strings.Contains(l, `account="LV300001"`) {
			line = l
		}
	}
	if !strings.Contains(line, `reason="account LV300001 not found for these keys`) || !strings.Contains(line, fmt.Sprintf(`pid="%d"`, serve.Process.Pid)) {
		t.Errorf("the refusal's series does not say why and which process: %s", line)
	}
	for _, name := range []string{"locator_account_not_served_seconds", "locator_account_retry_in_seconds"} {
		if v, err := strconv.ParseFloat(series(page, name, "LV300001"), 64); err != nil || v < 0 || v > 60 {
			t.Errorf("%s of LV300001 = %q (%v), want seconds between 0 and 60", name, series(page, name, "LV300001"), err)
		}
	}
	if v := series(page, "locator_account_not_served", "LV100001"); v == "1" {
		t.Errorf("LV100001, served, is said not served:\n%s", page)
	}
	if strings.Contains(page, "not-the-secret") || strings.Contains(page, bad.KeyID) {
		t.Errorf("/metrics shows a key or a secret:\n%s", page)
	}
	status := b.command(t.Context(), "status")
	status.Env = append(slices.Clone(b.env), "LOCATOR_ACCOUNT=LV300001", "LOCATOR_KEY_ID="+bad.KeyID, "LOCATOR_SECRET=not-the-secret")
	out, _ := status.CombinedOutput()
	if !strings.Contains(string(out), "not served: pid "+strconv.Itoa(serve.Process.Pid)) {
		t.Errorf("locator status of LV300001:\n%s\nwant it not served by pid %d", out, serve.Process.Pid)
	}
}
