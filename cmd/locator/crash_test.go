package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
)

// TestCrashRecovery kills the built binary with SIGKILL at random points of
// its workflows and of order placement (docs/design.md rule 1), runs `locator
// resume` after each kill, and checks against a `locator sim` subprocess
// that every workflow ended in the state the broker's history shows, with
// exactly one quote (or sell) processed per workflow, none sent without a
// workflow behind it, at most one order per short and none placed twice,
// and each accept sent at most once by any one run.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it for about a minute")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildBinary(t)

	// A scenario with fresh symbols, so the 30-second same-symbol spacing
	// never makes an iteration wait, and fast settling.
	sc := brokersim.DefaultScenario()
	sc.Timing.SettleMin = brokersim.Duration(150 * time.Millisecond)
	sc.Timing.SettleMax = brokersim.Duration(400 * time.Millisecond)
	sc.Timing.CreditClear = brokersim.Duration(time.Second)
	sc.DefaultRate = brokersim.ScenarioRate{PerSecond: 10, Burst: 10}
	for i := range 60 {
		sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: fmt.Sprintf("CR%02d", i), LocateType: 1, Shares: 100000, Price: brokersim.Dec(decimal.RequireFromString("0.0100"))})
	}
	for i := range 10 {
		sym := fmt.Sprintf("RS%02d", i)
		sc.RegSHO = append(sc.RegSHO, sym)
		sc.Pools = append(sc.Pools,
			brokersim.ScenarioPool{Symbol: sym, LocateType: 3, Shares: 100000, Price: brokersim.Dec(decimal.RequireFromString("0.0300"))},
			brokersim.ScenarioPool{Symbol: sym, LocateType: 4, Shares: 100000, Price: brokersim.Dec(decimal.RequireFromString("0.0200"))})
	}
	sim := startSim(t, bin, dir, sc, testSpeed)
	ready := sim.Ready
	db := filepath.Join(dir, "locator.db")
	env := append(sim.env, "LOCATOR_DB="+db)
	run := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		return cmd
	}

	// The seed draws the commands and the kill points; the processes'
	// own pace on the machine still moves what a kill lands in.
	// LOCATOR_CRASH_SEED=N draws a logged run's again.
	seed := uint64(time.Now().UnixNano())
	if n, err := strconv.ParseUint(os.Getenv("LOCATOR_CRASH_SEED"), 10, 64); err == nil {
		seed = n
	}
	t.Logf("seed %d (LOCATOR_CRASH_SEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	kills, resumed, filledSymbols, shorts := 0, 0, []string{}, 0
	var runs []window // when each process ran, to count its accepts
	for i := 0; kills < 22 && i < 60; i++ {
		var args []string
		switch {
		case i%3 == 2:
			// AAPL is easy to borrow: the kill lands in the order's
			// placement and follow.
			args = []string{"short", "AAPL", "10", "--limit-price", "189.00", "--ref-price", "190.00", "--yes"}
			shorts++
		case i%5 == 4 && len(filledSymbols) > 0:
			args = []string{"credit-back", filledSymbols[rng.IntN(len(filledSymbols))], "100", "--type", "Locate"}
		case i%7 == 3:
			args = []string{"locate", fmt.Sprintf("RS%02d", i%10), "300", "--yes", "--allow-single-use"}
		default:
			args = []string{"locate", fmt.Sprintf("CR%02d", i), "300", "--max-price", "0.02"}
			filledSymbols = append(filledSymbols, fmt.Sprintf("CR%02d", i))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := run(ctx, args...)
		start, began := time.Now(), sim.clk.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// A short reads the sizing before it places: its kill points count
		// from its first easy-to-borrow read, to land in the placement too
		// however long the process took to start on a loaded machine.
		// A locate runs about a second here (the process's start, then
		// its workflow on the test clock): a kill point within that.
		after, within := time.Duration(0), 1000*time.Millisecond
		if args[0] == "short" {
			after = 160 * time.Millisecond // its placement comes 1 to 2 s of the test clock (0.2 to 0.4 s) after that read
			etb := "GET /v1/api/accounts/LV100001/is-easy-to-borrow/symbol/AAPL"
		watch:
			for seen := simRequestCount(t, ready, etb); simRequestCount(t, ready, etb) == seen; {
				select {
				case err := <-done: // it ended first: nothing to kill
					done <- err
					break watch
				case <-time.After(20 * time.Millisecond): // watching a subprocess's effect, not waiting out a window
				}
				if time.Since(start) > 30*time.Second {
					t.Fatalf("short: no easy-to-borrow read in 30 s")
				}
			}
		}
		select {
		case <-time.After(after + time.Duration(rng.Int64N(int64(within)))):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		case <-done:
		}
		runs = append(runs, window{began, sim.clk.Now()})
		// Recover before the next run, as a user would after a crash.
		began = sim.clk.Now()
		out, err := run(ctx, "resume").CombinedOutput()
		runs = append(runs, window{began, sim.clk.Now()})
		if err != nil {
			cancel()
			t.Fatalf("resume after %v: %v\n%s", args, err, out)
		}
		if !strings.Contains(string(out), "resumed 0 workflow") {
			resumed++
		}
		cancel()
	}
	if kills < 20 {
		t.Fatalf("only %d kills", kills)
	}
	t.Logf("%d kills; %d resumes found unfinished work", kills, resumed)
	if resumed == 0 {
		t.Error("no kill interrupted a workflow: the kill points are not random enough")
	}
	checkAgainstBroker(t, ready, db, shorts, runs)
}

// simRequestLog reads the simulator's request log over HTTP, as
// docs/design.md's contract serves it (GET /_sim/requests).
func simRequestLog(t *testing.T, baseURL string) []brokersim.RequestRecord {
	t.Helper()
	resp, err := http.Get(baseURL + "/_sim/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var log []brokersim.RequestRecord
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
		t.Fatal(err)
	}
	return log
}

// simRequestCount counts the simulator's requests matching "METHOD PATH".
func simRequestCount(t *testing.T, ready brokersim.Ready, match string) int {
	t.Helper()
	n := 0
	for _, r := range simRequestLog(t, ready.BaseURL) {
		if r.Method+" "+r.Path == match {
			n++
		}
	}
	return n
}

// simProcess is a `locator sim` subprocess of a test: its ready line, its
// clock (shared with the test's processes through clock.SettingEnv) and
// the environment a user would export to use it (its first live key
// pair, account LV100001, the clock's setting).
type simProcess struct {
	brokersim.Ready
	clk *clock.Scaled
	env []string
}

// startSim runs `locator sim` on scenario sc as a subprocess until the test
// ends, on a test clock (testClock, at speed) it shares with every process
// started with its env.
func startSim(t *testing.T, bin, dir string, sc brokersim.Scenario, speed float64) simProcess {
	t.Helper()
	scPath := filepath.Join(dir, "scenario.json")
	raw, _ := json.Marshal(sc)
	if err := os.WriteFile(scPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	clk, setting := testClock(testStart, speed)
	simCmd := exec.Command(bin, "sim", "--scenario", scPath, "--seed", "7")
	simCmd.Env = append(os.Environ(), clock.SettingEnv+"="+setting)
	stdout, _ := simCmd.StdoutPipe()
	simCmd.Stderr = os.Stderr
	if err := simCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { simCmd.Process.Signal(syscall.SIGTERM); simCmd.Wait() })
	var ready brokersim.Ready
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || json.Unmarshal([]byte(line), &ready) != nil {
		t.Fatalf("ready line %q: %v", line, err)
	}
	return simProcess{Ready: ready, clk: clk, env: append(simCmd.Env, "LOCATOR_BASE_URL="+ready.BaseURL,
		"LOCATOR_KEY_ID="+ready.Keys[0].KeyID, "LOCATOR_SECRET="+ready.Keys[0].Secret, "LOCATOR_ACCOUNT=LV100001")}
}

// window is when one process ran, on the clock the simulator keeps.
type window struct{ from, to time.Time }

// checkAgainstBroker compares every workflow in the database with the
// simulator's history and request log.
func checkAgainstBroker(t *testing.T, ready brokersim.Ready, db string, shorts int, runs []window) {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, db, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	workflows, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := brokerclient.NewClient(brokerclient.WithBaseURL(ready.BaseURL), brokerclient.WithCredentials(ready.Keys[0].KeyID, ready.Keys[0].Secret))
	if err != nil {
		t.Fatal(err)
	}
	history, _, err := client.Locates.History(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]brokerclient.HistoryRow{}
	for _, r := range history {
		rows[r.QuoteReqID] = r
	}
	log := simRequestLog(t, ready.BaseURL)
	checkOrders(t, st, log, shorts)
	checkAccepts(t, log, runs)
	sent := map[string]int{} // quoteReqID → processed quote/sell requests
	for _, r := range log {
		if r.Method != "POST" || (r.Path != "/v1/api/accounts/locates/quote" && r.Path != "/v1/api/accounts/locates/sell") || r.Status != 200 {
			continue
		}
		var body struct {
			QuoteReqID string `json:"quoteReqID"`
		}
		json.Unmarshal([]byte(r.Body), &body)
		sent[body.QuoteReqID]++
	}
	known := map[string]bool{}
	for _, w := range workflows {
		known[w.QuoteReqID] = true
		if !w.Terminal() {
			t.Errorf("%s %s %s left %s after resume", w.ID, w.Kind, w.Symbol, w.State)
			continue
		}
		n := sent[w.QuoteReqID]
		switch {
		case n > 1:
			t.Errorf("%s %s %s: %d quotes/sells processed for one workflow", w.ID, w.Kind, w.Symbol, n)
		case n == 0 && w.State != states.Failed && w.State != states.Covered && w.State != states.NotNeeded && w.State != states.Canceled:
			t.Errorf("%s %s %s ended %s but nothing was sent", w.ID, w.Kind, w.Symbol, w.State)
		}
		base, hasRow := rows[w.QuoteReqID]
		want := map[states.State][]brokercode.LocateStatus{
			states.Rejected: {56}, states.Expired: {67}, states.Declined: {52, 67}, states.Credited: {50},
			states.Canceled: {52},
		}[w.State]
		switch w.State {
		case states.Filled:
			if r, ok := rows[w.AcceptedID]; !ok || r.LocateStatus != 50 {
				t.Errorf("%s %s filled, broker row %s is %v", w.ID, w.Symbol, w.AcceptedID, r.LocateStatus)
			}
		case states.Failed, states.Covered, states.NotNeeded:
			if hasRow {
				t.Errorf("%s %s %s but the broker has row %v", w.ID, w.Symbol, w.State, base.LocateStatus)
			}
		default:
			if !hasRow || !containsStatus(want, base.LocateStatus) {
				t.Errorf("%s %s %s, broker row status %v (present %v)", w.ID, w.Symbol, w.State, base.LocateStatus, hasRow)
			}
		}
	}
	for id := range sent {
		if !known[id] {
			t.Errorf("the broker processed %s, which no workflow recorded before sending", id)
		}
	}
	counts := map[states.State]int{}
	for _, w := range workflows {
		counts[w.State]++
	}
	t.Logf("%d workflows: %v", len(workflows), counts)
	if !strings.Contains(fmt.Sprint(counts), "filled") {
		t.Error("no workflow filled at all")
	}
}

// checkOrders: every placement the broker saw was recorded before it was
// sent, none was sent twice, there are no more than one per short, and each
// record ended settled.
func checkOrders(t *testing.T, st *store.Store, log []brokersim.RequestRecord, shorts int) {
	t.Helper()
	placed := map[string]int{}
	for _, r := range log {
		if r.Method != "POST" || !strings.HasSuffix(r.Path, "/order") {
			continue
		}
		var body struct {
			ClientOrderID string `json:"clientOrderId"`
		}
		json.Unmarshal([]byte(r.Body), &body)
		placed[body.ClientOrderID]++
	}
	orders, err := st.Orders(t.Context(), store.OrderFilter{})
	if err != nil {
		t.Fatal(err)
	}
	recorded, lookedUp := map[string]bool{}, 0
	for _, o := range orders {
		recorded[o.ClientOrderID] = true
		if strings.Contains(o.Reason, "left unanswered") {
			lookedUp++
		}
		if !o.Settled() {
			t.Errorf("order %s left %s after resume", o.ClientOrderID, o.State)
		}
	}
	for id, n := range placed {
		if n > 1 {
			t.Errorf("order %s placed %d times", id, n)
		}
		if !recorded[id] {
			t.Errorf("order %s reached the broker with no record behind it", id)
		}
	}
	if len(placed) > shorts || len(orders) > shorts {
		t.Errorf("%d placements and %d records for %d shorts: at most one each", len(placed), len(orders), shorts)
	}
	if len(orders) < 2 {
		t.Errorf("only %d orders recorded for %d shorts: the kills never reached the placement", len(orders), shorts)
	}
	t.Logf("%d shorts: %d orders recorded, %d placed, %d settled by a lookup after a kill", shorts, len(orders), len(placed), lookedUp)
}

// checkAccepts: no one run sent the same accept twice (an accept may be
// re-sent by the resume after a crash, once).
func checkAccepts(t *testing.T, log []brokersim.RequestRecord, runs []window) {
	t.Helper()
	type key struct {
		run int
		leg string
	}
	count := map[key]int{}
	for _, r := range log {
		if r.Method != "POST" || !strings.HasSuffix(r.Path, "/locates/accept") {
			continue
		}
		var body struct {
			QuoteReqID string `json:"quoteReqID"`
		}
		json.Unmarshal([]byte(r.Body), &body)
		for i, w := range runs {
			if !r.Time.Before(w.from) && !r.Time.After(w.to) {
				count[key{i, body.QuoteReqID}]++
			}
		}
	}
	for k, n := range count {
		if n > 1 {
			t.Errorf("run %d sent the accept of %s %d times", k.run, k.leg, n)
		}
	}
}

func containsStatus(list []brokercode.LocateStatus, s brokercode.LocateStatus) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
