package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
)

// `locator locate` of a 300-symbol batch, run while
// a real `locator serve` process owns the account (so the command follows
// its 300 workflows over the owner's socket, one stream each), ends with
// every workflow final: the command exits 0, and the database holds the
// 300 workflows, each at its end and located. The broker's pace sets the
// run's length: each symbol's easy-to-borrow check (2 a second, spec
// "Rate limits") makes it about 150 s, and the owner's 1 s spacing of
// quotes would add five minutes for 300 quotes, so 20 symbols are hard to
// borrow (each quoted and filled) and 280 easy to borrow (each ended
// without a quote); the follower's streams carry every one of them.
func TestBatchOf300FollowedThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	t.Parallel()
	const htb, etb = 20, 280
	dir := t.TempDir()
	b := &ownerBundle{dir: dir, bin: buildBinary(t), db: filepath.Join(dir, "locator.db")}
	sc := brokersim.DefaultScenario()
	sc.Timing.SettleMin = brokersim.Duration(150 * time.Millisecond)
	sc.Timing.SettleMax = brokersim.Duration(400 * time.Millisecond)
	sc.DefaultRate = brokersim.ScenarioRate{PerSecond: 50, Burst: 50}
	args := []string{"locate"}
	for i := range htb {
		sym := fmt.Sprintf("BH%02d", i)
		sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: sym, LocateType: 1, Shares: 100000, Price: brokersim.Dec(decimal.RequireFromString("0.0100"))})
		args = append(args, sym, "300")
	}
	for i := range etb {
		sym := fmt.Sprintf("BE%03d", i)
		sc.EasyToBorrow = append(sc.EasyToBorrow, sym)
		args = append(args, sym, "300")
	}
	args = append(args, "--max-price", "0.02")
	sim := startSim(t, b.bin, dir, sc, testSpeed)
	b.ready, b.clk = sim.Ready, sim.clk
	b.env = append(sim.env, "LOCATOR_DB="+b.db)
	b.serve(t)

	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := b.command(ctx, args...).CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			t.Fatalf("locate of 300 symbols through serve never ended (a follower waiting past its workflow's end)\n%s", out)
		}
		t.Fatalf("locate: %v\n%s", err, out)
	}
	st, err := store.Open(t.Context(), b.db, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.List(t.Context(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ended := map[states.State]int{}
	for _, w := range ws {
		if !w.Terminal() || !w.Located() {
			t.Errorf("%s %s: %s, want located and final", w.ID, w.Symbol, w.State)
		}
		ended[w.State]++
	}
	if len(ws) != htb+etb || ended[states.Filled] != htb || ended[states.NotNeeded] != etb {
		t.Fatalf("%d workflows, ended %v: want %d filled, %d not needed", len(ws), ended, htb, etb)
	}
	t.Logf("300 workflows followed to their ends through serve in %v", time.Since(start).Round(time.Millisecond))
}

// `locator serve` killed (SIGKILL) while it runs a batch of 20
// locates that `locator locate` follows over its socket: the command takes
// the account over (the owner is gone, its database as the kill left it)
// and follows every workflow to its end, exit 0; every workflow ends
// final and located, no quote was sent twice, and the broker saw no 429
// and no quote rejected as pending.
func TestServeKilledMidBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	t.Parallel()
	const n = 20
	b := setupOwners(t, n)
	serve := b.serve(t)
	args := []string{"locate"}
	for i := range n {
		args = append(args, fmt.Sprintf("OW%02d", i), "300")
	}
	args = append(args, "--max-price", "0.02")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := b.command(ctx, args...)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the owner once some of the batch's quotes have reached the
	// broker and before the last: mid-batch.
	quote := "POST /v1/api/accounts/locates/quote"
	// (The batch's easy-to-borrow checks come first, 2 a second.)
	for deadline := time.Now().Add(time.Minute); simRequestCount(t, b.ready, quote) < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("no 3 quotes at the broker in a minute\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond) // watching another process's effect
	}
	if err := serve.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := simRequestCount(t, b.ready, quote)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("locate after its owner was killed: %v\n%s", err, out.String())
	}
	if killedAt >= n {
		t.Errorf("every quote had left when the owner was killed (%d): not mid-batch", killedAt)
	}
	ws := b.workflows(t) // errors on one left unfinished
	if len(ws) != n {
		t.Fatalf("%d workflows, want %d: %v", len(ws), n, ws)
	}
	for _, w := range ws {
		if !strings.Contains(w, ":filled:") {
			t.Errorf("%s, want filled", w)
		}
	}
	b.noBrokerTrouble(t)
}
