package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/local"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// testBundle is the simulator on its fake clock, driven as virtual time, a
// store on a temp file, and an engine and a job runner for LV100001 on both.
type testBundle struct {
	sim    *simtest.Bundle
	store  *store.Store
	client *brokerclient.Client
	engine *engine.Engine
	runner *jobs.Runner
	t      *testing.T
	// loops are the engines start made, for the driver of virtual time.
	loops simtest.Loops
}

func setup(t *testing.T, opts ...simtest.Option) *testBundle {
	t.Helper()
	b := &testBundle{sim: simtest.New(t, opts...), t: t}
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "locator.db"), b.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b.store = st
	b.client = b.sim.Client(t, b.sim.Live)
	b.sim.RunClockWhile(t, 2, b.loops.Idle)
	b.start()
	return b
}

// start builds and starts an engine and a runner on the bundle's store
// (again, after a stop).
func (b *testBundle) start() {
	t := b.t
	t.Helper()
	log := slog.New(slog.NewTextHandler(tWriter{t}, nil))
	e, err := engine.New(engine.Config{
		Client: b.client, Store: b.store, Clock: b.sim.Clock, Account: "LV100001",
		Env: brokerclient.EnvLive, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	b.loops.Add(e)
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	b.engine = e
	// The jobs reach the account through its account API, as on an owner.
	local, err := local.New(t.Context(), local.Config{Engine: e, Store: b.store, Client: b.client, Clock: b.sim.Clock,
		Logger: log, Account: "LV100001", Env: brokerclient.EnvLive})
	if err != nil {
		t.Fatal(err)
	}
	b.runner = local.Runner("jobs test", nil)
}

// tWriter sends logs to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// sleep waits d on the fake clock (virtual time: the driver jumps to it).
func (b *testBundle) sleep(d time.Duration) {
	timer := b.sim.Clock.NewTimer(d)
	defer timer.Stop()
	<-timer.C()
}

// tick waits on the fake clock for the job's next activation, as the
// robfig runner would on the wall clock, and runs it then. It returns the
// instant it was scheduled for and the recorded run.
func (b *testBundle) tick(j jobs.Job) (time.Time, *locator.JobRun, error) {
	b.t.Helper()
	now := b.sim.Clock.Now()
	at := j.Schedule.Next(now)
	if at.IsZero() {
		b.t.Fatalf("%s: schedule %s never fires", j.Name, j.Schedule)
	}
	b.sleep(at.Sub(now))
	run, err := b.runner.Run(b.t.Context(), j)
	if run == nil {
		b.t.Fatalf("%s: run not recorded: %v", j.Name, err)
	}
	return at, run, err
}

// requests returns the simulator's log entries whose "METHOD path" holds sub.
func (b *testBundle) requests(sub string) []brokersim.RequestRecord {
	var out []brokersim.RequestRecord
	for _, r := range b.sim.Sim.Requests() {
		if strings.Contains(r.Method+" "+r.Path, sub) {
			out = append(out, r)
		}
	}
	return out
}

// quotesBySymbol counts the quotes sent per symbol.
func (b *testBundle) quotesBySymbol() map[string]int {
	out := map[string]int{}
	for _, r := range b.requests("POST /v1/api/accounts/locates/quote") {
		for _, s := range []string{"HTBX", "HTBY", "RSHO", "RSSU", "RSTR", "AAPL"} {
			if strings.Contains(r.Body, `"symbol":"`+s+`"`) {
				out[s]++
			}
		}
	}
	return out
}

func (b *testBundle) runs(job string) []locator.JobRun {
	b.t.Helper()
	runs, err := b.store.JobRuns(b.t.Context(), store.JobRunFilter{Job: job})
	if err != nil {
		b.t.Fatal(err)
	}
	return runs
}

// locate fills a locate through the engine, outside any job.
func (b *testBundle) locate(symbol string, qty int64, singleUse bool) {
	b.t.Helper()
	h, err := b.engine.Locate(b.t.Context(), engine.Request{Symbol: symbol, Quantity: qty,
		Policy: workflow.Policy{AutoAccept: true, AllowSingleUse: singleUse}})
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.t.Context(), 20*time.Second)
	defer cancel()
	w, err := h.Wait(ctx)
	if err != nil || w.State != states.Filled {
		b.t.Fatalf("locate %s %d: %v %+v", symbol, qty, err, w)
	}
}

// shortSell places a Sell/Open stock order on SMART: a market order opens a
// short now; a limit above the last price stays working.
func (b *testBundle) shortSell(symbol string, qty int64, limit string) *brokerclient.Order {
	b.t.Helper()
	req := brokerclient.OrderRequest{Symbol: symbol, Side: brokerclient.SideSell, OpenClose: brokerclient.OpenCloseOpen,
		OrderType: brokerclient.OrderTypeMarket, SecurityType: brokerclient.SecurityTypeStock,
		TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: qty, Route: "SMART"}
	if limit != "" {
		p := decimal.RequireFromString(limit)
		req.OrderType, req.LimitPrice = brokerclient.OrderTypeLimit, &p
	}
	o, _, err := b.client.Orders.Place(b.t.Context(), "LV100001", req)
	if err != nil {
		b.t.Fatal(err)
	}
	for range 50 {
		b.sleep(200 * time.Millisecond)
		if o, _, err = b.client.Orders.Get(b.t.Context(), "LV100001", o.ClientOrderID); err == nil &&
			(o.OrderStatus == brokercode.OrderStatusFilled || (limit != "" && !o.IsTerminal() && o.OrderStatus != brokercode.OrderStatusPendingNew)) {
			return o
		}
	}
	b.t.Fatalf("short %s %d: order %+v, %v", symbol, qty, o, err)
	return nil
}

func mustSchedule(t *testing.T, spec string) jobs.Schedule {
	t.Helper()
	s, err := jobs.ParseSchedule(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pol(maxPrice string, singleUse bool) workflow.Policy {
	return workflow.Policy{MaxPrice: decimal.RequireFromString(maxPrice), AutoAccept: true, AllowSingleUse: singleUse}
}

// checkTicks asserts the runs started at successive activations of an
// every-second schedule: whole seconds, each after the previous run ended.
func checkTicks(t *testing.T, at []time.Time, runs []locator.JobRun) {
	t.Helper()
	for i, r := range runs {
		if at[i].Nanosecond() != 0 || r.StartedAt.Before(at[i]) {
			t.Errorf("run %d started %s for activation %s", i, r.StartedAt, at[i])
		}
		if i > 0 && !at[i].After(runs[i-1].EndedAt) {
			t.Errorf("activation %d at %s, not after run %d ended (%s): runs overlapped", i, at[i], i-1, runs[i-1].EndedAt)
		}
	}
}

// A locate job on a fast schedule (every second) on the
// shared fake clock: the first run quotes each hard-to-borrow symbol once
// and accepts within policy (Reg SHO: the cheaper SingleUse side, allowed
// here), the easy-to-borrow one needs no locate; later runs find the
// inventory covers them (spec "Short locates" rule 1; ensure semantics) and
// quote nothing. Every run is recorded in job_runs.
func TestLocateJobOnFastSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	j := jobs.Job{Name: "watchlist", Kind: jobs.KindLocate, Schedule: mustSchedule(t, "* * * * * *"),
		Symbols: []string{"HTBX", "AAPL", "RSHO"}, Quantity: 300, Policy: pol("0.05", true)}
	var at []time.Time
	for i := range 3 {
		when, run, err := b.tick(j)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		at = append(at, when)
		want := []string{"HTBX filled 300 @ 0.0150", "AAPL not_needed", "RSHO filled 300 @ 0.0400"}
		if i > 0 {
			want = []string{"HTBX covered", "AAPL not_needed", "RSHO covered"}
		}
		for _, w := range want {
			if !strings.Contains(run.Detail, w) {
				t.Errorf("run %d detail %q lacks %q", i, run.Detail, w)
			}
		}
	}
	runs := b.runs("watchlist")
	if len(runs) != 3 {
		t.Fatalf("%d runs recorded, want 3", len(runs))
	}
	for _, r := range runs {
		if r.Outcome != locator.JobOK || r.Kind != "locate" || r.Account != "LV100001" || r.EndedAt.Before(r.StartedAt) {
			t.Errorf("run %+v", r)
		}
	}
	checkTicks(t, at, runs)
	if got := b.quotesBySymbol(); got["HTBX"] != 1 || got["RSHO"] != 1 || got["AAPL"] != 0 {
		t.Errorf("quotes per symbol %v, want one each for HTBX and RSHO", got)
	}
	if n := len(b.requests("locates/accept")); n != 2 {
		t.Errorf("%d accepts, want 2", n)
	}
}

// A locate job whose symbols do not all end located fails, with each
// symbol's end in the detail and the worst of them (a broker rejection
// beats a policy decline) for the exit code.
func TestLocateJobFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	j := jobs.Job{Name: "mixed", Kind: jobs.KindLocate, Schedule: mustSchedule(t, "@every 1m"),
		Symbols: []string{"HTBX", "HTBY", "RSTR"}, Quantity: 100, Policy: pol("0.02", false)}
	run, err := b.runner.Run(t.Context(), j)
	var f *jobs.Failure
	if !errors.As(err, &f) || f.Worst != states.Rejected || f.Interrupted {
		t.Fatalf("error %v (%T), want a Failure with Worst rejected", err, err)
	}
	if run.Outcome != locator.JobFailed {
		t.Errorf("outcome %s", run.Outcome)
	}
	for _, w := range []string{"HTBX filled 100", "HTBY declined", "RSTR rejected (R06"} {
		if !strings.Contains(run.Detail, w) {
			t.Errorf("detail %q lacks %q", run.Detail, w)
		}
	}
	if runs := b.runs("mixed"); len(runs) != 1 || runs[0].Outcome != locator.JobFailed || runs[0].Detail != run.Detail {
		t.Errorf("recorded %+v", runs)
	}
}

// Credit-back-unused on a fast schedule (spec "Short
// locates" rule 5, "Locate types"): Locate and PreBorrow shares not tied to
// a short are credited back in whole lots, less what a working short sell
// will need; a SingleUse row used by a short is left alone, an unused one is
// credited. The next run finds nothing left to sell: one sell per row.
func TestCreditBackUnusedJobOnFastSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locate("HTBX", 500, false)     // Locate (type 1) 500
	b.locate("HTBY", 300, false)     // Locate (type 2) 300
	b.locate("RSHO", 300, false)     // PreBorrow 300 (SingleUse not allowed)
	b.locate("RSHO", 600, true)      // + SingleUse 300 (the cheaper side, allowed)
	b.locate("RSSU", 200, true)      // SingleUse 200 (the only side priced) ...
	b.shortSell("RSSU", 100, "")     // ... used by a short: never creditable
	b.shortSell("HTBX", 200, "")     // ties 200 HTBX
	b.shortSell("HTBY", 100, "8.60") // a working short sell: will need 100 HTBY
	j := jobs.Job{Name: "eod", Kind: jobs.KindCreditBackUnused, Schedule: mustSchedule(t, "* * * * * *")}
	var at []time.Time
	for i, want := range [][]string{
		{"HTBX Locate credited 300", "HTBY Locate credited 200", "RSHO PreBorrow credited 300", "RSHO SingleUse credited 300",
			"RSSU SingleUse skipped: SingleUse already used (100 unavailable"},
		{"HTBY Locate skipped: 100 held for working short sells", "RSSU SingleUse skipped"},
	} {
		when, run, err := b.tick(j)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		at = append(at, when)
		for _, w := range want {
			if !strings.Contains(run.Detail, w) {
				t.Errorf("run %d detail %q lacks %q", i, run.Detail, w)
			}
		}
		if i == 1 && strings.Contains(run.Detail, "credited") {
			t.Errorf("run %d credited again: %q", i, run.Detail)
		}
	}
	runs := b.runs("eod")
	checkTicks(t, at, runs)
	var sells []string
	for _, r := range b.requests("POST /v1/api/accounts/locates/sell") {
		var body struct {
			Symbol     string `json:"symbol"`
			Quantity   int64  `json:"quantity"`
			LocateType string `json:"locateType"`
		}
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
			t.Fatal(err)
		}
		sells = append(sells, fmt.Sprintf("%s %d %s", body.Symbol, body.Quantity, body.LocateType))
	}
	sort.Strings(sells)
	if diff := cmp.Diff([]string{"HTBX 300 Locate", "HTBY 200 Locate", "RSHO 300 PreBorrow", "RSHO 300 SingleUse"}, sells); diff != "" {
		t.Errorf("sells (-want +got):\n%s", diff)
	}
}

// The EOD credit-back-unused job (spec "Short locates"
// rule 5): a SingleUse lot located after an earlier credit-back of the day
// is credited back like the first, since shares credited back are not
// shares used. Two rounds of a 1,000-share RSHO SingleUse locate (the
// engine holds the second quote the spec's 30 seconds) and a run of the
// job: each run sells its lot back, and the broker ends with none.
func TestCreditBackUnusedJobAfterEarlierCreditBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	j := jobs.Job{Name: "eod", Kind: jobs.KindCreditBackUnused, Schedule: mustSchedule(t, "* * * * * *")}
	for i := range 2 {
		b.locate("RSHO", 1000, true)
		_, run, err := b.tick(j)
		if err != nil || !strings.Contains(run.Detail, "RSHO SingleUse credited 1000") || strings.Contains(run.Detail, "skipped") {
			t.Fatalf("run %d: %v, detail %q; want RSHO SingleUse credited 1000", i, err, run.Detail)
		}
	}
	if n := len(b.requests("POST /v1/api/accounts/locates/sell")); n != 2 {
		t.Errorf("%d sells, want 2", n)
	}
	rows, _, err := b.client.Locates.Inventory(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Symbol == "RSHO" && r.Available != 0 {
			t.Errorf("the broker still holds %d RSHO %s shares available", r.Available, r.Type())
		}
	}
}

// A restart mid-job (docs/design.md rule 1): the locate job is
// stopped once its quotes have reached the broker and the engine closed;
// the offers arrive while nothing runs; a new engine on the same store
// resumes the workflows, and the job run again adopts them instead of
// quoting again. The request log shows one quote per symbol, and the store
// one fill per symbol.
func TestLocateJobRestartMidJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	j := jobs.Job{Name: "premarket", Kind: jobs.KindLocate, Schedule: mustSchedule(t, "* * * * * *"),
		Symbols: []string{"HTBX", "RSHO"}, Quantity: 300, Policy: pol("0.05", true)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := b.runner.Run(ctx, j)
		done <- err
	}()
	for len(b.requests("locates/quote")) < 2 {
		time.Sleep(time.Millisecond) // wait for the quotes to reach the broker (wall clock, not a window)
	}
	cancel()
	var f *jobs.Failure
	if err := <-done; !errors.As(err, &f) || !f.Interrupted {
		t.Fatalf("first run: %v, want an interrupted Failure", err)
	}
	b.engine.Close()
	b.sim.Advance(5 * time.Second) // the offers arrive while no engine runs
	b.start()
	_, run, err := b.tick(j)
	if err != nil {
		t.Fatalf("run after restart: %v", err)
	}
	for _, re := range []string{`HTBX (covered|filled 300)`, `RSHO (covered|filled 300)`} {
		if !regexp.MustCompile(re).MatchString(run.Detail) {
			t.Errorf("detail %q does not match %s", run.Detail, re)
		}
	}
	t.Logf("after the restart: %s", run.Detail)
	runs := b.runs("premarket")
	if len(runs) != 2 || runs[0].Outcome != locator.JobFailed || !strings.Contains(runs[0].Detail, "interrupted") || runs[1].Outcome != locator.JobOK {
		t.Errorf("runs %+v", runs)
	}
	if got := b.quotesBySymbol(); got["HTBX"] != 1 || got["RSHO"] != 1 {
		t.Errorf("quotes per symbol %v, want one each across the restart", got)
	}
	ws, err := b.store.List(t.Context(), store.Filter{Account: "LV100001", Kind: states.Locate})
	if err != nil {
		t.Fatal(err)
	}
	fills := map[string]int{}
	for _, w := range ws {
		if !w.Terminal() {
			t.Errorf("%s %s still %s after the second run", w.ID, w.Symbol, w.State)
		}
		if w.State == states.Filled {
			fills[w.Symbol]++
		}
	}
	if fills["HTBX"] != 1 || fills["RSHO"] != 1 {
		t.Errorf("fills per symbol %v, want one each", fills)
	}
}

// A restart mid credit-back: the job is stopped after its
// sell left; after a restart the job run again waits for that credit-back
// and sells nothing more, though the engine's own view was lost: no second
// sell in the request log.
func TestCreditBackJobRestartMidJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locate("HTBX", 500, false)
	j := jobs.Job{Name: "eod", Kind: jobs.KindCreditBackUnused, Schedule: mustSchedule(t, "* * * * * *")}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := b.runner.Run(ctx, j)
		done <- err
	}()
	for len(b.requests("locates/sell")) == 0 {
		time.Sleep(time.Millisecond) // wait for the sell to leave (wall clock, not a window)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("first run: no error, want interrupted")
	}
	b.engine.Close()
	b.sim.Advance(time.Second)
	b.start()
	_, run, err := b.tick(j)
	if err != nil {
		t.Fatalf("run after restart: %v", err)
	}
	// The credit-back the first run left open is finished by this run,
	// which waits for it, or by the restarted engine's recovery before
	// this run looks (virtual time runs on meanwhile): once either way.
	switch {
	case strings.Contains(run.Detail, "left open by an earlier run"):
		if !strings.Contains(run.Detail, "HTBX Locate credited 500") {
			t.Errorf("detail %q", run.Detail)
		}
	case run.Detail == "nothing to credit back":
		ws, err := b.store.List(t.Context(), store.Filter{Kind: states.CreditBack})
		if err != nil || len(ws) != 1 || ws[0].State != states.Credited || ws[0].Quantity != 500 {
			t.Errorf("the recovered credit-back: %v, %v; want one of 500, credited", ws, err)
		}
	default:
		t.Errorf("detail %q", run.Detail)
	}
	if n := len(b.requests("locates/sell")); n != 1 {
		t.Errorf("%d sells across the restart, want 1", n)
	}
	inv, _, err := b.client.Locates.Inventory(t.Context(), "LV100001")
	if err != nil || brokerclient.Available(inv, "HTBX") != 0 {
		t.Errorf("HTBX inventory after the credit-back: %+v %v", inv, err)
	}
}

// A draining runner (shutdown begun) starts nothing new: the run ends
// interrupted and nothing is sent.
func TestDrainStartsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.runner.Drain()
	before := len(b.sim.Sim.Requests())
	_, err := b.runner.Run(t.Context(), jobs.Job{Name: "w", Kind: jobs.KindLocate, Symbols: []string{"HTBX"}, Quantity: 100, Policy: pol("0.05", false)})
	var f *jobs.Failure
	if !errors.As(err, &f) || !f.Interrupted || !strings.Contains(f.Detail, "shutting down") {
		t.Fatalf("run: %v", err)
	}
	for _, r := range b.sim.Sim.Requests()[before:] {
		if r.Method != "GET" || strings.Contains(r.Path, "easy-to-borrow") {
			t.Errorf("sent %s %s while draining", r.Method, r.Path)
		}
	}
}

// Ledger-sync on a fast schedule: the first run stores the
// window's rows, the next stores none (idempotent sync), and a row the
// broker adds later is picked up by the run after.
func TestLedgerSyncJobOnFastSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	j := jobs.Job{Name: "ledger", Kind: jobs.KindLedgerSync, Schedule: mustSchedule(t, "* * * * * *"), Days: 30}
	var at []time.Time
	for i, want := range []string{
		"ledger 2026-10-27..2026-11-25: 7 rows read, 7 new",
		"ledger 2026-10-27..2026-11-25: 7 rows read, 0 new",
		"ledger 2026-10-27..2026-11-25: 8 rows read, 1 new",
	} {
		if i == 2 {
			if err := b.sim.Sim.AddCashRows([]brokersim.ScenarioCashRow{{Account: "LV100001", Date: "2026-11-25",
				CashType: "Platform Fee", Withdraw: brokersim.Dec(decimal.RequireFromString("1.25")), Note: "a label never seen before"}}); err != nil {
				t.Fatal(err)
			}
		}
		when, run, err := b.tick(j)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		at = append(at, when)
		if run.Detail != want || run.Outcome != locator.JobOK {
			t.Errorf("run %d: %s %q, want ok %q", i, run.Outcome, run.Detail, want)
		}
	}
	checkTicks(t, at, b.runs("ledger"))
}

// Reconcile on a fast schedule (spec "Cash ledger": a fee
// row may appear later than the fill): right after a fill the fee is
// pending and the run is ok; once the charge lands it matches; a `Locate
// Fees` charge with no locate behind it fails the run, naming it.
func TestReconcileJobOnFastSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locate("HTBX", 300, false) // fee 4.50, charged 5 s after the fill
	j := jobs.Job{Name: "fees", Kind: jobs.KindReconcile, Schedule: mustSchedule(t, "* * * * * *"), Days: 7, Grace: time.Minute}
	_, run, err := b.tick(j)
	if err != nil || !strings.Contains(run.Detail, "1 pending") {
		t.Fatalf("first run: %v %q, want ok with 1 pending", err, run.Detail)
	}
	var at []time.Time
	for i := 0; ; i++ {
		if i == 10 {
			t.Fatalf("fee still not matched after %d runs: %q", i, run.Detail)
		}
		var when time.Time
		when, run, err = b.tick(j)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		at = append(at, when)
		if strings.Contains(run.Detail, "1 matched") {
			break
		}
	}
	if err := b.sim.Sim.AddCashRows([]brokersim.ScenarioCashRow{{Account: "LV100001", Date: "2026-11-25",
		CashType: "Locate Fees", Withdraw: brokersim.Dec(decimal.RequireFromString("7.77")), Note: "Locate fee ZZZZ 100 shares"}}); err != nil {
		t.Fatal(err)
	}
	_, run, err = b.tick(j)
	var f *jobs.Failure
	if !errors.As(err, &f) || run.Outcome != locator.JobFailed || !strings.Contains(run.Detail, "1 unexplained") || !strings.Contains(run.Detail, "7.77") {
		t.Errorf("run with an unexplained charge: %v %s %q", err, run.Outcome, run.Detail)
	}
	runs := b.runs("fees")
	checkTicks(t, at, runs[1:len(runs)-1])
}

// credit-back-unused leaves alone a symbol someone is locating right now
// (here a second locate of HTBX queued behind the 30-second same-symbol
// spacing): its shares are wanted, not unused.
func TestCreditBackSkipsSymbolBeingLocated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locate("HTBX", 300, false)
	h, err := b.engine.Locate(t.Context(), engine.Request{Symbol: "HTBX", Quantity: 600, Policy: pol("0.05", false)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.runner.Run(t.Context(), jobs.Job{Name: "eod", Kind: jobs.KindCreditBackUnused})
	if err != nil {
		t.Fatal(err)
	}
	runs := b.runs("eod")
	if want := "HTBX Locate skipped: a locate of the symbol is in flight (" + h.ID + ")"; len(runs) != 1 || !strings.Contains(runs[0].Detail, want) {
		t.Errorf("runs %+v, want a detail with %q", runs, want)
	}
	if n := len(b.requests("locates/sell")); n != 0 {
		t.Errorf("%d sells, want none", n)
	}
	// The locate in flight is withdrawn, unless virtual time already
	// carried it to its end meanwhile.
	if err := b.engine.Cancel(t.Context(), h.ID, workflow.CancelAsked{}); err != nil && !errors.Is(err, engine.ErrNotOpen) {
		t.Fatal(err)
	}
}
