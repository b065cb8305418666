package brokersim_test

import (
	"fmt"
	"testing"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

type ledgerPage struct {
	CashHistory []struct {
		AccountID string            `json:"accountId"`
		CashType  string            `json:"cashType"`
		Currency  string            `json:"currency"`
		Deposit   brokersim.Decimal `json:"deposit"`
		Withdraw  brokersim.Decimal `json:"withdraw"`
		EntryDate string            `json:"entryDate"`
		Note      string            `json:"note"`
	} `json:"cashHistory"`
	Pagination struct {
		CurrentLimit  int `json:"currentLimit"`
		CurrentOffset int `json:"currentOffset"`
		TotalRecords  int `json:"totalRecords"`
	} `json:"pagination"`
}

// Spec: "Cash ledger" — window [startDate, startDate+numberOfDays), oldest
// first, offset/limit paging, limit clamped to 10000, exactly one of
// deposit/withdraw non-zero, foreign or unknown accounts an empty envelope.
func TestCashLedger(t *testing.T) {
	t.Parallel()
	b := simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false }))
	get := func(key simtest.Key, acct, start, query string) (int, ledgerPage) {
		t.Helper()
		r := b.Do(t, key, "GET", fmt.Sprintf("/v1/api/accounts/%s/cash-transactions/start-date/%s%s", acct, start, query), nil)
		var p ledgerPage
		if r.Status == 200 {
			r.JSON(t, &p)
		}
		return r.Status, p
	}

	t.Run("window and order", func(t *testing.T) {
		_, p := get(b.Live, "LV100001", "2026-11-01", "")
		if n := len(p.CashHistory); n != 7 || p.Pagination.TotalRecords != 7 {
			t.Fatalf("rows %d total %d, want 7 and 7", n, p.Pagination.TotalRecords)
		}
		for i, r := range p.CashHistory {
			if i > 0 && r.EntryDate < p.CashHistory[i-1].EntryDate {
				t.Errorf("row %d out of order: %s after %s", i, r.EntryDate, p.CashHistory[i-1].EntryDate)
			}
			if r.Deposit.IsZero() == r.Withdraw.IsZero() {
				t.Errorf("row %d: deposit %s withdraw %s, want exactly one non-zero", i, r.Deposit, r.Withdraw)
			}
			if len(r.EntryDate) != len("2026-11-02T00:00:00") || r.EntryDate[10:] != "T00:00:00" {
				t.Errorf("entryDate %q, want a midnight date", r.EntryDate)
			}
		}
		// The window's end is exclusive: 2026-11-02 + 10 days stops before the 12th.
		_, p = get(b.Live, "LV100001", "2026-11-02", "?numberOfDays=10")
		if p.Pagination.TotalRecords != 3 {
			t.Errorf("10-day window: total %d, want 3", p.Pagination.TotalRecords)
		}
	})
	t.Run("paging and clamp", func(t *testing.T) {
		_, p := get(b.Live2, "LV300001", "2025-10-01", "?numberOfDays=365&limit=50000")
		if p.Pagination.CurrentLimit != 10000 || len(p.CashHistory) != 10000 {
			t.Fatalf("limit %d rows %d, want both clamped to 10000", p.Pagination.CurrentLimit, len(p.CashHistory))
		}
		total := p.Pagination.TotalRecords
		_, p2 := get(b.Live2, "LV300001", "2025-10-01", "?numberOfDays=365&limit=10000&offset=10000")
		if p2.Pagination.CurrentOffset != 10000 || len(p2.CashHistory) != total-10000 {
			t.Errorf("second page: offset %d rows %d, want 10000 and %d", p2.Pagination.CurrentOffset, len(p2.CashHistory), total-10000)
		}
		_, def := get(b.Live2, "LV300001", "2025-10-01", "")
		if def.Pagination.CurrentLimit != 100 || len(def.CashHistory) != 100 {
			t.Errorf("default limit %d rows %d, want 100", def.Pagination.CurrentLimit, len(def.CashHistory))
		}
	})
	t.Run("window above 365 days is cut to 365", func(t *testing.T) {
		_, a := get(b.Live2, "LV300001", "2025-10-01", "?numberOfDays=400&limit=1")
		_, c := get(b.Live2, "LV300001", "2025-10-01", "?numberOfDays=365&limit=1")
		if a.Pagination.TotalRecords != c.Pagination.TotalRecords {
			t.Errorf("400-day window total %d, 365-day %d: want equal", a.Pagination.TotalRecords, c.Pagination.TotalRecords)
		}
	})
	for _, tc := range []struct {
		name string
		key  simtest.Key
		acct string
	}{
		{"foreign account", b.Live, "LV300001"},
		{"unknown account", b.Live, "ZZ999999"},
		{"paper account", b.Paper, "PP200001"},
	} {
		t.Run(tc.name+" is an empty envelope", func(t *testing.T) {
			st, p := get(tc.key, tc.acct, "2025-01-01", "?numberOfDays=365")
			if st != 200 || len(p.CashHistory) != 0 || p.Pagination.TotalRecords != 0 {
				t.Errorf("status %d rows %d total %d, want 200, 0, 0", st, len(p.CashHistory), p.Pagination.TotalRecords)
			}
		})
	}
	t.Run("invalid startDate is 404 text", func(t *testing.T) {
		if st, _ := get(b.Live, "LV100001", "yesterday", ""); st != 404 {
			t.Errorf("status %d, want 404", st)
		}
	})
	t.Run("admin rows are served", func(t *testing.T) {
		r := b.Do(t, simtest.Key{}, "POST", "/_sim/ledger", `[{"account":"LV100001","date":"2026-11-20","cashType":"Locate Fees","withdraw":4.5,"note":"unexplained"}]`)
		if r.Status != 204 {
			t.Fatalf("admin ledger: %d %s", r.Status, r.Body)
		}
		_, p := get(b.Live, "LV100001", "2026-11-20", "?numberOfDays=1")
		if len(p.CashHistory) != 1 || p.CashHistory[0].Note != "unexplained" || p.CashHistory[0].CashType != "Locate Fees" {
			t.Errorf("got %+v", p.CashHistory)
		}
		bad := b.Do(t, simtest.Key{}, "POST", "/_sim/ledger", `[{"account":"LV100001","date":"2026-11-20","cashType":"General","deposit":1,"withdraw":1}]`)
		if bad.Status != 400 {
			t.Errorf("row with both amounts: status %d, want 400", bad.Status)
		}
	})
}
