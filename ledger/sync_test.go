package ledger_test

import (
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

const account = "LV100001"

type testBundle struct {
	sim    *simtest.Bundle
	store  *store.Store
	client *brokerclient.Client // the Live key: LV100001, LV100002
}

// setup starts the simulator on a fake clock run as virtual time (the
// client's pacing sleeps on it), a store on a temp file on the same clock,
// and a client of the Live key.
func setup(t *testing.T, opts ...simtest.Option) *testBundle {
	t.Helper()
	sim := simtest.New(t, opts...)
	b := &testBundle{sim: sim, store: mustStore(t, sim), client: sim.Client(t, sim.Live)}
	sim.RunClock(t)
	return b
}

func mustStore(t *testing.T, sim *simtest.Bundle) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "locator.db"), sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func today(b *testBundle) time.Time { return ledger.TradeDate(b.sim.Clock.Now()) }

// syncToday syncs the trade date of the clock's reading.
func (b *testBundle) syncToday(t *testing.T) locator.SyncResult {
	t.Helper()
	d := today(b)
	res, err := ledger.Sync(t.Context(), b.client, b.store, account, d, d.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fill locates qty shares of symbol through the broker by hand (quote,
// wait for the offer, accept) and records the filled workflow in the store
// as the engine would, with the quoteReqID sent.
func (b *testBundle) fill(t *testing.T, symbol string, qty int64) *workflow.Workflow {
	t.Helper()
	return b.fillSide(t, symbol, qty, "")
}

// fillSide is fill accepting the row quoteReqID+suffix: ".SU" takes the
// SingleUse side of a Reg SHO pair (spec "Short locates" rule 2).
func (b *testBundle) fillSide(t *testing.T, symbol string, qty int64, suffix string) *workflow.Workflow {
	t.Helper()
	ctx := t.Context()
	quote := uuid.NewString()
	id := quote + suffix
	if _, _, err := b.client.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: account, Symbol: symbol, Quantity: qty, QuoteReqID: quote}); err != nil {
		t.Fatal(err)
	}
	b.sim.Advance(3 * time.Second) // the offer settles 1.5 to 3 s after the quote
	row := b.historyRow(t, id)
	if row.LocateStatus != brokercode.LocateStatusOffered {
		t.Fatalf("quote %s: status %d %q, want 65", id, row.LocateStatus, row.TextValue())
	}
	if _, _, err := b.client.Locates.Accept(ctx, account, id); err != nil {
		t.Fatal(err)
	}
	row = b.historyRow(t, id)
	if row.LocateStatus != brokercode.LocateStatusFilled {
		t.Fatalf("accept %s: status %d, want 50", id, row.LocateStatus)
	}
	w := &workflow.Workflow{
		ID: "wf-" + quote, Kind: states.Locate, Account: account, Symbol: symbol, Requested: qty, Quantity: qty,
		QuoteReqID: quote, State: states.Filled, AcceptedID: id, Price: row.LocatePrice,
		LocateType: string(row.Type()), Policy: workflow.Policy{AutoAccept: true},
		Legs: map[string]workflow.Leg{id: {Status: 50, Price: row.LocatePrice, Type: row.LocateType, Shares: qty}},
	}
	if err := b.store.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// creditBack credits qty Locate shares of symbol back through the broker,
// lets it clear, and records the credited workflow.
func (b *testBundle) creditBack(t *testing.T, symbol string, qty int64) *workflow.Workflow {
	t.Helper()
	return b.creditBackType(t, symbol, qty, brokercode.LocateTypeLocate)
}

// creditBackType is creditBack of the (symbol, typ) inventory row.
func (b *testBundle) creditBackType(t *testing.T, symbol string, qty int64, typ brokercode.LocateType) *workflow.Workflow {
	t.Helper()
	ctx := t.Context()
	id := uuid.NewString()
	if _, _, err := b.client.Locates.Sell(ctx, brokerclient.SellRequest{Account: account, Symbol: symbol, Quantity: qty, LocateType: typ, QuoteReqID: id}); err != nil {
		t.Fatal(err)
	}
	b.sim.Advance(11 * time.Second) // the credit clears 10 s after the sell
	row := b.historyRow(t, id)
	if row.LocateStatus != brokercode.LocateStatusFilled {
		t.Fatalf("credit-back %s: status %d %q, want 50", id, row.LocateStatus, row.TextValue())
	}
	w := &workflow.Workflow{
		ID: "wf-" + id, Kind: states.CreditBack, Account: account, Symbol: symbol, Requested: qty, Quantity: qty,
		QuoteReqID: id, State: states.Credited, LocateType: string(typ),
		Legs: map[string]workflow.Leg{id: {Status: 50, Price: row.LocatePrice, Type: row.LocateType, Shares: row.LocateShares}},
	}
	if err := b.store.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (b *testBundle) historyRow(t *testing.T, id string) brokerclient.HistoryRow {
	t.Helper()
	rows, _, err := b.client.Locates.History(t.Context(), account)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.QuoteReqID == id {
			return r
		}
	}
	t.Fatalf("no history row %s", id)
	return brokerclient.HistoryRow{}
}

// ledgerRequests returns the query strings of the cash-ledger requests sent.
func ledgerRequests(sim *simtest.Bundle) []url.Values {
	var out []url.Values
	for _, r := range sim.Sim.Requests() {
		if strings.Contains(r.Path, "/cash-transactions/") {
			q, _ := url.ParseQuery(r.Query)
			q.Set("path", r.Path)
			out = append(out, q)
		}
	}
	return out
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// Spec "Cash ledger": rows carry no id. Syncing twice stores each row once,
// the default scenario's two identical 2026-11-12 borrow charges on LV100001
// stay two rows, an unknown cashType is kept as is, and a third identical
// charge that appears later is stored as a third row.
func TestSyncIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	from, to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for i, want := range []locator.SyncResult{{Fetched: 7, Inserted: 7}, {Fetched: 7, Inserted: 0}} {
		got, err := ledger.Sync(ctx, b.client, b.store, account, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("sync #%d: %+v, want %+v", i+1, got, want)
		}
	}
	rows, err := b.store.CashEntries(ctx, account, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 {
		t.Fatalf("%d rows stored, want 7", len(rows))
	}
	var twins []store.CashEntry
	types := map[string]bool{}
	for _, r := range rows {
		types[r.CashType] = true
		if r.EntryDate.Format(time.DateOnly) == "2026-11-12" {
			twins = append(twins, r)
		}
	}
	if len(twins) != 2 || twins[0].Key == twins[1].Key || twins[0].Occurrence != 0 || twins[1].Occurrence != 1 ||
		!twins[0].Withdraw.Equal(dec("3.10")) || twins[1].Note != "Borrow charge HTBX" {
		t.Errorf("the identical 2026-11-12 rows: %+v", twins)
	}
	if !types["Interest Adjustment"] {
		t.Errorf("unknown cashType dropped: %v", types)
	}

	// The broker's back office posts a third identical charge later.
	if err := b.sim.Sim.AddCashRows([]brokersim.ScenarioCashRow{{Account: account, Date: "2026-11-12", CashType: "Locate & Borrow Charge",
		Withdraw: brokersim.Dec(dec("3.10")), Note: "Borrow charge HTBX"}}); err != nil {
		t.Fatal(err)
	}
	got, err := ledger.Sync(ctx, b.client, b.store, account, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if got != (locator.SyncResult{Fetched: 8, Inserted: 1}) {
		t.Errorf("sync after a third twin: %+v, want 8 fetched, 1 inserted", got)
	}
	// A narrower window over the same days derives the same keys.
	got, err = ledger.Sync(ctx, b.client, b.store, account, time.Date(2026, 11, 12, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 13, 0, 0, 0, 0, time.UTC))
	if err != nil || got != (locator.SyncResult{Fetched: 3, Inserted: 0}) {
		t.Errorf("sync of 2026-11-12 alone: %+v, %v; want 3 fetched, 0 inserted", got, err)
	}
}

// Spec "Cash ledger" and "Other bounds": a window above 365 days is split,
// and a window of more than 10000 rows is paged past the 10000 clamp by
// raising offset by the effective limit. LV300001 holds 12,000 synthetic
// rows over the 400 days before the session.
func TestSyncPagingAndLongWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	c := b.sim.Client(t, b.sim.Live2)
	end := today(b).AddDate(0, 0, 1)
	from := end.AddDate(0, 0, -401)
	for i, want := range []locator.SyncResult{{Fetched: 12000, Inserted: 12000}, {Fetched: 12000, Inserted: 0}} {
		got, err := ledger.Sync(ctx, c, b.store, "LV300001", from, end)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("sync #%d: %+v, want %+v", i+1, got, want)
		}
	}
	rows, err := b.store.CashEntries(ctx, "LV300001", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, r := range rows {
		keys[r.Key] = true
	}
	if len(rows) != 12000 || len(keys) != 12000 {
		t.Errorf("%d rows, %d distinct keys stored; want 12000", len(rows), len(keys))
	}
	// One sync: a 365-day window paged at offsets 0 and 10000 (10,950
	// rows), then the remaining 36 days in one page.
	var got []string
	for _, q := range ledgerRequests(b.sim)[:3] {
		got = append(got, q.Get("numberOfDays")+"/"+q.Get("offset")+"/"+q.Get("limit"))
	}
	if want := "365//10000 365/10000/10000 36//10000"; strings.Join(got, " ") != want {
		t.Errorf("ledger requests (days/offset/limit) %v, want %s", got, want)
	}
	for _, r := range b.sim.Sim.Requests() {
		if r.Status == http.StatusTooManyRequests {
			t.Errorf("429 on %s", r.Path)
		}
	}
}

// A row that lands while a window is being paged shifts the offsets; the
// window is read again, so no row is stored twice or skipped.
func TestSyncRowLandsMidWalk(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var once sync.Once
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := b.sim.Server.Client().Transport.RoundTrip(r)
		if err == nil && strings.Contains(r.URL.Path, "/cash-transactions/") && r.URL.Query().Get("offset") == "" {
			once.Do(func() {
				// Early in the window: every later row moves one place down.
				first := today(b).AddDate(0, 0, -400).Format(time.DateOnly)
				if err := b.sim.Sim.AddCashRows([]brokersim.ScenarioCashRow{{Account: "LV300001", Date: first, CashType: "Locate Fees",
					Withdraw: brokersim.Dec(dec("1.50")), Note: "late fee"}}); err != nil {
					t.Error(err)
				}
			})
		}
		return resp, err
	})
	c := b.sim.Client(t, b.sim.Live2, brokerclient.WithHTTPClient(&http.Client{Transport: rt}))
	end := today(b).AddDate(0, 0, 1)
	got, err := ledger.Sync(t.Context(), c, b.store, "LV300001", end.AddDate(0, 0, -401), end)
	if err != nil {
		t.Fatal(err)
	}
	if got != (locator.SyncResult{Fetched: 12001, Inserted: 12001}) {
		t.Errorf("sync: %+v, want 12001 fetched and inserted", got)
	}
	if n := len(ledgerRequests(b.sim)); n != 5 {
		t.Errorf("%d ledger requests, want 5 (the first window read twice)", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Bad input is refused before anything is sent (docs/design.md rule 8).
func TestSyncBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := today(b)
	for _, tc := range []struct {
		name     string
		account  string
		from, to time.Time
	}{
		{"empty account", "", d, d.AddDate(0, 0, 1)},
		{"no from", account, time.Time{}, d},
		{"to before from", account, d, d.AddDate(0, 0, -1)},
	} {
		_, err := ledger.Sync(t.Context(), b.client, b.store, tc.account, tc.from, tc.to)
		if !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("%s: %v, want an input error", tc.name, err)
		}
	}
	if n := len(b.sim.Sim.Requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}
