package brokerclient_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/simtest"
)

// ledgerCall is one logged ledger request: its start date and query.
type ledgerCall struct {
	Start        string
	NumberOfDays string
	Offset       string
	Limit        string
}

// ledgerCalls reads the ledger requests out of the simulator's log.
func ledgerCalls(t *testing.T, b *simtest.Bundle) []ledgerCall {
	t.Helper()
	var out []ledgerCall
	for _, r := range loggedRequests(b, "GET", "/cash-transactions/start-date/") {
		q, err := url.ParseQuery(r.Query)
		if err != nil {
			t.Fatal(err)
		}
		offset := q.Get("offset")
		if offset == "" {
			offset = "0"
		}
		out = append(out, ledgerCall{
			Start:        r.Path[strings.LastIndex(r.Path, "/")+1:],
			NumberOfDays: q.Get("numberOfDays"), Offset: offset, Limit: q.Get("limit"),
		})
	}
	return out
}

// collect walks Entries to the end.
func collect(t *testing.T, seq func(func(brokerclient.CashEntry, error) bool)) []brokerclient.CashEntry {
	t.Helper()
	var out []brokerclient.CashEntry
	for e, err := range seq {
		if err != nil {
			t.Fatalf("entries: %v", err)
		}
		out = append(out, e)
	}
	return out
}

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// checkSyntheticRows checks the 12,000 synthetic rows of LV300001 came back
// once each, oldest first.
func checkSyntheticRows(t *testing.T, rows []brokerclient.CashEntry) {
	t.Helper()
	if len(rows) != 12000 {
		t.Fatalf("%d rows, want 12000 (400 days × 30)", len(rows))
	}
	seen := map[string]bool{}
	for i, r := range rows {
		if seen[r.Note] {
			t.Fatalf("row %q yielded twice", r.Note)
		}
		seen[r.Note] = true
		if i > 0 && r.EntryDate.Before(rows[i-1].EntryDate.Time) {
			t.Fatalf("row %d dated %v before row %d's %v", i, r.EntryDate, i-1, rows[i-1].EntryDate)
		}
	}
	for n := 1; n <= 12000; n++ {
		if !seen[fmt.Sprintf("synthetic row %d", n)] {
			t.Fatalf("synthetic row %d missing", n)
		}
	}
	if first, last := rows[0].EntryDate.Format(time.DateOnly), rows[len(rows)-1].EntryDate.Format(time.DateOnly); first != "2025-10-21" || last != "2026-11-24" {
		t.Errorf("rows span %s..%s, want 2025-10-21..2026-11-24", first, last)
	}
}

// Spec: "Cash ledger" (window [startDate, startDate+numberOfDays); raise
// offset by limit while offset + rows < totalRecords) and Limits, "Other
// bounds" (window at most 365 days; page size at most 10000, larger values
// clamped). LV300001 holds 12,000 rows over 400 days: the walk splits the
// range into 365 + 35 days and, asked for pages of 20,000, follows the
// clamped limit the service echoes, so it still gets every row.
func TestLedgerEntriesSplitWindowAndClampedLimit(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live2)

	rows := collect(t, c.Ledger.Entries(t.Context(), "LV300001", day("2025-10-21"), day("2026-11-25"), &brokerclient.EntriesOptions{PageSize: 20000}))
	checkSyntheticRows(t, rows)
	want := []ledgerCall{
		{Start: "2025-10-21", NumberOfDays: "365", Offset: "0", Limit: "20000"},
		{Start: "2025-10-21", NumberOfDays: "365", Offset: "10000", Limit: "20000"},
		{Start: "2026-10-21", NumberOfDays: "35", Offset: "0", Limit: "20000"},
	}
	if diff := cmp.Diff(want, ledgerCalls(t, b)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// Spec: "Cash ledger" paging, with Entries' default page of 1000 rows.
func TestLedgerEntriesDefaultPageSize(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live2)

	rows := collect(t, c.Ledger.Entries(t.Context(), "LV300001", day("2025-10-21"), day("2026-11-25"), nil))
	checkSyntheticRows(t, rows)
	var want []ledgerCall
	for off := 0; off <= 10000; off += 1000 {
		want = append(want, ledgerCall{Start: "2025-10-21", NumberOfDays: "365", Offset: fmt.Sprint(off), Limit: "1000"})
	}
	want = append(want,
		ledgerCall{Start: "2026-10-21", NumberOfDays: "35", Offset: "0", Limit: "1000"},
		ledgerCall{Start: "2026-10-21", NumberOfDays: "35", Offset: "1000", Limit: "1000"})
	if diff := cmp.Diff(want, ledgerCalls(t, b)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// Spec: "Cash ledger": a window of at most 365 days is one request window;
// the end date is exclusive.
func TestLedgerEntriesShortWindow(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live2)
	rows := collect(t, c.Ledger.Entries(t.Context(), "LV300001", day("2026-10-25"), day("2026-11-24"), nil))
	if len(rows) != 30*30 {
		t.Errorf("%d rows, want 900", len(rows))
	}
	if last := rows[len(rows)-1].EntryDate.Format(time.DateOnly); last != "2026-11-23" {
		t.Errorf("last row dated %s, want 2026-11-23 (end is exclusive)", last)
	}
	want := []ledgerCall{{Start: "2026-10-25", NumberOfDays: "30", Offset: "0", Limit: "1000"}}
	if diff := cmp.Diff(want, ledgerCalls(t, b)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// Spec: Resources, "Cash ledger row" (cashType free-form, unknown labels are
// new types; exactly one of deposit and withdraw non-zero; entryDate a date
// at midnight).
func TestLedgerEntryFields(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	rows := collect(t, c.Ledger.Entries(t.Context(), "LV100001", day("2026-11-01"), day("2026-12-01"), nil))
	entry := func(date string, typ brokerclient.CashType, deposit, withdraw, note string) brokerclient.CashEntry {
		return brokerclient.CashEntry{
			AccountID: "LV100001", CashType: typ, Currency: "USD", Deposit: mustDec(deposit), Withdraw: mustDec(withdraw),
			EntryDate: mustParseTime(t, date+"T00:00:00"), Note: note,
		}
	}
	want := []brokerclient.CashEntry{
		entry("2026-11-02", brokerclient.CashTypeGeneral, "100000", "0", "Initial funding"),
		entry("2026-11-05", brokerclient.CashTypeSoftwareData, "0", "29.95", "Market data subscription"),
		entry("2026-11-10", brokerclient.CashTypeDividend, "24", "0", "MSFT cash dividend"),
		entry("2026-11-12", brokerclient.CashTypeLocateBorrowCharge, "0", "3.10", "Borrow charge HTBX"),
		entry("2026-11-12", brokerclient.CashTypeLocateBorrowCharge, "0", "3.10", "Borrow charge HTBX"),
		entry("2026-11-16", brokerclient.CashTypeMargin, "0", "12.40", "Margin interest"),
		entry("2026-11-18", "Interest Adjustment", "0.87", "0", "Credit interest adjustment"),
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	if !rows[0].EntryDate.DateOnly {
		t.Error("entryDate not marked date-only")
	}
	if rows[6].CashType.Known() || !rows[5].CashType.Known() {
		t.Error("CashType.Known")
	}
	if !rows[0].Amount().Equal(mustDec("100000")) || !rows[1].Amount().Equal(mustDec("-29.95")) {
		t.Errorf("Amount: %v, %v", rows[0].Amount(), rows[1].Amount())
	}
}

// Spec: Resources, "Cash ledger row" and the envelope's pagination object,
// decoded from a recorded payload.
func TestLedgerDecodeGolden(t *testing.T) {
	t.Parallel()
	c := payloadClient(t, map[string]string{
		"GET /v1/api/accounts/LV100001/cash-transactions/start-date/{date}": "ledger_page.json",
	})
	page, _, err := c.Ledger.List(t.Context(), "LV100001", day("2026-11-25"), &brokerclient.CashListOptions{NumberOfDays: 1, Limit: 20000})
	if err != nil {
		t.Fatal(err)
	}
	when := mustParseTime(t, "2026-11-25T00:00:00")
	want := &brokerclient.CashPage{
		CashHistory: []brokerclient.CashEntry{
			{AccountID: "LV100001", CashType: brokerclient.CashTypeLocateFees, Currency: "USD", Deposit: mustDec("0"), Withdraw: mustDec("7.5"), EntryDate: when, Note: "Locate fee HTBX 500 shares @ 0.015"},
			{AccountID: "LV100001", CashType: brokerclient.CashTypeLocateFees, Currency: "USD", Deposit: mustDec("1.5"), Withdraw: mustDec("0"), EntryDate: when, Note: "Locate credit-back HTBX 100 shares"},
			{AccountID: "LV100001", CashType: "Interest Adjustment", Currency: "USD", Deposit: mustDec("0.87"), Withdraw: mustDec("0"), EntryDate: when, Note: "Credit interest adjustment"},
		},
		Pagination: brokerclient.CashPagination{CurrentLimit: 10000, CurrentOffset: 0, TotalRecords: 3},
	}
	if diff := cmp.Diff(want, page); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
	var net = mustDec("0")
	for _, e := range page.CashHistory {
		net = net.Add(e.Amount())
	}
	if !net.Equal(mustDec("-5.13")) {
		t.Errorf("net of the page = %v, want -5.13", net)
	}
}

// Spec: "Cash ledger": "A locate fee row may appear later than the locate
// fill"; "Locate Fees (charge or credit)". The fee of an accepted quote
// (500 × 0.015 = 7.50) shows up once the simulator's fee delay has passed.
func TestLedgerLocateFeeAfterAccept(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	ctx := t.Context()
	ack, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 500})
	if err != nil {
		t.Fatal(err)
	}
	b.Advance(3 * time.Second)
	if _, _, err := c.Locates.Accept(ctx, "LV100001", ack.QuoteReqID); err != nil {
		t.Fatal(err)
	}
	today := day("2026-11-25")
	fees := func() []brokerclient.CashEntry {
		var out []brokerclient.CashEntry
		for _, e := range collect(t, c.Ledger.Entries(ctx, "LV100001", today, today.AddDate(0, 0, 1), nil)) {
			if e.CashType == brokerclient.CashTypeLocateFees {
				out = append(out, e)
			}
		}
		return out
	}
	if got := fees(); len(got) != 0 {
		t.Logf("fee already booked right after the accept: %+v", got)
	}
	b.Advance(6 * time.Second)
	got := fees()
	if len(got) != 1 || !got[0].Amount().Equal(mustDec("-7.5")) || !strings.Contains(got[0].Note, ack.QuoteReqID) {
		t.Errorf("locate fee rows = %+v, want one withdrawal of 7.50 naming %s", got, ack.QuoteReqID)
	}
}

// Spec: "HTTP status map" ("Cash ledger: account not owned or non-existent:
// 200, empty envelope"); "Paper versus live" (cashHistory empty).
func TestLedgerEmptyAnswers(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	cases := []struct {
		name    string
		key     simtest.Key
		account string
	}{
		{"account of another key", b.Live, "LV300001"},
		{"unknown account", b.Live, "LV999999"},
		{"paper", b.Paper, "PP200001"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := b.Client(t, tc.key)
			page, _, err := c.Ledger.List(t.Context(), tc.account, day("2026-01-01"), &brokerclient.CashListOptions{NumberOfDays: 365})
			if err != nil {
				t.Fatal(err)
			}
			if page.CashHistory == nil || len(page.CashHistory) != 0 || page.Pagination.TotalRecords != 0 {
				t.Errorf("page = %+v, want an empty non-nil list and totalRecords 0", page)
			}
			if rows := collect(t, c.Ledger.Entries(t.Context(), tc.account, day("2026-01-01"), day("2026-11-25"), nil)); len(rows) != 0 {
				t.Errorf("%d rows, want none", len(rows))
			}
		})
	}
}

// Spec: Limits, "Other bounds" (window at most 365 days); bad input is
// refused before the wire, and an empty range sends nothing.
func TestLedgerValidationSendsNothing(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	ctx := t.Context()
	firstErr := func(seq func(func(brokerclient.CashEntry, error) bool)) (n int, err error) {
		for _, e := range seq {
			if e != nil {
				return n, e
			}
			n++
		}
		return n, nil
	}
	cases := []struct {
		name string
		err  func() error
	}{
		{"entries: end before start", func() error {
			_, err := firstErr(c.Ledger.Entries(ctx, "LV100001", day("2026-11-25"), day("2026-11-01"), nil))
			return err
		}},
		{"entries: empty account", func() error {
			_, err := firstErr(c.Ledger.Entries(ctx, "", day("2026-11-01"), day("2026-11-25"), nil))
			return err
		}},
		{"entries: zero start", func() error {
			_, err := firstErr(c.Ledger.Entries(ctx, "LV100001", time.Time{}, day("2026-11-25"), nil))
			return err
		}},
		{"entries: negative page size", func() error {
			_, err := firstErr(c.Ledger.Entries(ctx, "LV100001", day("2026-11-01"), day("2026-11-25"), &brokerclient.EntriesOptions{PageSize: -1}))
			return err
		}},
		{"list: window of 366 days", func() error {
			_, _, err := c.Ledger.List(ctx, "LV100001", day("2026-01-01"), &brokerclient.CashListOptions{NumberOfDays: 366})
			return err
		}},
		{"list: negative offset", func() error {
			_, _, err := c.Ledger.List(ctx, "LV100001", day("2026-01-01"), &brokerclient.CashListOptions{Offset: -1})
			return err
		}},
		{"list: account with a slash", func() error {
			_, _, err := c.Ledger.List(ctx, "LV1/x", day("2026-01-01"), nil)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); !errors.Is(err, brokercode.ErrInput) {
				t.Errorf("err = %v, want ErrInput", err)
			}
		})
	}
	if n, err := firstErr(c.Ledger.Entries(ctx, "LV100001", day("2026-11-25"), day("2026-11-25"), nil)); n != 0 || err != nil {
		t.Errorf("empty range: %d rows, err %v; want nothing", n, err)
	}
	if reqs := b.Sim.Requests(); len(reqs) != 0 {
		t.Errorf("%d requests sent, want none", len(reqs))
	}
}

// Entries reads pages lazily: stopping the loop early sends no more requests.
func TestLedgerEntriesStopEarly(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live2)
	n := 0
	for _, err := range c.Ledger.Entries(t.Context(), "LV300001", day("2025-10-21"), day("2026-11-25"), &brokerclient.EntriesOptions{PageSize: 100}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 150 {
			break
		}
	}
	if calls := ledgerCalls(t, b); len(calls) != 2 {
		t.Errorf("%d ledger requests for 150 rows in pages of 100, want 2", len(calls))
	}
}
