package ledger_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// want is one expected line: kind, symbol, status, expected and charged.
type want struct {
	kind     locator.FeeLineKind
	symbol   string
	status   locator.FeeStatus
	expected string
	charged  string
}

func lineOf(l locator.FeeLine) want {
	w := want{kind: l.Kind, symbol: l.Symbol, status: l.Status, expected: l.Expected.StringFixed(2), charged: l.Charged.StringFixed(2)}
	return w
}

// Spec "Cash ledger" (a locate fee row may appear later than the fill) and
// "Account" (totalLocateCosts): each filled locate is matched to its
// `Locate Fees` charge, each credit-back to its credit; a charge not yet in
// the ledger is pending until the grace period passes, then missing; a wrong
// amount shows expected and charged; a charge with no locate behind it is
// unexplained. The fills are real, through the simulator.
func TestReconcile(t *testing.T) {
	t.Parallel()
	const grace = time.Hour
	for _, tc := range []struct {
		name string
		// act sets the case up after the settings are applied and returns
		// the instant to reconcile at.
		settings brokersim.Settings
		act      func(t *testing.T, b *testBundle) time.Time
		want     []want
		problems int
		day      locator.FeeDayStatus
	}{
		{
			name: "fee matched",
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				b.sim.Advance(10 * time.Second) // the fee posts 5 s after the fill
				return b.sim.Clock.Now()
			},
			want: []want{{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"}},
			day:  locator.DayAgrees,
		},
		{
			name:     "delayed fee pending within the grace period",
			settings: brokersim.Settings{FeeDelay: durationPtr(2 * time.Hour)},
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				b.sim.Advance(time.Minute)
				return b.sim.Clock.Now()
			},
			want: []want{{locator.LineFee, "HTBX", locator.FeePending, "4.50", "0.00"}},
			day:  locator.DayPending, // totalLocateCosts counts it; the ledger does not yet
		},
		{
			name:     "delayed fee missing after the grace period",
			settings: brokersim.Settings{FeeDelay: durationPtr(2 * time.Hour)},
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				b.sim.Advance(grace + time.Minute)
				return b.sim.Clock.Now()
			},
			want:     []want{{locator.LineFee, "HTBX", locator.FeeMissing, "4.50", "0.00"}},
			problems: 2, // the line, and today's totalLocateCosts against the ledger
			day:      locator.DayDiffers,
		},
		{
			name:     "delayed fee arrives",
			settings: brokersim.Settings{FeeDelay: durationPtr(2 * time.Hour)},
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				b.sim.Advance(2*time.Hour + time.Second)
				return b.sim.Clock.Now()
			},
			want: []want{{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"}},
			day:  locator.DayAgrees,
		},
		{
			name:     "wrong fee",
			settings: brokersim.Settings{FeeMultiplier: decPtr("2")},
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBY", 500)
				b.sim.Advance(10 * time.Second)
				return b.sim.Clock.Now()
			},
			want:     []want{{locator.LineFee, "HTBY", locator.FeeWrongAmount, "15.00", "30.00"}},
			problems: 1,
			day:      locator.DayAgrees, // the broker's total agrees with its own ledger
		},
		{
			name: "unexplained charge",
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				b.sim.Advance(10 * time.Second)
				if err := b.sim.Sim.AddCashRows([]brokersim.ScenarioCashRow{
					{Account: account, Date: today(b).Format(time.DateOnly), CashType: "Locate Fees", Withdraw: brokersim.Dec(dec("7.77")), Note: "Locate fee ZZZZ 500 shares"},
					{Account: account, Date: today(b).Format(time.DateOnly), CashType: "Locate Rebate", Deposit: brokersim.Dec(dec("1.00")), Note: "not a fee"},
				}); err != nil {
					t.Fatal(err)
				}
				return b.sim.Clock.Now()
			},
			want: []want{
				{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"},
				{locator.LineFee, "ZZZZ", locator.FeeUnexplained, "0.00", "7.77"},
			},
			problems: 2, // the line, and totalLocateCosts (4.50) against the ledger (12.27)
			day:      locator.DayDiffers,
		},
		{
			name:     "wrong amount on a row naming the symbol",
			settings: brokersim.Settings{FeeMultiplier: decPtr("0")}, // the broker posts nothing itself
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				addFee(t, b, "5.00", "Locate fee HTBX 300 shares")
				return b.sim.Clock.Now()
			},
			want:     []want{{locator.LineFee, "HTBX", locator.FeeWrongAmount, "4.50", "5.00"}},
			problems: 2, // the line, and totalLocateCosts (0) against the ledger
			day:      locator.DayDiffers,
		},
		{
			name:     "a row naming nothing is not paired with a wrong amount",
			settings: brokersim.Settings{FeeMultiplier: decPtr("0")},
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				addFee(t, b, "5.00", "Locate fee adjustment")
				return b.sim.Clock.Now()
			},
			want: []want{
				{locator.LineFee, "HTBX", locator.FeePending, "4.50", "0.00"},
				{locator.LineFee, "", locator.FeeUnexplained, "0.00", "5.00"},
			},
			problems: 2,
			day:      locator.DayDiffers,
		},
		{
			name: "credit-back credited",
			act:  creditedBack,
			want: []want{
				{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"},
				{locator.LineCredit, "HTBX", locator.FeeMatched, "4.50", "4.50"},
			},
			day: locator.DayAgrees,
		},
		{
			// Found by the generated days (seed 1 of tradingday, its
			// scenario refunding half): the spec leaves a refund's amount to
			// the broker, so one below the fee is matched, one above it wrong.
			name:     "credit-back refunded in part",
			settings: brokersim.Settings{CreditBackRefund: decPtr("0.5")},
			act:      creditedBack,
			want: []want{
				{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"},
				{locator.LineCredit, "HTBX", locator.FeeMatched, "4.50", "2.25"},
			},
			day: locator.DayAgrees,
		},
		{
			name:     "credit-back refunded above the fee",
			settings: brokersim.Settings{CreditBackRefund: decPtr("2")},
			act:      creditedBack,
			want: []want{
				{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"},
				{locator.LineCredit, "HTBX", locator.FeeWrongAmount, "4.50", "9.00"},
			},
			problems: 1,
			day:      locator.DayAgrees,
		},
		{
			name: "two identical fees on one day",
			act: func(t *testing.T, b *testBundle) time.Time {
				b.fill(t, "HTBX", 300)
				b.sim.Advance(31 * time.Second) // same-symbol quote spacing
				b.fill(t, "HTBX", 300)
				b.sim.Advance(10 * time.Second)
				return b.sim.Clock.Now()
			},
			want: []want{
				{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"},
				{locator.LineFee, "HTBX", locator.FeeMatched, "4.50", "4.50"},
			},
			day: locator.DayAgrees,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.sim.Sim.ApplySettings(tc.settings)
			now := tc.act(t, b)
			b.syncToday(t)
			r, err := ledger.Reconcile(t.Context(), b.client, b.store, account, today(b), now, grace)
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			seen := map[string]bool{}
			for _, l := range r.Lines {
				got = append(got, lineOf(l))
				if l.Status != locator.FeeUnexplained && !l.Date.Equal(today(b)) {
					t.Errorf("line date %s, want today", l.Date)
				}
				if l.WorkflowID != "" && seen[l.Note] && l.Note != "" {
					t.Errorf("one ledger row matched twice: %q", l.Note)
				}
				seen[l.Note] = true
			}
			if len(got) != len(tc.want) {
				t.Fatalf("lines %+v\nwant %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("line %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if n := r.Problems(); n != tc.problems {
				t.Errorf("%d problems, want %d (%s)", n, tc.problems, r)
			}
			if len(r.Days) != 1 || r.Days[0].BrokerTotal == nil || r.Days[0].Status != tc.day {
				t.Errorf("days %+v, want today only, %q", r.Days, tc.day)
			}
		})
	}
}

// The whole path through the engine: a locate filled and credited back by
// the engine on the shared clock, the ledger synced, every fee and credit
// matched and today's totalLocateCosts in agreement.
func TestReconcileEngineEndToEnd(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t)
	b := &testBundle{sim: sim, store: mustStore(t, sim), client: sim.Client(t, sim.Live)}
	// The engine's poller and dispatcher sleep on the clock; time waits on
	// the events its loop holds (an offer's row: real time never runs past).
	var loops simtest.Loops
	sim.RunClockWhile(t, 2, loops.Idle)
	e, err := engine.New(engine.Config{
		Client: sim.Client(t, sim.Live), Store: b.store, Clock: sim.Clock, Account: account,
		Env: brokerclient.EnvLive, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	loops.Add(e)
	run := func(h *engine.Handle, err error) *workflow.Workflow {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		w, err := e.Wait(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	fill := run(e.Locate(t.Context(), engine.Request{Symbol: "HTBX", Quantity: 500, Policy: workflow.Policy{AutoAccept: true}}))
	credit := run(e.CreditBack(t.Context(), engine.CreditBackRequest{Symbol: "HTBX", Shares: 200, Type: brokercode.LocateTypeLocate}))
	e.Close() // the clock stops with the engine's timers
	if fill.State != states.Filled || credit.State != states.Credited {
		t.Fatalf("workflows ended %s and %s", fill.State, credit.State)
	}
	sim.Advance(15 * time.Second) // the fee and the credit have posted
	res := b.syncToday(t)
	if res.Inserted != 2 {
		t.Errorf("sync %+v, want the fee and the credit inserted", res)
	}
	r, err := ledger.Reconcile(t.Context(), b.client, b.store, account, today(b), sim.Clock.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lines) != 2 || r.Problems() != 0 {
		t.Fatalf("report %s: %+v", r, r.Lines)
	}
	for i, w := range []want{
		{locator.LineFee, "HTBX", locator.FeeMatched, "7.50", "7.50"},
		{locator.LineCredit, "HTBX", locator.FeeMatched, "3.00", "3.00"},
	} {
		if got := lineOf(r.Lines[i]); got != w {
			t.Errorf("line %d: %+v, want %+v", i, got, w)
		}
	}
	if r.Lines[0].WorkflowID != fill.ID || r.Lines[1].WorkflowID != credit.ID || !strings.Contains(r.Lines[0].Note, fill.QuoteReqID) {
		t.Errorf("lines %+v do not point at the workflows", r.Lines)
	}
	d := r.Days[0]
	if d.Status != locator.DayAgrees || !d.BrokerTotal.Equal(dec("7.5")) || !d.Charged.Equal(dec("7.5")) || !d.Credited.Equal(dec("3")) {
		t.Errorf("day %+v", d)
	}
}

// A locate filled before the report's first day whose fee posts on it
// explains that fee; one whose fee posted before is not reported at all.
func TestReconcileSinceBoundary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	// Fill 15:55 ET; the fee posts after midnight, on the next trade date.
	b.sim.Sim.ApplySettings(brokersim.Settings{FeeDelay: durationPtr(9 * time.Hour)})
	b.sim.Advance(5*time.Hour + 55*time.Minute)
	w := b.fill(t, "HTBX", 300)
	b.sim.Advance(10 * time.Hour)
	next := today(b)
	if _, err := ledger.Sync(ctx, b.client, b.store, account, next.AddDate(0, 0, -1), next.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	r, err := ledger.Reconcile(ctx, nil, b.store, account, next, b.sim.Clock.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lines) != 1 || r.Lines[0].WorkflowID != w.ID || r.Lines[0].Status != locator.FeeMatched ||
		!r.Lines[0].LedgerDate.Equal(next) || r.Lines[0].Date.Equal(next) {
		t.Errorf("lines %+v, want the earlier fill matched to the fee of %s", r.Lines, next.Format(time.DateOnly))
	}
	if len(r.Days) != 1 || !r.Days[0].Charged.Equal(dec("4.5")) || !r.Days[0].ExpectedFees.IsZero() || r.Days[0].BrokerTotal != nil {
		t.Errorf("days %+v", r.Days)
	}
}

// Bad input is refused (docs/design.md rule 8).
func TestReconcileBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := b.sim.Clock.Now()
	for _, tc := range []struct {
		name    string
		account string
		since   time.Time
		grace   time.Duration
	}{
		{"empty account", "", now, time.Hour},
		{"no since", account, time.Time{}, time.Hour},
		{"since after today", account, now.AddDate(0, 0, 2), time.Hour},
		{"negative grace", account, now, -time.Hour},
	} {
		if _, err := ledger.Reconcile(t.Context(), b.client, b.store, tc.account, tc.since, now, tc.grace); !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("%s: %v, want an input error", tc.name, err)
		}
	}
}

// addFee posts a `Locate Fees` charge dated today, as a back office would.
func addFee(t *testing.T, b *testBundle, amount, note string) {
	t.Helper()
	if err := b.sim.Sim.AddCashRows([]brokersim.ScenarioCashRow{{Account: account, Date: today(b).Format(time.DateOnly),
		CashType: "Locate Fees", Withdraw: brokersim.Dec(dec(amount)), Note: note}}); err != nil {
		t.Fatal(err)
	}
}

func durationPtr(d time.Duration) *brokersim.Duration {
	v := brokersim.Duration(d)
	return &v
}

func decPtr(s string) *brokersim.Decimal {
	v := brokersim.Dec(decimal.RequireFromString(s))
	return &v
}

// The fee check in the evening, New York time, on a host whose clock
// reads UTC (spec "Cash ledger": rows are dated by the broker's trade
// date): from 8 PM Eastern the UTC date is already tomorrow's, and the
// check refused its own today as "after today". Found by the generated
// trading days' evening operation (tradingday seed 5).
func TestCheckInTheEvening(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := b.sim.Clock.Now().UTC()
	et := now.In(market.NewYork)
	evening := time.Date(et.Year(), et.Month(), et.Day(), 21, 0, 0, 0, market.NewYork)
	if !evening.After(now) {
		evening = evening.AddDate(0, 0, 1)
	}
	b.sim.Advance(evening.Sub(now))
	now = b.sim.Clock.Now().UTC()
	if now.Day() == now.In(market.NewYork).Day() {
		t.Fatalf("%s: want an hour when the UTC date is ahead of New York's", now)
	}
	r, _, err := ledger.Check(t.Context(), b.client, b.store, account, now, locator.FeeWindow{Days: 1}, time.Hour)
	if err != nil {
		t.Fatalf("fee check at %s (%s in New York): %v", now.Format(time.RFC3339), now.In(market.NewYork).Format(time.Kitchen), err)
	}
	if !r.Today.Equal(ledger.TradeDate(now)) {
		t.Errorf("report of %s, want today %s", r.Today.Format(time.DateOnly), ledger.TradeDate(now).Format(time.DateOnly))
	}
}

// creditedBack is a refund case's day: 300 HTBX located, then all of
// them credited back 10 s later.
func creditedBack(t *testing.T, b *testBundle) time.Time {
	b.fill(t, "HTBX", 300)
	b.sim.Advance(10 * time.Second)
	b.creditBack(t, "HTBX", 300)
	return b.sim.Clock.Now()
}
