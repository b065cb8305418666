package poller_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/poller"
)

const account = "LIVE123"

var t0 = time.Date(2025, 3, 10, 14, 30, 0, 0, time.UTC)

// fakeSource is a poller.Source whose answers the test scripts.
type fakeSource struct {
	HistoryFunc   func(ctx context.Context, account string) ([]brokerclient.HistoryRow, error)
	InventoryFunc func(ctx context.Context, account string) ([]brokerclient.InventoryRow, error)
	holds         atomic.Int32 // idle holds taken and not released (HoldIdle)
}

// HoldIdle counts the holds of the key pair's idle reads, as
// brokerclient.Client.HoldIdle takes them.
func (s *fakeSource) HoldIdle() func() {
	s.holds.Add(1)
	var once sync.Once
	return func() { once.Do(func() { s.holds.Add(-1) }) }
}

var _ poller.Source = (*fakeSource)(nil)

func (s *fakeSource) History(ctx context.Context, account string) ([]brokerclient.HistoryRow, error) {
	return s.HistoryFunc(ctx, account)
}

func (s *fakeSource) Inventory(ctx context.Context, account string) ([]brokerclient.InventoryRow, error) {
	return s.InventoryFunc(ctx, account)
}

// watchClock is the fake clock as the poller sees it. It notes the deadline
// of the latest timer made, so the test can advance exactly to the poller's
// next wake-up, and reports each pending timer the poller drops, which it does
// only when Wrote, SetHot or RefreshInventory wakes it or its ctx ends.
type watchClock struct {
	*clock.Fake
	mu      sync.Mutex
	next    time.Time
	stopped chan struct{}
}

func (c *watchClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.next = c.Now().Add(d)
	c.mu.Unlock()
	return &watchTimer{Timer: c.Fake.NewTimer(d), stopped: c.stopped}
}

func (c *watchClock) nextDeadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

type watchTimer struct {
	clock.Timer
	stopped chan struct{}
}

func (t *watchTimer) Stop() bool {
	ok := t.Timer.Stop()
	if ok {
		t.stopped <- struct{}{}
	}
	return ok
}

type testBundle struct {
	clk *watchClock
	src *fakeSource

	mu       sync.Mutex
	rows     []brokerclient.HistoryRow
	inv      []brokerclient.InventoryRow
	histErrs []error // returned by the next History calls, one each, before rows
	invErrs  []error
	histAt   []time.Duration // fake-clock offsets from t0 of History calls
	invAt    []time.Duration
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{clk: &watchClock{Fake: clock.NewFake(t0), stopped: make(chan struct{}, 100)}}
	b.src = &fakeSource{
		HistoryFunc: func(_ context.Context, acct string) ([]brokerclient.HistoryRow, error) {
			if acct != account {
				t.Errorf("History(%q), want account %q", acct, account)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			b.histAt = append(b.histAt, b.clk.Now().Sub(t0))
			if len(b.histErrs) > 0 {
				err := b.histErrs[0]
				b.histErrs = b.histErrs[1:]
				if err != nil {
					return nil, err
				}
			}
			return append([]brokerclient.HistoryRow(nil), b.rows...), nil
		},
		InventoryFunc: func(_ context.Context, acct string) ([]brokerclient.InventoryRow, error) {
			if acct != account {
				t.Errorf("Inventory(%q), want account %q", acct, account)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			b.invAt = append(b.invAt, b.clk.Now().Sub(t0))
			if len(b.invErrs) > 0 {
				err := b.invErrs[0]
				b.invErrs = b.invErrs[1:]
				if err != nil {
					return nil, err
				}
			}
			return append([]brokerclient.InventoryRow(nil), b.inv...), nil
		},
	}
	return b
}

// newPoller fills in the account, the source and the clock.
func (b *testBundle) newPoller(cfg poller.Config) *poller.Poller {
	cfg.Account, cfg.Source, cfg.Clock = account, b.src, b.clk
	return poller.New(cfg)
}

func (b *testBundle) setRows(rows ...brokerclient.HistoryRow) {
	b.mu.Lock()
	b.rows = rows
	b.mu.Unlock()
}

func (b *testBundle) failHistory(errs ...error) {
	b.mu.Lock()
	b.histErrs = errs
	b.mu.Unlock()
}

func (b *testBundle) failInventory(errs ...error) {
	b.mu.Lock()
	b.invErrs = errs
	b.mu.Unlock()
}

func (b *testBundle) calls() (hist, inv []time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Duration(nil), b.histAt...), append([]time.Duration(nil), b.invAt...)
}

// run is a Run in progress.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// start runs p until the test ends or stop is called.
func (b *testBundle) start(t *testing.T, p *poller.Poller) *run {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &run{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = p.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// wait returns Run's error once it has returned.
func (r *run) wait(t *testing.T) error {
	t.Helper()
	recv(t, r.done, "Run to return")
	return r.err
}

// stop cancels Run's ctx and returns its error.
func (r *run) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

// recv waits for ch, with a wall-clock bound that only catches a broken
// hand-off; it never waits out a time window.
func recv[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// settle waits until the poller has finished its work and sleeps on its
// one timer.
func (b *testBundle) settle(t *testing.T) {
	t.Helper()
	recv(t, b.clk.BlockUntil(1), "the poller to sleep")
}

// stepUntil advances the clock from one wake-up of the poller to the next
// until done holds for the reads made so far, returning with the poller
// asleep.
func (b *testBundle) stepUntil(t *testing.T, done func(hist, inv []time.Duration) bool) {
	t.Helper()
	for {
		b.settle(t)
		if done(b.calls()) {
			return
		}
		b.clk.Advance(b.clk.nextDeadline().Sub(b.clk.Now()))
	}
}

// advanceTo moves the clock to t0+at through every wake-up on the way,
// returning with the poller asleep.
func (b *testBundle) advanceTo(t *testing.T, at time.Duration) {
	t.Helper()
	end := t0.Add(at)
	for {
		b.settle(t)
		next := b.clk.nextDeadline()
		if next.After(end) {
			b.clk.Advance(end.Sub(b.clk.Now()))
			return
		}
		b.clk.Advance(next.Sub(b.clk.Now()))
	}
}

// kick calls fn, which wakes the sleeping poller, and waits until the poller
// has dropped its timer and armed the next one.
func (b *testBundle) kick(t *testing.T, fn func()) {
	t.Helper()
	b.settle(t)
	fn()
	recv(t, b.clk.stopped, "the poller to wake")
	b.settle(t)
}

func row(id string, status brokercode.LocateStatus) brokerclient.HistoryRow {
	text := ""
	return brokerclient.HistoryRow{
		AccountID: account, Symbol: "GME", QuoteReqID: id,
		LocateShares: 100, LocateStatus: status, LocateType: 3,
		LocatePrice: decimal.RequireFromString("0.05"), Text: &text,
		CreatedDate: brokerclient.Time{Time: t0}, UpdatedDate: brokerclient.Time{Time: t0},
	}
}

func with(r brokerclient.HistoryRow, fn func(*brokerclient.HistoryRow)) brokerclient.HistoryRow {
	fn(&r)
	return r
}

// recorder logs every callback in the order the poller made them.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.log
	r.log = nil
	return l
}

func summary(rows []brokerclient.HistoryRow) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = fmt.Sprintf("%s=%d", r.QuoteReqID, r.LocateStatus)
	}
	return strings.Join(s, ",")
}

func (r *recorder) rows(rows []brokerclient.HistoryRow) { r.add("rows: " + summary(rows)) }

// afterPoll records AfterPoll with the instant its read was asked for.
func (r *recorder) afterPoll(read time.Time) { r.add(fmt.Sprintf("after poll of %s", read.Sub(t0))) }

func secs(s ...float64) []time.Duration {
	d := make([]time.Duration, len(s))
	for i, x := range s {
		d[i] = time.Duration(math.Round(x * float64(time.Second)))
	}
	return d
}

func upTo(ds []time.Duration, end time.Duration) []time.Duration {
	var out []time.Duration
	for _, d := range ds {
		if d <= end {
			out = append(out, d)
		}
	}
	return out
}

// One history read per tick hands every new or changed row, in the order
// read, to the one receiver (the engine alone knows which
// workflow a row is for), then runs AfterPoll with the instant the read
// was asked for (a row it lacks was missing then); an unchanged row is not
// handed again.
func TestRunHandsOneHistoryReadPerTick(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := &recorder{}
	p := b.newPoller(poller.Config{Rows: rec.rows, AfterPoll: rec.afterPoll})
	b.setRows(
		row("B", brokercode.LocateStatusPending),
		row("A", brokercode.LocateStatusOffered),
		row("C", brokercode.LocateStatusQuoting),
		with(row("A.SU", brokercode.LocateStatusOffered), func(r *brokerclient.HistoryRow) { r.LocateType = 4 }),
	)
	b.start(t, p)
	b.settle(t)

	want := []string{"rows: B=54,A=65,C=81,A.SU=65", "after poll of 0s"}
	if diff := cmp.Diff(want, rec.take()); diff != "" {
		t.Errorf("first poll (-want +got):\n%s", diff)
	}

	// Both sides of the pair change in the next poll: one call, with
	// both of them and nothing unchanged.
	b.setRows(
		row("B", brokercode.LocateStatusPending),
		row("A", brokercode.LocateStatusFilled),
		row("C", brokercode.LocateStatusQuoting),
		with(row("A.SU", brokercode.LocateStatusExpired), func(r *brokerclient.HistoryRow) { r.LocateType = 4 }),
	)
	b.advanceTo(t, 8*time.Second)
	want = []string{"rows: A=50,A.SU=67", "after poll of 8s"}
	if diff := cmp.Diff(want, rec.take()); diff != "" {
		t.Errorf("second poll (-want +got):\n%s", diff)
	}

	// Nothing changes: no rows, AfterPoll still runs.
	b.advanceTo(t, 16*time.Second)
	want = []string{"after poll of 16s"}
	if diff := cmp.Diff(want, rec.take()); diff != "" {
		t.Errorf("third poll (-want +got):\n%s", diff)
	}

	hist, _ := b.calls()
	if diff := cmp.Diff(secs(0, 8, 16), hist); diff != "" {
		t.Errorf("History calls (-want +got):\n%s", diff)
	}
	if got := p.Polls(); got != 3 {
		t.Errorf("Polls() = %d, want 3", got)
	}
}

func TestPollHistoryDeliversOnlyChangedRows(t *testing.T) {
	t.Parallel()
	base := row("Q1", brokercode.LocateStatusOffered)
	rejected := "R56: No inventory"
	tests := []struct {
		name    string
		next    brokerclient.HistoryRow
		deliver bool
	}{
		{"same row", base, false},
		{"same price, other scale", with(base, func(r *brokerclient.HistoryRow) { r.LocatePrice = decimal.RequireFromString("0.0500") }), false},
		{"same instant, other zone", with(base, func(r *brokerclient.HistoryRow) {
			r.UpdatedDate = brokerclient.Time{Time: t0.In(time.FixedZone("EDT", -4*3600))}
		}), false},
		{"untracked field", with(base, func(r *brokerclient.HistoryRow) { r.PreBorrow = true }), false},
		{"status", with(base, func(r *brokerclient.HistoryRow) { r.LocateStatus = brokercode.LocateStatusFilled }), true},
		{"filled shares", with(base, func(r *brokerclient.HistoryRow) { r.FilledShares = 100 }), true},
		{"locate shares", with(base, func(r *brokerclient.HistoryRow) { r.LocateShares = 200 }), true},
		{"price", with(base, func(r *brokerclient.HistoryRow) { r.LocatePrice = decimal.RequireFromString("0.06") }), true},
		{"locate error", with(base, func(r *brokerclient.HistoryRow) { r.LocateError = 56 }), true},
		{"locate type", with(base, func(r *brokerclient.HistoryRow) { r.LocateType = 4 }), true},
		{"text", with(base, func(r *brokerclient.HistoryRow) { r.Text = &rejected }), true},
		{"updated date", with(base, func(r *brokerclient.HistoryRow) {
			r.UpdatedDate = brokerclient.Time{Time: t0.Add(time.Second)}
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			rec := &recorder{}
			p := b.newPoller(poller.Config{Rows: rec.rows})
			b.setRows(base)
			if err := p.PollHistory(t.Context()); err != nil {
				t.Fatal(err)
			}
			rec.take()
			b.setRows(tt.next)
			if err := p.PollHistory(t.Context()); err != nil {
				t.Fatal(err)
			}
			var want []string
			if tt.deliver {
				want = []string{"rows: " + summary([]brokerclient.HistoryRow{tt.next})}
			}
			if diff := cmp.Diff(want, rec.take()); diff != "" {
				t.Errorf("second poll delivered (-want +got):\n%s", diff)
			}
			if got := p.Polls(); got != 2 {
				t.Errorf("Polls() = %d, want 2", got)
			}
		})
	}
}

// What the poller remembers of history is the last read's
// rows, not every row since it started (spec "Short locates": history is
// the trading day's). A row gone from history (a new day) is forgotten,
// so the same row read again later is new; the rows still there are still
// known.
func TestSeenRowsAreTheLastReadsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := &recorder{}
	p := b.newPoller(poller.Config{Rows: rec.rows})
	b.setRows(row("A", brokercode.LocateStatusFilled), row("B", brokercode.LocateStatusOffered))
	if err := p.PollHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec.take()
	b.setRows(row("B", brokercode.LocateStatusOffered))
	if err := p.PollHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("a read with a row fewer delivered %q", got)
	}
	b.setRows(row("A", brokercode.LocateStatusFilled), row("B", brokercode.LocateStatusOffered))
	if err := p.PollHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"rows: A=50"}, rec.take()); diff != "" {
		t.Errorf("the forgotten row back (-want +got):\n%s", diff)
	}
}

func TestPollHistoryError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := &recorder{}
	p := b.newPoller(poller.Config{Rows: rec.rows, AfterPoll: rec.afterPoll})
	b.setRows(row("A", brokercode.LocateStatusOffered))
	boom := &brokerclient.ErrorResponse{StatusCode: http.StatusServiceUnavailable}
	b.failHistory(boom)
	if err := p.PollHistory(t.Context()); !errors.Is(err, boom) {
		t.Fatalf("PollHistory() = %v, want %v", err, boom)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("a failed poll made callbacks: %q", got)
	}
	if got := p.Polls(); got != 0 {
		t.Errorf("Polls() = %d after a failed poll, want 0", got)
	}
}

// action is something the test does to a sleeping poller at a fake instant.
type action struct {
	at    time.Duration
	do    func(p *poller.Poller, now time.Time)
	kicks bool // the call wakes the poller (it changes what it waits for)
}

func TestRunCadence(t *testing.T) {
	t.Parallel()
	wrote := func(p *poller.Poller, _ time.Time) { p.Wrote() }
	hot := func(p *poller.Poller, _ time.Time) { p.SetHot(true) }
	cold := func(p *poller.Poller, _ time.Time) { p.SetHot(false) }
	refresh := func(p *poller.Poller, _ time.Time) { p.RefreshInventory() }
	expect := func(p *poller.Poller, _ time.Time) { p.Expect() }
	quoted := func(p *poller.Poller, now time.Time) { p.Quoted(now) }
	awaiting := func(p *poller.Poller, _ time.Time) { p.SetAwaiting(true) }
	answered := func(p *poller.Poller, _ time.Time) { p.SetAwaiting(false) }
	tests := []struct {
		name     string
		actions  []action
		until    time.Duration
		hist     []time.Duration
		inv      []time.Duration
		minSpace time.Duration // between History calls
	}{
		{
			name:  "idle: history every 8 s, inventory every 5 s",
			until: 40 * time.Second,
			hist:  secs(0, 8, 16, 24, 32, 40),
			inv:   secs(0, 5, 10, 15, 20, 25, 30, 35, 40),
		},
		{
			name:    "after a write: 2 s, 4 polls at 2 s spacing, then idle",
			actions: []action{{at: 5 * time.Second, do: wrote, kicks: true}},
			until:   40 * time.Second,
			hist:    secs(0, 7, 9, 11, 13, 21, 29, 37),
			inv:     secs(0, 5, 10, 15, 20, 25, 30, 35, 40),
		},
		{
			name:    "a write never postpones a sooner read",
			actions: []action{{at: 7500 * time.Millisecond, do: wrote, kicks: true}},
			until:   40 * time.Second,
			hist:    secs(0, 8, 10, 12, 14, 22, 30, 38),
			inv:     secs(0, 5, 10, 15, 20, 25, 30, 35, 40),
		},
		{
			name: "hot: 1 s, then back to idle",
			actions: []action{
				{at: 3 * time.Second, do: hot, kicks: true},
				{at: 10500 * time.Millisecond, do: cold, kicks: true},
			},
			until: 30 * time.Second,
			hist:  secs(0, 4, 5, 6, 7, 8, 9, 10, 11, 19, 27),
			inv:   secs(0, 5, 10, 15, 20, 25, 30),
		},
		{
			name: "hot is never faster than 1 s",
			actions: []action{
				{at: 1 * time.Second, do: hot, kicks: true},
				{at: 2100 * time.Millisecond, do: wrote, kicks: true},
				{at: 3200 * time.Millisecond, do: hot}, // already hot: no wake-up
				{at: 4300 * time.Millisecond, do: wrote, kicks: true},
				{at: 5400 * time.Millisecond, do: refresh, kicks: true},
				{at: 6500 * time.Millisecond, do: cold, kicks: true},
				{at: 6600 * time.Millisecond, do: hot, kicks: true},
			},
			until: 9 * time.Second,
			hist:  secs(0, 2, 3, 4, 5, 6, 7, 8, 9),
			inv:   secs(0, 5, 6.4),
		},
		{
			// Spec "Short locates" rule 7 and "Locate status" (a quote
			// settles in 1.5 to 3 s): turning hot for a quote the broker
			// just took never reads before the write's 2 s.
			name: "hot with a write: the first read waits the write's 2 s, then 1 s",
			actions: []action{
				{at: 5 * time.Second, do: wrote, kicks: true},
				{at: 5 * time.Second, do: hot, kicks: true},
			},
			until: 10 * time.Second,
			hist:  secs(0, 7, 8, 9, 10),
			inv:   secs(0, 5, 10),
		},
		{
			// "Locate status": an Offered quote settles in 1.5 to 3 s.
			// A quote answered is read every half second across that
			// window (the history route's 2/s, "Rate limits"), the last
			// read at its end, then every second while hot.
			name: "a quote: read every half second across its settle window, then 1 s",
			actions: []action{
				{at: 5 * time.Second, do: quoted, kicks: true},
				{at: 5 * time.Second, do: hot, kicks: true},
			},
			until:    10 * time.Second,
			hist:     secs(0, 7, 7.5, 8, 9, 10),
			inv:      secs(0, 5, 10),
			minSpace: 500 * time.Millisecond,
		},
		{
			name: "quotes a second apart: one read every half second serves both windows",
			actions: []action{
				{at: 5 * time.Second, do: quoted, kicks: true},
				{at: 5 * time.Second, do: hot, kicks: true},
				{at: 6 * time.Second, do: quoted, kicks: true},
			},
			until:    11 * time.Second,
			hist:     secs(0, 7, 7.5, 8, 8.5, 9, 10, 11),
			inv:      secs(0, 5, 10),
			minSpace: 500 * time.Millisecond,
		},
		{
			// The quote's outcome seen (nothing awaits any more), the
			// window's reads end: the read due stays, the write's
			// follow-ups go on at 2 s.
			name: "an outcome seen ends its window's reads",
			actions: []action{
				{at: 5 * time.Second, do: awaiting},
				{at: 5 * time.Second, do: quoted, kicks: true},
				{at: 7200 * time.Millisecond, do: answered},
			},
			until:    12 * time.Second,
			hist:     secs(0, 7, 7.5, 9.5, 11.5),
			inv:      secs(0, 5, 10),
			minSpace: 500 * time.Millisecond,
		},
		{
			name: "a quote while idle: its window's reads, then the write's follow-ups",
			actions: []action{
				{at: 1 * time.Second, do: quoted, kicks: true},
			},
			until:    20 * time.Second,
			hist:     secs(0, 3, 3.5, 4, 6, 14),
			inv:      secs(0, 5, 10, 15, 20),
			minSpace: 500 * time.Millisecond,
		},
		{
			name: "Expect brings history to half a second after the last read; hot counts on from it",
			actions: []action{
				{at: 3 * time.Second, do: hot, kicks: true},
				{at: 6200 * time.Millisecond, do: expect, kicks: true},
				{at: 8700 * time.Millisecond, do: cold, kicks: true},
			},
			until:    12 * time.Second,
			hist:     secs(0, 4, 5, 6, 6.5, 7.5, 8.5, 9.5),
			inv:      secs(0, 5, 10),
			minSpace: 500 * time.Millisecond,
		},
		{
			name:     "Expect while idle: one read at the route's pace, then idle spacing",
			actions:  []action{{at: 200 * time.Millisecond, do: expect, kicks: true}},
			until:    10 * time.Second,
			hist:     secs(0, 0.5, 8.5),
			inv:      secs(0, 5, 10),
			minSpace: 500 * time.Millisecond,
		},
		{
			name:    "RefreshInventory brings inventory forward",
			actions: []action{{at: time.Second, do: refresh, kicks: true}},
			until:   17 * time.Second,
			hist:    secs(0, 8, 16),
			inv:     secs(0, 2, 7, 12, 17),
		},
		{
			name:    "RefreshInventory never postpones a sooner read",
			actions: []action{{at: 4500 * time.Millisecond, do: refresh, kicks: true}},
			until:   15 * time.Second,
			hist:    secs(0, 8),
			inv:     secs(0, 5, 10, 15),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p := b.newPoller(poller.Config{})
			r := b.start(t, p)
			for _, a := range tt.actions {
				b.advanceTo(t, a.at)
				if a.kicks {
					b.kick(t, func() { a.do(p, b.clk.Now()) })
				} else {
					a.do(p, b.clk.Now())
				}
			}
			b.advanceTo(t, tt.until)
			if err := r.stop(t); !errors.Is(err, context.Canceled) {
				t.Errorf("Run() = %v, want context.Canceled", err)
			}
			hist, inv := b.calls()
			if diff := cmp.Diff(tt.hist, upTo(hist, tt.until)); diff != "" {
				t.Errorf("History at (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.inv, upTo(inv, tt.until)); diff != "" {
				t.Errorf("Inventory at (-want +got):\n%s", diff)
			}
			// The history route allows 2/s; the poller keeps to 1/s but
			// for a change it expects.
			minSpace := tt.minSpace
			if minSpace == 0 {
				minSpace = time.Second
			}
			for i := 1; i < len(hist); i++ {
				if gap := hist[i] - hist[i-1]; gap < minSpace {
					t.Errorf("History at %v and %v: %v apart, want at least %v", hist[i-1], hist[i], gap, minSpace)
				}
			}
			if got, want := p.Polls(), len(hist); got != want {
				t.Errorf("Polls() = %d, want %d (one per History read)", got, want)
			}
		})
	}
}

func TestRunReportsInventoryAndAfterPoll(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.inv = []brokerclient.InventoryRow{{AccountID: account, Symbol: "GME", Available: 300, LocateType: 3}}
	rec := &recorder{}
	p := b.newPoller(poller.Config{
		Rows:      rec.rows,
		AfterPoll: rec.afterPoll,
		OnInventory: func(rows []brokerclient.InventoryRow) {
			rec.add(fmt.Sprintf("inventory: %d rows, %s available %d", len(rows), rows[0].Symbol, rows[0].Available))
		},
	})
	b.setRows(row("A", brokercode.LocateStatusOffered))
	b.start(t, p)
	b.advanceTo(t, 10*time.Second)
	want := []string{
		"rows: A=65", "after poll of 0s", "inventory: 1 rows, GME available 300", // 0 s
		"inventory: 1 rows, GME available 300", // 5 s
		"after poll of 8s",                     // 8 s: nothing changed, AfterPoll still runs
		"inventory: 1 rows, GME available 300", // 10 s
	}
	if diff := cmp.Diff(want, rec.take()); diff != "" {
		t.Errorf("callbacks (-want +got):\n%s", diff)
	}
	if got := p.Polls(); got != 2 {
		t.Errorf("Polls() = %d, want 2", got)
	}
}

func TestRunBacksOffOnTransientErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
	}{
		{"503", &brokerclient.ErrorResponse{Method: "GET", StatusCode: http.StatusServiceUnavailable, Text: "Service Unavailable"}},
		{"rate limited", &brokerclient.RateLimitError{Op: "Locates.History", Attempts: 5}},
		{"wrapped 502", fmt.Errorf("read history: %w", &brokerclient.ErrorResponse{StatusCode: http.StatusBadGateway})},
		{"transport", errors.New("read tcp: connection reset by peer")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p := b.newPoller(poller.Config{})
			// Eight failures, two good reads, one failure, then good again.
			errs := make([]error, 0, 12)
			for range 8 {
				errs = append(errs, tt.err)
			}
			errs = append(errs, nil, nil, tt.err)
			b.failHistory(errs...)
			r := b.start(t, p)
			b.stepUntil(t, func(hist, _ []time.Duration) bool { return len(hist) >= 13 })
			if err := r.stop(t); !errors.Is(err, context.Canceled) {
				t.Fatalf("Run() = %v, want context.Canceled", err)
			}
			hist, inv := b.calls()
			// Exponential from 1 s with up to 25% jitter, capped at 60 s.
			type bounds struct{ lo, hi time.Duration }
			want := []bounds{
				{1 * time.Second, 1250 * time.Millisecond},
				{2 * time.Second, 2500 * time.Millisecond},
				{4 * time.Second, 5 * time.Second},
				{8 * time.Second, 10 * time.Second},
				{16 * time.Second, 20 * time.Second},
				{32 * time.Second, 40 * time.Second},
				{60 * time.Second, 60 * time.Second},
				{60 * time.Second, 60 * time.Second},
				{8 * time.Second, 8 * time.Second}, // recovered: idle spacing
				{8 * time.Second, 8 * time.Second},
				{1 * time.Second, 1250 * time.Millisecond}, // the count starts over
				{8 * time.Second, 8 * time.Second},
			}
			for i, w := range want {
				if gap := hist[i+1] - hist[i]; gap < w.lo || gap > w.hi {
					t.Errorf("History call %d came %v after call %d, want within [%v, %v]", i+2, gap, i+1, w.lo, w.hi)
				}
			}
			// Inventory waits while history fails, and is read with each good tick.
			if len(inv) == 0 || inv[0] != hist[8] {
				t.Errorf("first Inventory at %v, want with the first good History read at %v", inv, hist[8])
			}
			if got := p.Polls(); got != 4 {
				t.Errorf("Polls() = %d, want 4 (failed reads do not count)", got)
			}
		})
	}
}

func TestRunBacksOffOnInventoryError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.newPoller(poller.Config{})
	b.failInventory(&brokerclient.ErrorResponse{StatusCode: http.StatusServiceUnavailable})
	b.start(t, p)
	b.advanceTo(t, 16*time.Second)
	hist, inv := b.calls()
	if diff := cmp.Diff(secs(0, 8, 16), hist); diff != "" {
		t.Errorf("History at (-want +got):\n%s", diff)
	}
	if len(inv) < 3 || inv[0] != 0 || inv[1] < time.Second || inv[1] > 1250*time.Millisecond || inv[2]-inv[1] != 5*time.Second {
		t.Errorf("Inventory at %v, want 0, after 1-1.25 s of back-off, then 5 s later", inv)
	}
}

func TestRunStopsOnIrrecoverableError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		inventory bool // fail the inventory read instead of history
		err       error
		want      error
	}{
		{"404 history", false, &brokerclient.ErrorResponse{Method: "GET", StatusCode: http.StatusNotFound, Text: "Not found"}, brokerclient.ErrNotFound},
		{"404 wrapped", false, fmt.Errorf("history: %w", &brokerclient.ErrorResponse{StatusCode: http.StatusNotFound}), brokerclient.ErrNotFound},
		{"401", false, &brokerclient.ErrorResponse{StatusCode: http.StatusUnauthorized}, brokerclient.ErrUnauthorized},
		{"400", false, &brokerclient.ErrorResponse{StatusCode: http.StatusBadRequest, Status: "BadRequest"}, brokerclient.ErrBadRequest},
		{"problem details", false, &brokerclient.ProblemDetails{Status: http.StatusBadRequest, Title: "One or more validation errors occurred."}, brokerclient.ErrBadRequest},
		{"invalid input", false, &brokercode.InputError{Field: "account", Message: "empty"}, brokercode.ErrInput},
		{"404 inventory", true, &brokerclient.ErrorResponse{StatusCode: http.StatusNotFound}, brokerclient.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p := b.newPoller(poller.Config{})
			if tt.inventory {
				b.failInventory(tt.err)
			} else {
				b.failHistory(tt.err)
			}
			r := b.start(t, p)
			err := r.wait(t)
			if !errors.Is(err, tt.want) {
				t.Errorf("Run() = %v, want an error matching %v", err, tt.want)
			}
			if err == nil || !strings.Contains(err.Error(), account) {
				t.Errorf("Run() = %v, want it to name account %s", err, account)
			}
			hist, inv := b.calls()
			wantInv := 0
			if tt.inventory {
				wantInv = 1
			}
			if len(hist) != 1 || len(inv) != wantInv {
				t.Errorf("History called %d times, Inventory %d, want 1 and %d", len(hist), len(inv), wantInv)
			}
			if got := b.clk.Timers(); got != 0 {
				t.Errorf("Timers() = %d after Run stopped, want 0", got)
			}
		})
	}
}

func TestRunStopsWhenCtxEnds(t *testing.T) {
	t.Parallel()
	t.Run("asleep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := b.start(t, b.newPoller(poller.Config{}))
		b.settle(t)
		if err := r.stop(t); !errors.Is(err, context.Canceled) {
			t.Errorf("Run() = %v, want context.Canceled", err)
		}
		if got := b.clk.Timers(); got != 0 {
			t.Errorf("Timers() = %d after Run stopped, want 0", got)
		}
	})
	t.Run("during a read", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		reading := make(chan struct{})
		b.src.HistoryFunc = func(ctx context.Context, _ string) ([]brokerclient.HistoryRow, error) {
			close(reading)
			<-ctx.Done()
			return nil, fmt.Errorf("history: %w", ctx.Err())
		}
		r := b.start(t, b.newPoller(poller.Config{}))
		recv(t, reading, "the History read")
		if err := r.stop(t); !errors.Is(err, context.Canceled) {
			t.Errorf("Run() = %v, want context.Canceled", err)
		}
	})
	t.Run("already done", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.newPoller(poller.Config{}).Run(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Run() = %v, want context.Canceled", err)
		}
		if hist, inv := b.calls(); len(hist)+len(inv) != 0 {
			t.Errorf("a done ctx still read history %d times, inventory %d times", len(hist), len(inv))
		}
	})
}

// TestRunPartialCadenceKeepsSpacing fails: New replaces Cadence with
// DefaultCadence only when every field is zero, so a Cadence that sets some
// fields leaves the others at zero. With IdleInventory 0 the poller never
// sleeps, reading inventory and history back to back at one instant; with
// Hot 0 it would do the same while an offer is live, far over the history
// route's 2/s limit.
func TestRunPartialCadenceKeepsSpacing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	reads := 0 // touched only by the poller's goroutine
	b.src.InventoryFunc = func(context.Context, string) ([]brokerclient.InventoryRow, error) {
		if reads++; reads == 3 {
			cancel() // end the spin
		}
		return nil, nil
	}
	p := b.newPoller(poller.Config{Cadence: poller.Cadence{IdleHistory: 4 * time.Second}})
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-done:
		hist, _ := b.calls()
		t.Fatalf("Run never slept: %d History and 3 Inventory reads at %v", len(hist), b.clk.Now())
	case <-b.clk.BlockUntil(1):
	}
	cancel()
	recv(t, done, "Run to return")
}

// Failing says since when the reads have failed, from the first failure
// on, and nothing once a read succeeds again: a screen turns red on the
// first failed read, not a minute later.
func TestFailingSinceFirstFailedRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.newPoller(poller.Config{})
	boom := &brokerclient.ErrorResponse{StatusCode: http.StatusServiceUnavailable}
	b.failHistory(boom, boom)
	b.start(t, p)
	b.stepUntil(t, func(hist, _ []time.Duration) bool { return len(hist) >= 2 })
	since, err := p.Failing()
	if hist, _ := b.calls(); !since.Equal(t0.Add(hist[0])) || !errors.Is(err, boom) {
		t.Errorf("Failing() = %v, %v after two failed reads (the first at %v), want since the first, %v", since, err, hist[0], boom)
	}
	b.stepUntil(t, func(hist, _ []time.Duration) bool { return len(hist) >= 3 })
	if since, err := p.Failing(); !since.IsZero() || err != nil {
		t.Errorf("Failing() = %v, %v after a read succeeded, want nothing", since, err)
	}
}

// An account with nothing open (SetQuiet) reads the broker at most once a
// virtual minute: history every 2 minutes (with the owner's ledger sync,
// two reads every 4 minutes, one read a minute), inventory only once a history read
// shows a change (a locate made in the broker's own window, "Short
// locates"), since only another program on the account could change them.
// A request opened on it (leaving quiet) wakes it at once: inventory 5 s
// and history 8 s from then, the idle cadence, not a minute later.
func TestQuietAccountReadsAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.newPoller(poller.Config{})
	p.SetQuiet(true)
	b.start(t, p)
	b.advanceTo(t, 10*time.Minute+30*time.Second)
	hist, inv := b.calls()
	if diff := cmp.Diff(secs(0, 120, 240, 360, 480, 600), hist); diff != "" {
		t.Errorf("quiet History calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(secs(0), inv); diff != "" {
		t.Errorf("quiet Inventory calls (-want +got):\n%s", diff)
	}
	perMinute := map[time.Duration]int{}
	for _, at := range append(hist, inv...) {
		if at > 0 { // the start's reads aside
			perMinute[at/time.Minute]++
		}
	}
	for m, n := range perMinute {
		if n > 1 {
			t.Errorf("minute %d: %d reads, want at most 1", m, n)
		}
	}
	// Another program locates: the next history read shows its row, and
	// inventory is read at once after it.
	b.setRows(row("elsewhere", brokercode.LocateStatusFilled))
	b.advanceTo(t, 12*time.Minute+time.Second)
	hist, inv = b.calls()
	if diff := cmp.Diff(secs(0, 120, 240, 360, 480, 600, 720), hist); diff != "" {
		t.Errorf("History calls after a row changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(secs(0, 720), inv); diff != "" {
		t.Errorf("Inventory calls after a row changed (-want +got):\n%s", diff)
	}
	b.kick(t, func() { p.SetQuiet(false) }) // a locate starts at 721 s
	if next, want := b.clk.nextDeadline(), t0.Add(726*time.Second); next.After(want) {
		t.Errorf("woken at 721 s, the next read is due at %v, want by 726 s", next.Sub(t0))
	}
	b.advanceTo(t, 735*time.Second)
	hist, inv = b.calls()
	if diff := cmp.Diff(secs(0, 120, 240, 360, 480, 600, 720, 729), hist); diff != "" {
		t.Errorf("History calls after quiet (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(secs(0, 720, 726, 731), inv); diff != "" {
		t.Errorf("Inventory calls after quiet (-want +got):\n%s", diff)
	}
}

// A start with nothing to recover staggers its first reads (Stagger):
// each comes at a moment within its idle spacing (history's 8 s,
// inventory's 5 s), not at once, and the first inventory read, never made
// yet, stays when the account is quiet; then the quiet cadence.
func TestStaggeredFirstReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.newPoller(poller.Config{})
	p.Stagger()
	p.SetQuiet(true)
	b.start(t, p)
	b.advanceTo(t, 10*time.Second)
	hist, inv := b.calls()
	if len(hist) != 1 || len(inv) != 1 || hist[0] >= 8*time.Second || inv[0] >= 5*time.Second {
		t.Fatalf("first reads: history at %v, inventory at %v; want one each, within 8 s and 5 s", hist, inv)
	}
	if hist[0] == 0 && inv[0] == 0 {
		t.Errorf("both first reads at the start; want them drawn within their spacing")
	}
	b.advanceTo(t, 3*time.Minute)
	if h, i := b.calls(); len(h) != 2 || h[1] != hist[0]+2*time.Minute || len(i) != 1 {
		t.Errorf("then: history at %v, inventory at %v; want history 2 minutes after its first, no other inventory read", h, i)
	}
}

// An account that turns quiet (its last workflow ended) drops the reads
// due on the idle cadence: history comes 2 minutes after its last read,
// inventory once history changes.
func TestTurningQuietDropsTheIdleReadsDue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.newPoller(poller.Config{})
	b.start(t, p)
	b.advanceTo(t, time.Second) // read at 0; due: inventory at 5 s, history at 8 s
	p.SetQuiet(true)            // nothing sooner to read: the poller sleeps on
	b.advanceTo(t, 200*time.Second)
	hist, inv := b.calls()
	if diff := cmp.Diff(secs(0, 120), hist); diff != "" {
		t.Errorf("History calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(secs(0), inv); diff != "" {
		t.Errorf("Inventory calls (-want +got):\n%s", diff)
	}
}

// An account awaiting its quote's offer holds its key
// pair's idle reads while the quote is in its settle window ("Locate
// status": 1.5 to 3 s), so its reads every half second across the window
// find their token; the hold ends with the read at the window's end (a quote
// left pending at the broker holds nobody's reads), and with the poller.
func TestAwaitingHoldsIdleReadsThroughTheSettleWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.newPoller(poller.Config{})
	r := b.start(t, p)
	b.advanceTo(t, 5*time.Second)
	p.SetAwaiting(true)
	if n := b.src.holds.Load(); n != 0 {
		t.Fatalf("%d holds while awaiting with no quote in its settle window, want 0", n)
	}
	b.kick(t, func() { p.Quoted(b.clk.Now()) })
	if n := b.src.holds.Load(); n != 1 {
		t.Fatalf("%d holds once the quote was answered, want 1", n)
	}
	b.advanceTo(t, 7600*time.Millisecond) // the window's first two reads
	if n := b.src.holds.Load(); n != 1 {
		t.Fatalf("%d holds after the window's first reads, want 1", n)
	}
	b.advanceTo(t, 8100*time.Millisecond) // the window's end read
	if n := b.src.holds.Load(); n != 0 {
		t.Fatalf("%d holds after the read at the window's end, want 0", n)
	}
	b.kick(t, func() { p.Quoted(b.clk.Now()) }) // a second quote
	if n := b.src.holds.Load(); n != 1 {
		t.Fatalf("%d holds for a second quote, want 1", n)
	}
	r.stop(t)
	if n := b.src.holds.Load(); n != 0 {
		t.Fatalf("%d holds after the poller ended, want 0", n)
	}
	p.SetAwaiting(true)
	p.Quoted(b.clk.Now())
	if n := b.src.holds.Load(); n != 0 {
		t.Fatalf("%d holds taken after the poller ended, want 0", n)
	}
}
