package brokerclient

import (
	"testing"

	"github.com/shopspring/decimal"
)

// Spec "P&L stream" rule 3: updates received before the snapshot are
// discarded; partial aggCalcs and position updates merge field by field,
// into the nested pnlCalc for positions; absent means unchanged.
func TestPnLWatcherMerge(t *testing.T) {
	t.Parallel()
	w := &PnLWatcher{accounts: []string{"LV1"}, models: map[string]*pnlModel{"LV1": {}}}
	feed := func(raw string) {
		t.Helper()
		m, err := DecodeStreamMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.message(m); err != nil {
			t.Fatal(err)
		}
	}
	feed(`{"ts":1,"account":"LV1","action":"update","target":"aggCalcs","aggCalcs":{"accountValue":1}}`)
	if _, ok := w.Snapshot("LV1"); ok {
		t.Fatal("in sync before any snapshot")
	}
	feed(`{"ts":2,"account":"LV1","action":"init","target":"pnlReturn","pnlReturn":{"accountValue":100,"availableCash":50,` +
		`"positions":[{"positionId":"9007199254750001","symbol":"MSFT","pnlCalc":{"unrealizedPnL":5,"realizedPnl":2,"exposure":42}}]}}`)
	// No account on the message: the only account watched.
	feed(`{"ts":3,"action":"update","target":"aggCalcs","aggCalcs":{"accountValue":101.5}}`)
	feed(`{"ts":3,"account":"LV1","action":"update","target":"position","position":{"positionId":"9007199254750001","symbol":"MSFT","pnlCalc":{"unrealizedPnL":6.5}}}`)
	feed(`{"ts":4,"account":"LV1","action":"update","target":"position","position":{"positionId":9007199254750002,"symbol":"AAPL","pnlCalc":{"exposure":1900}}}`)
	got, ok := w.Snapshot("LV1")
	if !ok {
		t.Fatal("not in sync after the snapshot")
	}
	eq := func(what string, d decimal.Decimal, want string) {
		t.Helper()
		if !d.Equal(decimal.RequireFromString(want)) {
			t.Errorf("%s = %s, want %s", what, d, want)
		}
	}
	eq("accountValue", got.AccountValue, "101.5")
	eq("availableCash (absent: unchanged)", got.AvailableCash, "50")
	if len(got.Positions) != 2 || got.Positions[1].PositionID != "9007199254750002" {
		t.Fatalf("positions %+v", got.Positions)
	}
	eq("MSFT unrealizedPnL", got.Positions[0].PnLCalc.UnrealizedPnL, "6.5")
	eq("MSFT realizedPnl (absent: unchanged)", got.Positions[0].PnLCalc.RealizedPnl, "2")
	eq("MSFT exposure (absent: unchanged)", got.Positions[0].PnLCalc.Exposure, "42")
	eq("AAPL exposure (new position)", got.Positions[1].PnLCalc.Exposure, "1900")
}
