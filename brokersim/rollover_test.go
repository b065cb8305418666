package brokersim_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/locatorhq/locator/simtest"
)

// rollAccount is the live account's list row fields the rollover resets.
type rollAccount struct {
	Account          string      `json:"account"`
	TotalLocateCosts json.Number `json:"totalLocateCosts"`
	SharesTraded     int64       `json:"sharesTraded"`
	TotalCommissions json.Number `json:"totalCommissions"`
}

func rollAccountRow(t *testing.T, b *simtest.Bundle) rollAccount {
	t.Helper()
	var out struct{ Accounts []rollAccount }
	locGet(t, b, b.Live, "/v1/api/accounts", &out)
	for _, a := range out.Accounts {
		if a.Account == locAcct {
			return a
		}
	}
	t.Fatalf("no account %s", locAcct)
	return rollAccount{}
}

// rollPnL is the part of the P&L response the day fields live in.
type rollPnL struct {
	DayRealized  json.Number `json:"dayRealized"`
	SharesTraded int64       `json:"sharesTraded"`
	Pnl          []struct {
		PositionID     string      `json:"positionId"`
		Symbol         string      `json:"symbol"`
		DayRealizedPnl json.Number `json:"dayRealizedPnl"`
		RealizedPnl    json.Number `json:"realizedPnl"`
	} `json:"pnl"`
}

// TestRolloverNextTradingDay runs two trading days in one simulator: the
// fake clock crosses midnight in New York and the broker's day rolls over as
// the spec describes it.
//
//   - "Short locates": history is "for the trading day";
//   - "Locate types": located shares are reusable within the day they were
//     bought, so the next day starts with no inventory and a short needs a
//     new locate;
//   - "Orders": the book is "every order of today's session in any state,
//     plus still-working multi-day orders from earlier sessions", a single
//     order "today's orders only";
//   - "Cross-cutting conventions": clientOrderId is session-scoped (R114
//     only within the session);
//   - "Account": totalLocateCosts, sharesTraded and totalCommissions are
//     today's;
//   - "Profit and loss response" rules 3, 4 and 6: a lot closed yesterday
//     leaves pnl[], an open lot carries with day fields reset;
//     "Positions": the short carries overnight;
//   - "Cash ledger": the rows stay, each on its own entryDate.
func TestRolloverNextTradingDay(t *testing.T) {
	t.Parallel()
	b := locSim(t)

	// Day 1, Wednesday 2026-11-25 10:00 ET.
	locFilled(t, b, "HTBX", 500, "q1", "q1")
	if st := locOrder(t, b, "HTBX", "Sell", "Open", 300, "short1"); st != "Filled" {
		t.Fatalf("short: %s", st)
	}
	if st := locOrder(t, b, "AAPL", "Buy", "Open", 10, "long1"); st != "Filled" {
		t.Fatalf("long: %s", st)
	}
	if st := locOrder(t, b, "AAPL", "Sell", "Close", 10, "flat1"); st != "Filled" {
		t.Fatalf("close long: %s", st)
	}
	closed := len(closedRows(t, b, b.Live, locAcct))
	gtc := ordPlace(t, b, b.Live, locAcct, ordBody(map[string]any{"clientOrderId": "gtc1", "limitPrice": 1, "timeInForce": "GoodTillCancel"}))
	b.Advance(10 * time.Second) // the fee row posts
	if a := rollAccountRow(t, b); a.TotalLocateCosts.String() == "0" || a.SharesTraded != 320 {
		t.Fatalf("day 1 counters: %+v", a)
	}

	// Thursday 2026-11-26 10:00 ET, Thanksgiving: the day rolled over at
	// 8 PM to the next trading day, Friday 2026-11-27 (three rollovers'
	// worth of time would run three; one night runs one).
	b.Advance(24*time.Hour - 10*time.Second - 4*time.Second)

	t.Run("history and inventory", func(t *testing.T) {
		if rows := locHistory(t, b, b.Live, locAcct); len(rows) != 0 {
			t.Errorf("history of the new day shows %+v", rows)
		}
		locWantInventory(t, b, nil)
	})
	t.Run("order book", func(t *testing.T) {
		var ids []string
		for _, o := range ordBook(t, b, b.Live, locAcct) {
			ids = append(ids, o.ClientOrderID)
		}
		if !slices.Equal(ids, []string{gtc.ClientOrderID}) {
			t.Errorf("book %v, want only the working %s", ids, gtc.ClientOrderID)
		}
		if _, ok := ordGet(t, b, b.Live, locAcct, "short1"); ok {
			t.Error("yesterday's filled order is still found by id")
		}
		if _, ok := ordGet(t, b, b.Live, locAcct, gtc.ClientOrderID); !ok {
			t.Error("the working multi-day order is not found by id")
		}
		o := ordPlace(t, b, b.Live, locAcct, ordBody(map[string]any{"clientOrderId": "long1", "limitPrice": 1}))
		if o.OrderStatus == "Rejected" {
			t.Errorf("yesterday's clientOrderId reused: %s %s", o.OrderStatus, o.text())
		}
	})
	t.Run("today counters", func(t *testing.T) {
		if a := rollAccountRow(t, b); a.TotalLocateCosts.String() != "0" || a.SharesTraded != 0 || a.TotalCommissions.String() != "0" {
			t.Errorf("new day's counters: %+v", a)
		}
	})
	t.Run("positions carry", func(t *testing.T) {
		var short *posRow
		for _, p := range getPositions(t, b, b.Live, locAcct) {
			if p.Symbol == "HTBX" {
				short = &p
			}
		}
		if short == nil || short.Side != "Short" || short.Shares != 300 || short.DayOvernight != "Overnight" {
			t.Fatalf("HTBX position %+v, want the short 300 overnight", short)
		}
		var p rollPnL
		locGet(t, b, b.Live, "/v1/api/accounts/"+locAcct+"/pnl", &p)
		for _, r := range p.Pnl {
			if r.Symbol == "AAPL" || r.DayRealizedPnl.String() != "0" {
				t.Errorf("pnl row %+v: yesterday's closed lot, or a day field not reset", r)
			}
		}
		if p.DayRealized.String() != "0" || p.SharesTraded != 0 {
			t.Errorf("pnl dayRealized %s, sharesTraded %d: want 0", p.DayRealized, p.SharesTraded)
		}
		if n := len(closedRows(t, b, b.Live, locAcct)); n != closed {
			t.Errorf("%d closed positions, want the %d of yesterday", n, closed)
		}
	})
	t.Run("a short needs the new day's locate", func(t *testing.T) {
		// Friday 10:00 ET, the same trading day (Thanksgiving belongs to
		// it): the exchange trades, so the market orders execute (spec R78;
		// market.go).
		b.Advance(24 * time.Hour)
		if st := locOrder(t, b, "HTBX", "Sell", "Open", 100, "short2"); st != "Rejected" {
			t.Errorf("short on yesterday's locate: %s, want Rejected", st)
		}
		b.Advance(30 * time.Second) // the same-symbol quote spacing
		locFilled(t, b, "HTBX", 100, "q2", "q2")
		if st := locOrder(t, b, "HTBX", "Sell", "Open", 100, "short3"); st != "Filled" {
			t.Errorf("short on today's locate: %s", st)
		}
	})
	t.Run("cash ledger keeps its days", func(t *testing.T) {
		b.Advance(10 * time.Second)
		var out struct {
			CashHistory []locCashRow `json:"cashHistory"`
		}
		locGet(t, b, b.Live, "/v1/api/accounts/"+locAcct+"/cash-transactions/start-date/"+locToday+"?numberOfDays=3", &out)
		var dates []string
		for _, r := range out.CashHistory {
			if r.CashType == "Locate Fees" {
				dates = append(dates, r.EntryDate)
			}
		}
		if want := []string{"2026-11-25T00:00:00", "2026-11-27T00:00:00"}; !slices.Equal(dates, want) {
			t.Errorf("fee rows dated %v, want %v", dates, want)
		}
	})
}

// TestRolloverEveryNight: a fake clock jumping several days runs each
// night's rollover in time order with the other timed events, so a fee
// posted before the rollover stays on its day and the counters are the
// last day's.
func TestRolloverEveryNight(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	locFilled(t, b, "HTBX", 100, "q1", "q1")
	b.Advance(72 * time.Hour)
	if a := rollAccountRow(t, b); a.TotalLocateCosts.String() != "0" {
		t.Errorf("totalLocateCosts three days on: %s, want 0", a.TotalLocateCosts)
	}
	locWantInventory(t, b, nil)
	if fees := locFees(t, b); len(fees) != 1 || fees[0].EntryDate != "2026-11-25T00:00:00" {
		t.Errorf("fee rows %+v, want one on 2026-11-25", fees)
	}
}

// The trading day ends at 8 PM New York time, not at midnight
// (the spec names no hour; 8 PM, the end of the extended session, is the
// harsher plausible one, see rollover.go): a locate filled at 7:59 PM is
// in the day's history and inventory for that minute only; at 8 PM both
// are the next trading day's, empty, and a locate filled then shows in
// the new day's history alone. The cash ledger keeps calendar dates
// (spec "Cash ledger": entryDate is the calendar date).
func TestRolloverAtEightPM(t *testing.T) {
	t.Parallel()
	b := locSim(t)
	b.Advance(9*time.Hour + 59*time.Minute) // Wednesday 19:59 ET
	locFilled(t, b, "HTBX", 100, "q1", "q1")
	if rows := locHistory(t, b, b.Live, locAcct); len(rows) == 0 {
		t.Fatalf("history at 7:59 PM is empty")
	}
	b.Advance(time.Minute) // 8 PM: past it, whatever the fill took
	if rows := locHistory(t, b, b.Live, locAcct); len(rows) != 0 {
		t.Errorf("history after 8 PM shows %+v: the day did not roll over", rows)
	}
	locWantInventory(t, b, nil)
	b.Advance(30 * time.Second) // the same-symbol quote spacing
	locFilled(t, b, "HTBX", 100, "q2", "q2")
	if rows := locHistory(t, b, b.Live, locAcct); len(rows) != 1 {
		t.Errorf("history of the new day: %+v, want q2 alone", rows)
	}
	b.Advance(10 * time.Second) // the fee rows post
	var dates []string
	for _, f := range locFees(t, b) {
		dates = append(dates, f.EntryDate)
	}
	if want := []string{"2026-11-25T00:00:00", "2026-11-25T00:00:00"}; !slices.Equal(dates, want) {
		t.Errorf("fee rows dated %v, want %v (calendar dates)", dates, want)
	}
}
