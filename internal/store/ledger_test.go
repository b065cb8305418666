package store_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/internal/store"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Spec "Cash ledger": rows carry no id; the store keeps one row per dedupe
// key, so inserting the same rows twice stores them once, and lists them by
// account and date range, oldest first.
func TestCashEntriesInsertIfAbsent(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		rows := []store.CashEntry{
			{Key: "k1", Account: "LV100001", EntryDate: day("2026-11-12"), CashType: "Locate & Borrow Charge", Currency: "USD", Withdraw: decimal.RequireFromString("3.10"), Note: "Borrow charge HTBX"},
			{Key: "k2", Account: "LV100001", EntryDate: day("2026-11-12"), CashType: "Locate & Borrow Charge", Currency: "USD", Withdraw: decimal.RequireFromString("3.10"), Note: "Borrow charge HTBX", Occurrence: 1},
			{Key: "k3", Account: "LV100001", EntryDate: day("2026-11-18"), CashType: "Interest Adjustment", Currency: "USD", Deposit: decimal.RequireFromString("0.87")},
			{Key: "k4", Account: "LV300001", EntryDate: day("2026-11-12"), CashType: "General", Currency: "USD", Deposit: decimal.RequireFromString("1")},
		}
		for i, want := range []int{4, 0} {
			n, err := b.store.InsertCashEntries(ctx, rows)
			if err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Errorf("insert #%d: %d new rows, want %d", i+1, n, want)
			}
		}
		for _, tc := range []struct {
			name     string
			from, to time.Time
			keys     []string
		}{
			{"all", time.Time{}, time.Time{}, []string{"k1", "k2", "k3"}},
			{"from", day("2026-11-13"), time.Time{}, []string{"k3"}},
			{"to is exclusive", day("2026-11-01"), day("2026-11-18"), []string{"k1", "k2"}},
			{"empty", day("2026-11-19"), day("2026-11-30"), nil},
		} {
			got, err := b.store.CashEntries(ctx, "LV100001", tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, e := range got {
				keys = append(keys, e.Key)
			}
			if len(keys) != len(tc.keys) {
				t.Errorf("%s: keys %v, want %v", tc.name, keys, tc.keys)
				continue
			}
			for i := range keys {
				if keys[i] != tc.keys[i] {
					t.Errorf("%s: keys %v, want %v", tc.name, keys, tc.keys)
					break
				}
			}
		}
		got, err := b.store.CashEntries(ctx, "LV100001", time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		e := got[2]
		if e.CashType != "Interest Adjustment" || !e.Deposit.Equal(decimal.RequireFromString("0.87")) || !e.Withdraw.IsZero() ||
			!e.EntryDate.Equal(day("2026-11-18")) || !e.SyncedAt.Equal(b.clock.Now()) || got[1].Occurrence != 1 {
			t.Errorf("read back %+v", e)
		}
		if _, err := b.store.InsertCashEntries(ctx, []store.CashEntry{{Account: "LV100001", EntryDate: day("2026-11-12")}}); err == nil {
			t.Error("an entry without a key was stored")
		}
	})
}

// The migration survives a reopen: the ledger rows are still there and the
// key is still unique.
func TestCashEntriesReopen(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *testBundle) {
		ctx := t.Context()
		row := store.CashEntry{Key: "k1", Account: "LV100001", EntryDate: day("2026-11-12"), CashType: "Locate Fees", Withdraw: decimal.RequireFromString("4.5")}
		if _, err := b.store.InsertCashEntries(ctx, []store.CashEntry{row}); err != nil {
			t.Fatal(err)
		}
		b.store.Close()
		s := mustOpen(t, b.dsn, b.clock)
		n, err := s.InsertCashEntries(ctx, []store.CashEntry{row})
		if err != nil || n != 0 {
			t.Fatalf("insert after reopen: %d, %v", n, err)
		}
		got, err := s.CashEntries(ctx, "LV100001", time.Time{}, time.Time{})
		if err != nil || len(got) != 1 || got[0].Withdraw.String() != "4.5" {
			t.Fatalf("after reopen: %+v, %v", got, err)
		}
	})
}
