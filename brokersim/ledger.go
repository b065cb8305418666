package brokersim

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// cashLedger holds every account's cash-ledger rows in entry order.
type cashLedger struct {
	rows []cashRow
	seq  int
}

// cashRow is one ledger entry; date is the calendar day (midnight UTC) the
// service stamps on it.
type cashRow struct {
	account  string
	date     time.Time
	cashType string
	deposit  decimal.Decimal
	withdraw decimal.Decimal
	note     string
	seq      int
}

// cashRowJSON is the spec's cash ledger row.
type cashRowJSON struct {
	AccountID string  `json:"accountId"`
	CashType  string  `json:"cashType"`
	Currency  string  `json:"currency"`
	Deposit   Decimal `json:"deposit"`
	Withdraw  Decimal `json:"withdraw"`
	EntryDate string  `json:"entryDate"`
	Note      string  `json:"note"`
}

func newCashLedger(sc Scenario, now time.Time) cashLedger {
	var l cashLedger
	for _, r := range sc.Ledger {
		if err := l.addSeed(r); err != nil {
			panic("brokersim: scenario ledger row: " + err.Error()) // Validate checked the dates
		}
	}
	types := []string{"General", "Software & Data", "Margin", "Dividend", "Locate & Borrow Charge"}
	for _, g := range sc.SyntheticLedger {
		first := tradeDate(now).AddDate(0, 0, -g.Days)
		n := 0
		for d := range g.Days {
			day := first.AddDate(0, 0, d)
			for range g.PerDay {
				n++
				amt := decimal.New(int64(100+n%997), -2)
				t := types[n%len(types)]
				r := cashRow{account: g.Account, date: day, cashType: t, note: fmt.Sprintf("synthetic row %d", n)}
				if t == "Dividend" || (t == "General" && n%2 == 0) {
					r.deposit = amt
				} else {
					r.withdraw = amt
				}
				l.add(r)
			}
		}
	}
	return l
}

// add appends a row, keeping rows ordered by date and then by arrival.
func (l *cashLedger) add(r cashRow) {
	l.seq++
	r.seq = l.seq
	r.date = time.Date(r.date.Year(), r.date.Month(), r.date.Day(), 0, 0, 0, 0, time.UTC)
	i := sort.Search(len(l.rows), func(i int) bool { return l.rows[i].date.After(r.date) })
	l.rows = append(l.rows, cashRow{})
	copy(l.rows[i+1:], l.rows[i:])
	l.rows[i] = r
}

func (l *cashLedger) addSeed(r ScenarioCashRow) error {
	d, err := time.Parse(time.DateOnly, r.Date)
	if err != nil {
		return fmt.Errorf("ledger row date %q: want YYYY-MM-DD", r.Date)
	}
	if r.Deposit.IsZero() == r.Withdraw.IsZero() || r.Deposit.IsNegative() || r.Withdraw.IsNegative() {
		return fmt.Errorf("ledger row %s %q: exactly one of deposit and withdraw must be positive", r.Date, r.CashType)
	}
	if r.Account == "" || r.CashType == "" {
		return fmt.Errorf("ledger row %s: account and cashType are required", r.Date)
	}
	l.add(cashRow{account: r.Account, date: d, cashType: r.CashType, deposit: r.Deposit.Decimal, withdraw: r.Withdraw.Decimal, note: r.Note})
	return nil
}

// tradeDate is the Eastern trading day of t, as a UTC midnight.
func tradeDate(t time.Time) time.Time {
	et := t.In(eastern)
	return time.Date(et.Year(), et.Month(), et.Day(), 0, 0, 0, 0, time.UTC)
}

// handleCashLedger serves GET .../cash-transactions/start-date/{startDate}
// (spec: "Cash ledger"): window [startDate, startDate+numberOfDays), oldest
// first, offset/limit paging with limit clamped to 10000.
func (s *Sim) handleCashLedger(c *call) reply {
	start, err := time.Parse(time.DateOnly, c.r.PathValue("startDate"))
	if err != nil {
		return notFoundText()
	}
	days, offset, limit := windowParams(c.r.URL.Query(), 10000)
	out := struct {
		CashHistory []cashRowJSON `json:"cashHistory"`
		Pagination  pagination    `json:"pagination"`
	}{CashHistory: []cashRowJSON{}, Pagination: pagination{CurrentLimit: limit, CurrentOffset: offset}}

	a := s.ownedAccount(c.key, c.r.PathValue("accountId"))
	if a == nil || a.paper || days <= 0 {
		return jsonReply(http.StatusOK, out)
	}
	end := start.AddDate(0, 0, days)
	total := 0
	for _, r := range s.cash.rows {
		if r.account != a.id || r.date.Before(start) || !r.date.Before(end) {
			continue
		}
		if total >= offset && len(out.CashHistory) < limit {
			out.CashHistory = append(out.CashHistory, cashRowJSON{
				AccountID: r.account, CashType: r.cashType, Currency: "USD",
				Deposit: Dec(r.deposit), Withdraw: Dec(r.withdraw),
				EntryDate: r.date.Format(dateMidnight), Note: r.note,
			})
		}
		total++
	}
	out.Pagination.TotalRecords = total
	return jsonReply(http.StatusOK, out)
}

// pagination is the paging envelope of the ledger and order history.
type pagination struct {
	CurrentLimit  int `json:"currentLimit"`
	CurrentOffset int `json:"currentOffset"`
	TotalRecords  int `json:"totalRecords"`
}

// windowParams reads numberOfDays (default 30, at most 365), offset (default
// 0) and limit (default 100, clamped to maxLimit); unparsable values take
// their defaults, as the service ignores what it cannot read.
func windowParams(q url.Values, maxLimit int) (days, offset, limit int) {
	intParam := func(name string, def int) int {
		v, err := strconv.Atoi(q.Get(name))
		if err != nil {
			return def
		}
		return v
	}
	days = min(intParam("numberOfDays", 30), 365)
	offset = max(intParam("offset", 0), 0)
	limit = intParam("limit", 100)
	if limit <= 0 {
		limit = 100
	}
	return days, offset, min(limit, maxLimit)
}
