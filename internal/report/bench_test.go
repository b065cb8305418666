package report_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// yearSymbols are the symbols of the benchmark's year.
var yearSymbols = []string{"HTBX", "HTBY", "RSHO", "RSSU", "NOINV"}

// writeYear writes a year of trading days (NYSE calendar, 2025-11-26 to
// 2026-11-25: 251 of them) into a store as the engine and a ledger sync leave them:
// each day and symbol a filled locate of 500 shares, its short and cover,
// a credit-back of 200 and a declined offer, and the ledger's fee and
// credit rows. It returns the store and the year's range.
func writeYear(tb testing.TB) (*store.Store, locator.DateRange) {
	tb.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	st, err := store.Open(ctx, filepath.Join(tb.TempDir(), "year.db"), clk)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	to := ledger.TradeDate(time.Date(2026, 11, 25, 12, 0, 0, 0, market.NewYork))
	rng := locator.DateRange{From: to.AddDate(-1, 0, 1), To: to}
	var cash []store.CashEntry
	n := 0
	for d := rng.From; !d.After(rng.To); d = d.AddDate(0, 0, 1) {
		open := time.Date(d.Year(), d.Month(), d.Day(), 10, 0, 0, 0, market.NewYork)
		if !market.IsTradingDay(open) {
			continue
		}
		for k, sym := range yearSymbols {
			clk.Set(open.Add(time.Duration(k) * time.Minute))
			price := decimal.New(int64(100+k*50+d.Day()), -4)
			n++
			id := fmt.Sprintf("q%06d", n)
			mk := func(kind states.Kind, state states.State, qid string, qty int64, p decimal.Decimal) {
				if err := st.Create(ctx, &workflow.Workflow{ID: "wf-" + qid, Kind: kind, Account: accountID, Symbol: sym,
					Requested: qty, Quantity: qty, QuoteReqID: qid, AcceptedID: qid, State: state, Price: p}); err != nil {
					tb.Fatal(err)
				}
			}
			mk(states.Locate, states.Filled, id, 500, price)
			mk(states.CreditBack, states.Credited, id+"c", 200, price)
			mk(states.Locate, states.Declined, id+"d", 300, price.Add(decimal.New(5, -3)))
			for j, side := range []string{"Sell", "Buy"} {
				oc := map[string]string{"Sell": "Open", "Buy": "Close"}[side]
				o := &workflow.Order{ClientOrderID: fmt.Sprintf("%s-o%d", id, j), Account: accountID, Symbol: sym, Side: side,
					OpenClose: oc, OrderType: "Limit", TimeInForce: "Day", Quantity: 300, LimitPrice: decimal.NewFromInt(10), Route: "SMART"}
				if err := st.CreateOrder(ctx, o); err != nil {
					tb.Fatal(err)
				}
				next := *o
				next.State, next.OrderStatus, next.Executed, next.SentAt = states.Filled, "Filled", 300, clk.Now()
				next.PriceAvg = decimal.NewFromInt(10).Sub(decimal.New(int64(j*(d.Day()%7)), -2))
				if _, err := st.CommitOrder(ctx, o, &next, &workflow.Transition{From: o.State, To: next.State, Event: states.StatusFilled, Reason: "filled"}); err != nil {
					tb.Fatal(err)
				}
			}
			fee := price.Mul(decimal.NewFromInt(500)).Round(2)
			credit := price.Mul(decimal.NewFromInt(200)).Round(2)
			cash = append(cash,
				store.CashEntry{Key: id + "f", Account: accountID, EntryDate: d, CashType: "Locate Fees", Currency: "USD", Withdraw: fee,
					Note: fmt.Sprintf("Locate fee %s 500 shares @ %s (quoteReqID %s)", sym, price, id)},
				store.CashEntry{Key: id + "r", Account: accountID, EntryDate: d, CashType: "Locate Fees", Currency: "USD", Deposit: credit,
					Note: fmt.Sprintf("Locate credit-back %s 200 shares @ %s (quoteReqID %sc)", sym, price, id)})
		}
	}
	if _, err := st.InsertCashEntries(ctx, cash); err != nil {
		tb.Fatal(err)
	}
	return st, rng
}

// BenchmarkReportYear is `locator report` over a year of history, after
// its ledger sync: report.Build on 251 trading days × 5 symbols (3,765
// workflows, 2,510 orders, 2,510 ledger rows).
func BenchmarkReportYear(b *testing.B) {
	st, rng := writeYear(b)
	now := rng.To.Add(22 * time.Hour)
	var r *locator.Report
	for b.Loop() {
		var err error
		if r, err = report.Build(context.Background(), st, report.Options{Account: accountID, Range: rng, Now: now}); err != nil {
			b.Fatal(err)
		}
	}
	if t := r.Total; t.Located != int64(len(r.Dates))*int64(len(yearSymbols))*500 || len(r.Dates) < 250 || t.FeeStatus != "matched" {
		b.Fatalf("total %+v", t.Figures)
	}
}
