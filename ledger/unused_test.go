package ledger_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
)

// quoteSpacing waits out the spec's same-symbol quote spacing ("Locate
// limits": at least 30 seconds per symbol per account).
const quoteSpacing = 31 * time.Second

// Spec "Short locates" rule 5 and "Locate types": a
// SingleUse row may be credited back only if no share of it opened a
// short. Each case builds a day of RSHO SingleUse locates (the .SU side of
// the Reg SHO pair), shorts and credit-backs straight at the broker, asks
// Unused for the plan, and then asks the broker itself: a credit-back of
// the row's available shares clears when Unused plans it and is rejected
// (16 Insufficient shares) when Unused skips it, so the rule and the
// broker agree. Shares credited back are not shares used: a lot located
// after an earlier credit-back of the day, or the rest of a lot partly
// credited back, is credited back. Nor is a lot located after the row was
// emptied by the cover of the short that used it (the broker drops the
// emptied row; the new lot's row opened no short), while a lot located
// before that cover shares the used row.
func TestUnusedSingleUse(t *testing.T) {
	t.Parallel()
	su := brokercode.LocateTypeSingleUse
	for _, tc := range []struct {
		name string
		day  func(t *testing.T, b *testBundle)
		plan int64  // SingleUse shares planned, 0 when skipped
		skip string // the skip's reason holds it, "" when planned
	}{
		{
			name: "located again after a credit-back of the day",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.creditBackType(t, "RSHO", 1000, su)
				b.sim.Advance(quoteSpacing)
				b.fillSide(t, "RSHO", 1000, ".SU")
			},
			plan: 1000,
		},
		{
			name: "the rest of a lot partly credited back",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.creditBackType(t, "RSHO", 400, su)
			},
			plan: 600,
		},
		{
			name: "bought the day before",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.sim.Advance(24 * time.Hour) // Thursday 10:00 ET: the rollover dropped Wednesday's row
				b.fillSide(t, "RSHO", 1000, ".SU")
			},
			plan: 1000,
		},
		{
			// The first lot's row was emptied by the cover that consumed
			// it, and the broker dropped it: the second lot is a new row
			// no short drew on.
			name: "located again after a short consumed the first lot",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.short(t, "RSHO", 1000, "")
				b.cover(t, "RSHO", 1000)
				b.sim.Advance(quoteSpacing)
				b.fillSide(t, "RSHO", 1000, ".SU")
			},
			plan: 1000,
		},
		{
			// The same fills and cover, but the cover came after the
			// second lot: the row was never emptied and had opened a
			// short.
			name: "located again while a short held the first lot",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.short(t, "RSHO", 1000, "")
				b.sim.Advance(quoteSpacing)
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.cover(t, "RSHO", 1000)
			},
			skip: "SingleUse already used (2000 filled today, 0 sold back, 1000 available: 1000 opened shorts)",
		},
		{
			name: "a short open on the lot",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.short(t, "RSHO", 300, "")
			},
			skip: "SingleUse already used (300 unavailable, 1000 filled today, 0 sold back, 700 available: 300 opened shorts)",
		},
		{
			name: "a covered short took part of the first lot",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.short(t, "RSHO", 300, "")
				b.cover(t, "RSHO", 300)
				b.sim.Advance(quoteSpacing)
				b.fillSide(t, "RSHO", 1000, ".SU")
			},
			skip: "SingleUse already used (2000 filled today, 0 sold back, 1700 available: 300 opened shorts)",
		},
		{
			name: "a covered short after a credit-back of the day",
			day: func(t *testing.T, b *testBundle) {
				b.fillSide(t, "RSHO", 1000, ".SU")
				b.creditBackType(t, "RSHO", 500, su)
				b.short(t, "RSHO", 200, "")
				b.cover(t, "RSHO", 200)
			},
			skip: "SingleUse already used (1000 filled today, 500 sold back, 300 available: 200 opened shorts)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tc.day(t, b)
			dayStart := market.On(b.sim.Clock.Now()).Date
			plan, skipped, err := ledger.Unused(t.Context(), b.client, b.store, account, dayStart, ledger.UnusedFilter{})
			if err != nil {
				t.Fatal(err)
			}
			got, want := fmt.Sprint(plan, skipped), fmt.Sprint([]locator.Credit{{Symbol: "RSHO", Type: su, Shares: tc.plan}}, []locator.Skip(nil))
			if tc.skip != "" {
				want = fmt.Sprint([]locator.Credit(nil), []locator.Skip{{Symbol: "RSHO", Type: su, Reason: tc.skip}})
			}
			if got != want {
				t.Fatalf("plan and skips %s, want %s", got, want)
			}
			// The broker's word on the row's available shares.
			avail := b.inventoryRow(t, "RSHO", su).Available
			id := uuid.NewString()
			if _, _, err := b.client.Locates.Sell(t.Context(), brokerclient.SellRequest{Account: account, Symbol: "RSHO", Quantity: avail, LocateType: su, QuoteReqID: id}); err != nil {
				t.Fatal(err)
			}
			b.sim.Advance(11 * time.Second) // the credit clears 10 s after the sell
			row := b.historyRow(t, id)
			switch {
			case tc.skip == "" && row.LocateStatus != brokercode.LocateStatusFilled:
				t.Errorf("the broker refused the planned credit-back of %d: %d %q", avail, row.LocateStatus, row.TextValue())
			case tc.skip != "" && (row.LocateStatus != brokercode.LocateStatusRejected || !strings.HasPrefix(row.TextValue(), "16 ")):
				t.Errorf("the broker took a credit-back of %d of the skipped row: %d %q", avail, row.LocateStatus, row.TextValue())
			}
		})
	}
}

// inventoryRow is the broker's (symbol, typ) row, or the test fails.
func (b *testBundle) inventoryRow(t *testing.T, symbol string, typ brokercode.LocateType) brokerclient.InventoryRow {
	t.Helper()
	rows, _, err := b.client.Locates.Inventory(t.Context(), account)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Symbol == symbol && r.Type() == typ {
			return r
		}
	}
	t.Fatalf("no %s %s row in %+v", symbol, typ, rows)
	return brokerclient.InventoryRow{}
}

// Spec "Short locates" rule 5 and "Locate types" (tradingday seed 289): a
// SingleUse row that opened a short may not be credited back, but its
// available shares still cover a short; a PreBorrow row may be credited
// back in full unless tied to an open short, and a working short sell,
// not yet filled, ties nothing. So the shares a working short will need
// are held on the used SingleUse row first, and the whole PreBorrow row is
// credited back: the broker then fills the short from the SingleUse row.
// Before, Unused held the working short's 100 shares on the PreBorrow row
// and left them unsold.
func TestUnusedWorkingShortOnUsedSingleUse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fillSide(t, "RSHO", 700, ".SU")
	b.short(t, "RSHO", 400, "") // the SingleUse row opens a short: 300 left, used
	b.sim.Advance(quoteSpacing)
	b.fillSide(t, "RSHO", 600, "") // the PreBorrow side
	working := b.short(t, "RSHO", 100, "20.00")
	dayStart := market.On(b.sim.Clock.Now()).Date
	plan, skipped, err := ledger.Unused(t.Context(), b.client, b.store, account, dayStart, ledger.UnusedFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(plan, skipped)
	want := fmt.Sprint([]locator.Credit{{Symbol: "RSHO", Type: brokercode.LocateTypePreBorrow, Shares: 600}},
		[]locator.Skip{{Symbol: "RSHO", Type: brokercode.LocateTypeSingleUse,
			Reason: "SingleUse already used (400 unavailable, 700 filled today, 0 sold back, 300 available: 400 opened shorts)"}})
	if got != want {
		t.Fatalf("plan and skips %s, want %s", got, want)
	}
	// The broker's word: the planned credit-back clears, and the working
	// short then fills on the SingleUse row's shares.
	b.creditBackType(t, "RSHO", 600, brokercode.LocateTypePreBorrow)
	b.sim.Sim.SetPrice("RSHO", dec("20.50"))
	b.sim.Advance(time.Second)
	o, _, err := b.client.Orders.Get(t.Context(), account, working.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	if o.OrderStatus != brokercode.OrderStatusFilled {
		t.Fatalf("the working short after the credit-back: %s (%v), want Filled", o.OrderStatus, o.Rejection())
	}
	if row := b.inventoryRow(t, "RSHO", brokercode.LocateTypeSingleUse); row.Available != 200 || row.Unavailable != 500 {
		t.Errorf("SingleUse row after the short filled: %+v, want 200 available, 500 unavailable", row)
	}
}
