package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/store/storetest"
)

// daemon is a `locator serve --standby` process of a failover test.
type daemon struct {
	cmd  *exec.Cmd
	pid  int
	mu   sync.Mutex
	logs []string // its stderr lines
	next chan string
}

// startDaemon starts `locator serve --standby` and waits for its first
// line: "serving ..." when it owns the account, "standing by ..." when it
// follows another.
func (b *ownerBundle) startDaemon(t *testing.T, want string) *daemon {
	t.Helper()
	cmd := b.command(context.Background(), "serve", "--standby", "--listen", "", "-v")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, pid: cmd.Process.Pid, next: make(chan string, 64)}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT); cmd.Process.Kill(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.mu.Lock()
			d.logs = append(d.logs, sc.Text())
			d.mu.Unlock()
			select {
			case d.next <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case line := <-d.next:
		if !strings.HasPrefix(line, want) {
			t.Fatalf("serve: %q, want %q...", line, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve said nothing in 30 s")
	}
	if strings.HasPrefix(want, "standing by") {
		b.awaitStandby(t, d.pid)
	}
	return d
}

// awaitStandby polls the database (every 20 ms, up to 10 s) until the
// process pid is listed as the account's standby: what a command whose
// owner went away looks for before it leaves the account to it.
func (b *ownerBundle) awaitStandby(t *testing.T, pid int) {
	t.Helper()
	st, err := store.Open(t.Context(), b.db, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sbs, err := st.Standbys(t.Context(), "LV100001")
		if err != nil {
			t.Fatal(err)
		}
		for _, sb := range sbs {
			if sb.PID == pid {
				return
			}
		}
	}
	t.Fatalf("pid %d is not listed as the standby within 10 s", pid)
}

// waitFor polls the simulator's request log (every 20 ms, for up to 30 s)
// until one request matches, and returns it.
func (b *ownerBundle) waitFor(t *testing.T, what string, match func(brokersim.RequestRecord) bool) brokersim.RequestRecord {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range b.requests(t) {
			if match(r) {
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s in the simulator's log within 30 s", what)
	return brokersim.RequestRecord{}
}

func quoteOf(symbol string) func(brokersim.RequestRecord) bool {
	return func(r brokersim.RequestRecord) bool {
		return r.Method == http.MethodPost && r.Path == "/v1/api/accounts/locates/quote" && strings.Contains(r.Body, `"`+symbol+`"`)
	}
}

func sentBy(pid int, after time.Time) func(brokersim.RequestRecord) bool {
	return func(r brokersim.RequestRecord) bool {
		return r.Time.After(after) && strings.Contains(r.UserAgent, "(pid "+strconv.Itoa(pid)+")")
	}
}

// locateQuoted starts `locate SYMBOL 100 --yes --json` and returns once
// its quote is in the simulator's log (its offer on the way), with where
// its output goes.
func (b *ownerBundle) locateQuoted(t *testing.T, symbol string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	locate := b.command(context.Background(), "locate", symbol, "100", "--yes", "--json")
	out := &strings.Builder{}
	locate.Stdout, locate.Stderr = out, out
	if err := locate.Start(); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "quote of "+symbol, quoteOf(symbol))
	return locate, out
}

// setupFailover is the simulator, a database of its own on the test
// Postgres cluster and symbols OW00... for the trials.
func setupFailover(t *testing.T, trials int) *ownerBundle {
	t.Helper()
	db := storetest.Postgres(t) // skips without a cluster, fails under CI
	b := setupOwners(t, trials)
	b.db = db
	b.env = append(b.env, "LOCATOR_DB="+db) // the last one counts
	return b
}

func trialsOf(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Two `locator serve --standby` on one Postgres. The owner is
// SIGKILLed while the offer of a locate it was handed is open; the
// standby takes over and the locate ends filled, the asking command
// following the new owner. From the kill to the new owner's first broker
// request (the simulator's log; the CLI names its pid in its User-Agent)
// is logged, not judged (how fast this machine is that day is a
// benchmark's business: `locator bench --mode fleet` measures failover);
// no quote sent twice, no 429, every workflow final (nothing left open).
// LOCATOR_FAILOVER_TRIALS sets the trials (3 by default; the issue asks
// 20, run by hand: see docs/benchmarks.md).
func TestFailoverOnOwnerKill(t *testing.T) {
	t.Parallel()
	trials := trialsOf("LOCATOR_FAILOVER_TRIALS", 3)
	b := setupFailover(t, trials)
	owner := b.startDaemon(t, "serving LV100001")
	standby := b.startDaemon(t, "standing by for LV100001")
	var took []time.Duration
	for trial := range trials {
		locate, out := b.locateQuoted(t, fmt.Sprintf("OW%02d", trial))
		killed := b.clk.Now()
		owner.cmd.Process.Kill()
		owner.cmd.Wait()
		first := b.waitFor(t, "request of the new owner", sentBy(standby.pid, killed))
		took = append(took, b.wall(first.Time.Sub(killed)))
		if err := locate.Wait(); err != nil || !strings.Contains(out.String(), `"filled"`) {
			t.Fatalf("trial %d: locate %v:\n%s", trial+1, err, out)
		}
		// The new owner's standby, for the next trial.
		owner, standby = standby, b.startDaemon(t, "standing by for LV100001")
	}
	slices.Sort(took)
	p50, worst := took[len(took)/2], took[len(took)-1]
	t.Logf("kill to the new owner's first request over %d trials: p50 %v, max %v (%v)", trials, p50, worst, took)
	// status names the owner of the last term and its standby, from the Postgres
	// database. Each kill began a term at least (a command may own the account
	// for a moment, which begins one more).
	code, out := b.run(t, nil, "status", "--json")
	var ownerSeen, standbySeen bool
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec struct {
			Type string `json:"type"`
			PID  int    `json:"pid"`
			Term int    `json:"term"`
		}
		json.Unmarshal([]byte(line), &rec)
		ownerSeen = ownerSeen || rec.Type == "owner" && rec.PID == owner.pid && rec.Term > trials
		standbySeen = standbySeen || rec.Type == "standby" && rec.PID == standby.pid
	}
	if code != 0 || !ownerSeen || !standbySeen {
		t.Errorf("status: exit %d, want owner pid %d in a term past %d and standby pid %d:\n%s", code, owner.pid, trials, standby.pid, out)
	}
	b.noBrokerTrouble(t)
	b.workflows(t) // every one final
}

// The owner is stopped (SIGSTOP) while an offer it was handed is
// open, until the standby has taken over (its lease lapsed: 5 s of the
// wall clock), then continued. The standby fills the locate; the stopped
// process, once it runs again,
// sends nothing more to the broker (its trust in the lease ran out: its
// writes are held back, and its term is over), steps down and stands by.
// LOCATOR_PAUSE_TRIALS sets the trials (1 by default; the issue asks 10).
func TestFailoverOnOwnerPause(t *testing.T) {
	t.Parallel()
	trials := trialsOf("LOCATOR_PAUSE_TRIALS", 1)
	b := setupFailover(t, trials)
	owner := b.startDaemon(t, "serving LV100001")
	standby := b.startDaemon(t, "standing by for LV100001")
	for trial := range trials {
		locate, out := b.locateQuoted(t, fmt.Sprintf("OW%02d", trial))
		owner.cmd.Process.Signal(syscall.SIGSTOP)
		stopped := b.clk.Now()
		b.waitFor(t, "request of the new owner", sentBy(standby.pid, stopped))
		resumed := b.clk.Now()
		owner.cmd.Process.Signal(syscall.SIGCONT)
		if err := locate.Wait(); err != nil || !strings.Contains(out.String(), `"filled"`) {
			t.Fatalf("trial %d: locate %v:\n%s", trial+1, err, out)
		}
		// It stands by again once it saw its term was over.
		deadline := time.After(30 * time.Second)
	wait:
		for {
			select {
			case line := <-owner.next:
				if strings.Contains(line, "stepped down") {
					break wait
				}
			case <-deadline:
				owner.mu.Lock()
				t.Fatalf("trial %d: the paused owner did not step down:\n%s", trial+1, strings.Join(owner.logs, "\n"))
			}
		}
		for _, r := range b.requests(t) {
			if sentBy(owner.pid, resumed)(r) {
				t.Errorf("trial %d: the paused owner sent %s %s at %s, after it resumed at %s", trial+1, r.Method, r.Path, r.Time.Format("15:04:05.000"), resumed.Format("15:04:05.000"))
			}
		}
		if t.Failed() {
			owner.mu.Lock()
			standby.mu.Lock()
			t.Fatalf("paused owner's log:\n%s\nstandby's log:\n%s", strings.Join(owner.logs, "\n"), strings.Join(standby.logs, "\n"))
		}
		owner, standby = standby, owner
	}
	b.noBrokerTrouble(t)
	b.workflows(t)
}

// netns is a network namespace of the test's own, joined to this one by
// a veth pair: this side is hostIP, the namespace's side peerIP.
type netns struct{ name, hostIP, peerIP string }

// newNetns makes one, removed when the test ends. It needs root and
// iproute2; without them the test skips (fails under CI, which runs as
// root).
func newNetns(t *testing.T) netns {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil || os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("a network namespace needs root and iproute2")
		}
		t.Skip("a network namespace needs root and iproute2")
	}
	// Named and addressed for this process, so that two runs of the suite
	// side by side make two namespaces of their own.
	pid := os.Getpid()
	n := netns{name: fmt.Sprintf("lt%d", pid%100000), hostIP: fmt.Sprintf("10.231.%d.1", pid%250), peerIP: fmt.Sprintf("10.231.%d.2", pid%250)}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", n.name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", n.name).Run() })
	run("link", "add", n.name+"a", "type", "veth", "peer", "name", n.name+"b", "netns", n.name)
	run("addr", "add", n.hostIP+"/30", "dev", n.name+"a")
	run("link", "set", n.name+"a", "up")
	run("-n", n.name, "addr", "add", n.peerIP+"/30", "dev", n.name+"b")
	run("-n", n.name, "link", "set", n.name+"b", "up")
	run("-n", n.name, "link", "set", "lo", "up")
	return n
}

// A CLI process of another host (its own network
// namespace and host name; the database a Postgres URL on a shared
// socket) locates through an owner whose account API it reaches only
// over the network: at the address and with the certificate pin the
// lease names, presenting the owner token. The owner sends the quote and
// the accept; the other host reaches no broker at all. Without the
// token it is refused, exit 2, nothing sent.
func TestFollowerOnAnotherHost(t *testing.T) {
	t.Parallel()
	n := newNetns(t)
	b := setupFailover(t, 1)
	const token = "0123456789abcdef0123456789abcdef"
	b.env = append(b.env, "LOCATOR_OWNER_TOKEN="+token)
	cmd := b.command(context.Background(), "serve", "--listen", "", "--owner-listen", n.hostIP)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.Contains(line, "https://"+n.hostIP+":") {
		t.Fatalf("serve: %q %v", line, err)
	}
	go io.Copy(io.Discard, stderr)
	elsewhere := func(tok string, args ...string) (int, string) {
		c := exec.Command("ip", append([]string{"netns", "exec", n.name, "unshare", "--uts", "sh", "-c",
			`hostname another-host && exec "$0" "$@"`, b.bin}, args...)...)
		c.Env = append(slices.Clone(b.env), "LOCATOR_OWNER_TOKEN="+tok)
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	if code, out := elsewhere("ffffffffffffffffffffffffffffffff", "locate", "OW00", "100", "--yes"); code != 2 || !strings.Contains(out, "token") {
		t.Errorf("wrong token: exit %d\n%s", code, out)
	}
	if n := len(b.writesAfter(t, 0)); n != 0 {
		t.Errorf("%d writes reached the broker for a refused follower", n)
	}
	code, out := elsewhere(token, "locate", "OW00", "100", "--yes", "--json")
	if code != 0 || !strings.Contains(out, `"filled"`) {
		t.Fatalf("locate from another host: exit %d\n%s", code, out)
	}
	for _, r := range b.requests(t) {
		if r.Method == http.MethodPost && !strings.Contains(r.UserAgent, "(pid "+strconv.Itoa(cmd.Process.Pid)+")") {
			t.Errorf("%s %s sent by %q, not the owner", r.Method, r.Path, r.UserAgent)
		}
	}
	b.noBrokerTrouble(t)
}

// Postgres stopped at once (pg_ctl stop -m immediate, every
// connection dropped; a cluster of its own, storetest.Stoppable) for 12 s
// and started again, under an owner and its standby. Both stop
// sending to the broker within the lease's TTL (the owner's trust in its
// lease runs out and it steps down; the standby cannot read the lease),
// nothing is sent while the database is unreachable, and once it is back
// one of them owns the account again and a locate fills; no quote is sent
// twice and every workflow is final.
func TestPostgresOutage(t *testing.T) {
	t.Parallel()
	db, stop, start := storetest.Stoppable(t)
	b := setupOwners(t, 2)
	b.db = db
	b.env = append(b.env, "LOCATOR_DB="+db)
	owner := b.startDaemon(t, "serving LV100001")
	standby := b.startDaemon(t, "standing by for LV100001")
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			owner.mu.Lock()
			standby.mu.Lock()
			t.Logf("owner's log:\n%s\nstandby's log:\n%s", strings.Join(owner.logs, "\n"), strings.Join(standby.logs, "\n"))
		}
	})
	locate := func(sym string) {
		t.Helper()
		code, out := b.run(t, nil, "locate", sym, "100", "--yes", "--json")
		if code != 0 || !strings.Contains(out, `"filled"`) {
			t.Fatalf("locate %s: exit %d\n%s", sym, code, out)
		}
	}
	locate("OW00")
	cut := b.clk.Now()
	stop()
	time.Sleep(12 * time.Second) // the outage, on the wall clock the lease is kept on
	restored := b.clk.Now()
	start()
	quiet := cut.Add(b.onClock(5*time.Second + 500*time.Millisecond)) // the lease's TTL, and a request already on its way
	for _, r := range b.requests(t) {
		if r.Time.After(quiet) && r.Time.Before(restored) && (sentBy(owner.pid, quiet)(r) || sentBy(standby.pid, quiet)(r)) {
			t.Errorf("%s %s sent at %s while the database was unreachable (cut at %s)", r.Method, r.Path,
				r.Time.Format("15:04:05.000"), cut.Format("15:04:05.000"))
		}
	}
	locate("OW01")
	b.noBrokerTrouble(t)
	b.workflows(t)
}
