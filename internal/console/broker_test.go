package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
)

// pnl prints p with open in format f and returns what it printed.
func pnl(f Format, p *brokerclient.PnL, open []brokerclient.Position) string {
	var buf bytes.Buffer
	PnL(Printer{W: &buf, Format: f}, p, open)
	return buf.String()
}

// A lot shows its open position's side and shares, "closed" once its
// exposure is 0, nothing when no open position is its; CSV is the lots
// alone, JSON the broker's record.
func TestPnLJoinsTheLotsToTheOpenPositions(t *testing.T) {
	t.Parallel()
	p := &brokerclient.PnL{
		PnLTotals: brokerclient.PnLTotals{AccountValue: decimal.RequireFromString("1000.5"), UsedLeverage: decimal.RequireFromString("0.5"),
			AllowedLeverage: decimal.NewFromInt(4), SharesTraded: 7},
		Lots: []brokerclient.PnLRow{
			{PositionID: "1", Symbol: "MSFT", PnLCalc: brokerclient.PnLCalc{Exposure: decimal.NewFromInt(4200), DayPctPnLMove: decimal.RequireFromString("1.2")}},
			{PositionID: "2", Symbol: "AAPL"},
			{PositionID: "3", Symbol: "SPY", PnLCalc: brokerclient.PnLCalc{Exposure: decimal.NewFromInt(10)}},
		},
	}
	open := []brokerclient.Position{{PositionID: "1", Symbol: "MSFT", Side: brokerclient.PositionLong, Shares: 10}}
	want := "" +
		"ACCOUNT VALUE  DAY P&L  DAY REALIZED  DAY UNREALIZED  TOTAL UNREALIZED  EXPOSURE  CASH  LEVERAGE USED  SHARES TRADED\n" +
		"1000.50        0.00     0.00          0.00            0.00              0.00      0.00  0.5 of 4       7\n" +
		"\n" +
		"POSITION ID  SYMBOL  SIDE    SHARES  EXPOSURE  DAY REALIZED  DAY UNREALIZED  REALIZED  UNREALIZED  DAY % MOVE\n" +
		"1            MSFT    Long    10      4200.00   0.00          0.00            0.00      0.00        1.2\n" +
		"2            AAPL    closed          0.00      0.00          0.00            0.00      0.00        0\n" +
		"3            SPY                     10.00     0.00          0.00            0.00      0.00        0\n"
	if got := pnl(Table, p, open); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	want = "POSITION ID,SYMBOL,SIDE,SHARES,EXPOSURE,DAY REALIZED,DAY UNREALIZED,REALIZED,UNREALIZED,DAY % MOVE\n" +
		"1,MSFT,Long,10,4200.00,0.00,0.00,0.00,0.00,1.2\n" +
		"2,AAPL,closed,,0.00,0.00,0.00,0.00,0.00,0\n" +
		"3,SPY,,,10.00,0.00,0.00,0.00,0.00,0\n"
	if got := pnl(CSV, p, open); got != want {
		t.Errorf("csv:\n%s\nwant:\n%s", got, want)
	}
	if got := pnl(JSON, &brokerclient.PnL{}, nil); !strings.HasPrefix(got, `{"accountValue":"0"`) || strings.Count(got, "\n") != 1 {
		t.Errorf("json: %q", got)
	}
	if got := pnl(Table, &brokerclient.PnL{}, nil); !strings.HasSuffix(got, "\n\nno lots today\n") {
		t.Errorf("no lots: %q", got)
	}
}
