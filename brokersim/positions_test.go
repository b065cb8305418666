package brokersim_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/simtest"
)

// posRow is an open-position row (reference notes: "Open positions").
type posRow struct {
	AccountID    string      `json:"accountId"`
	PositionID   string      `json:"positionId"`
	Symbol       string      `json:"symbol"`
	TradedSymbol string      `json:"tradedSymbol"`
	Side         string      `json:"side"`
	Shares       int64       `json:"shares"`
	PriceAvg     json.Number `json:"priceAvg"`
	PriceClose   json.Number `json:"priceClose"`
	DayOvernight string      `json:"dayOvernight"`
	SecurityType string      `json:"securityType"`
}

func getPositions(t *testing.T, b *simtest.Bundle, key simtest.Key, acct string) []posRow {
	t.Helper()
	r := b.Do(t, key, "GET", "/v1/api/accounts/"+acct+"/positions", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("positions: %d %s", r.Status, r.Body)
	}
	var rows []posRow
	r.JSON(t, &rows)
	return rows
}

// closedRows decodes closedPositions keeping positionId as the exact number.
func closedRows(t *testing.T, b *simtest.Bundle, key simtest.Key, acct string) []map[string]any {
	t.Helper()
	r := b.Do(t, key, "GET", "/v1/api/accounts/"+acct+"/positions/closed", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("closed: %d %s", r.Status, r.Body)
	}
	var out struct{ ClosedPositions []map[string]any }
	decodeNumbers(t, r.Body, &out)
	return out.ClosedPositions
}

// Spec: "Position records" (open positions keyed by positionId, joined from
// P&L rows on positionId) and "Positions".
func TestPositionsOpen(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"orderType": "Market", "limitPrice": nil, "orderQuantity": 25}))
	b.Advance(50 * time.Millisecond)

	rows := getPositions(t, b, b.Live, "LV100001")
	got := map[string]posRow{}
	for _, r := range rows {
		got[r.Symbol] = r
	}
	msft, aapl := got["MSFT"], got["AAPL"]
	if len(rows) != 2 || msft.Side != "Long" || msft.Shares != 100 || msft.PriceAvg != "400" || msft.PriceClose != "420" || msft.DayOvernight != "Overnight" {
		t.Errorf("carried MSFT row %+v (of %d rows)", msft, len(rows))
	}
	if aapl.Side != "Long" || aapl.Shares != 25 || aapl.PriceAvg != "190" || aapl.DayOvernight != "Day" || aapl.TradedSymbol != "AAPL" || aapl.AccountID != "LV100001" {
		t.Errorf("today's AAPL row %+v", aapl)
	}
	// Every P&L row of an open lot joins to a position on positionId.
	for _, r := range getPnL(t, b, b.Live, "LV100001").Rows {
		if got[r["symbol"].(string)].PositionID != r["positionId"] {
			t.Errorf("pnl row %v does not join to a position", r)
		}
	}
	if rows := getPositions(t, b, b.Paper, "PP200001"); len(rows) != 0 {
		t.Errorf("paper positions %+v, want none", rows)
	}
}

// Spec: "Position records": closedPositions carry positionId as a JSON
// number, kept exact above 2^53, with realized, sharesIn/Out and blended
// prices; a lot closed today appears there too.
func TestPositionsClosed(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "in", "symbol": "SPY", "orderType": "Market", "limitPrice": nil}))
	b.Advance(50 * time.Millisecond)
	b.Sim.SetPrice("SPY", decimal.RequireFromString("519.5"))
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "out", "symbol": "SPY", "side": "Sell", "openClose": "Close", "orderType": "Market", "limitPrice": nil}))
	b.Advance(50 * time.Millisecond)

	rows := closedRows(t, b, b.Live, "LV100001")
	if len(rows) != 3 {
		t.Fatalf("%d closed rows, want 3: %v", len(rows), rows)
	}
	big := rows[0]
	if id, ok := big["positionId"].(json.Number); !ok || id.String() != "9007199254740993" {
		t.Errorf("positionId %v (%T), want the JSON number 9007199254740993 intact", big["positionId"], big["positionId"])
	}
	for k, want := range map[string]string{"sharesIn": "200", "sharesOut": "200", "priceOpen": "185.1", "priceClose": "188.35", "realized": "650"} {
		if got := num(t, big[k]); !got.Equal(decimal.RequireFromString(want)) {
			t.Errorf("seeded row %s = %s, want %s", k, got, want)
		}
	}
	if big["symbol"] != "AAPL" {
		t.Errorf("symbol %v", big["symbol"])
	}

	today := rows[2]
	id, ok := today["positionId"].(json.Number)
	if !ok {
		t.Fatalf("today's positionId %v (%T) is not a JSON number", today["positionId"], today["positionId"])
	}
	for k, want := range map[string]string{"sharesIn": "10", "sharesOut": "10", "priceOpen": "520", "priceClose": "519.5", "realized": "-5"} {
		if got := num(t, today[k]); !got.Equal(decimal.RequireFromString(want)) {
			t.Errorf("today's row %s = %s, want %s", k, got, want)
		}
	}
	// The same lot is still in pnl[] for the day, its id as a string.
	if r := getPnL(t, b, b.Live, "LV100001").row(t, "SPY"); r["positionId"] != id.String() {
		t.Errorf("pnl positionId %v, closed positionId %s", r["positionId"], id)
	}
}

// Spec: "Positions" (historical, query date) and "Position records".
func TestPositionsHistorical(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	get := func(query string) *simtest.Response {
		return b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/positions/historical"+query, nil)
	}
	t.Run("missing or invalid date is a 400 line", func(t *testing.T) {
		for _, q := range []string{"", "?date=", "?date=2026-02-30", "?date=11/25/2026"} {
			r := get(q)
			if r.Status != http.StatusBadRequest || !strings.HasPrefix(string(r.Body), "- date: ") || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("%q: %d %q", q, r.Status, r.Body)
			}
		}
	})
	type hist struct {
		PositionID    string      `json:"positionId"`
		Symbol        string      `json:"symbol"`
		Date          string      `json:"date"`
		Quantity      int64       `json:"quantity"`
		MarketValue   json.Number `json:"marketValue"`
		AverageCost   json.Number `json:"averageCost"`
		ClosingPrice  json.Number `json:"closingPrice"`
		UnrealizedPnL json.Number `json:"unrealizedPnL"`
	}
	cases := []struct {
		date string
		want []hist
	}{
		{"2026-11-18", []hist{{"9007199254740993", "AAPL", "2026-11-18T00:00:00", 200, "37020", "185.1", "185.1", "0"}}},
		{"2026-11-24", nil},
		{"2026-11-25", nil},
	}
	for _, tc := range cases {
		t.Run(tc.date, func(t *testing.T) {
			r := get("?date=" + tc.date)
			var out struct{ HistoricalPositions []hist }
			r.JSON(t, &out)
			if tc.date == "2026-11-18" {
				if diff := cmp.Diff(tc.want, out.HistoricalPositions); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			// The carried MSFT lot: at its prior close before today, at the last price today.
			if len(out.HistoricalPositions) != 1 {
				t.Fatalf("rows %+v, want the MSFT lot", out.HistoricalPositions)
			}
			h := out.HistoricalPositions[0]
			closing, mv, unr := "415", "41500", "1500"
			if tc.date == "2026-11-25" {
				closing, mv, unr = "420", "42000", "2000"
			}
			if h.Symbol != "MSFT" || h.Quantity != 100 || h.AverageCost != "400" || string(h.ClosingPrice) != closing || string(h.MarketValue) != mv || string(h.UnrealizedPnL) != unr {
				t.Errorf("row %+v", h)
			}
		})
	}
}

// Spec: "Orders" trader intent (side plus openClose) and the locate hook: a
// short on a hard-to-borrow symbol fills once a locate is filled, shows as
// a Short lot with negative exposure, and covers with Buy/Close.
func TestPositionsShortWithLocate(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	write := func(path string, body any) {
		if r := b.Do(t, b.Live, "POST", path, body); r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	write("/v1/api/accounts/locates/quote", map[string]any{"account": "LV100001", "symbol": "HTBX", "quantity": 200, "quoteReqID": "q-htbx"})
	b.Advance(3 * time.Second)
	write("/v1/api/accounts/locates/accept", map[string]any{"accountId": "LV100001", "quoteReqID": "q-htbx"})
	b.Advance(time.Second)

	short := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"symbol": "HTBX", "side": "Sell", "orderType": "Market", "limitPrice": nil, "orderQuantity": 200}))
	b.Advance(50 * time.Millisecond)
	if o, _ := ordGet(t, b, b.Live, "LV100001", short.ClientOrderID); o.OrderStatus != "Filled" {
		t.Fatalf("short with a filled locate: %s %q, want Filled", o.OrderStatus, o.text())
	}
	var pos posRow
	for _, p := range getPositions(t, b, b.Live, "LV100001") {
		if p.Symbol == "HTBX" {
			pos = p
		}
	}
	if pos.Side != "Short" || pos.Shares != 200 {
		t.Errorf("short position %+v", pos)
	}
	b.Sim.SetPrice("HTBX", decimal.RequireFromString("12"))
	r := getPnL(t, b, b.Live, "LV100001").row(t, "HTBX")
	if !num(t, r["exposure"]).Equal(decimal.RequireFromString("-2400")) || !num(t, r["unrealizedPnL"]).Equal(decimal.RequireFromString("100")) {
		t.Errorf("short lot pnl %v, want exposure -2400 and unrealized +100", r)
	}

	// Buy/Close covers the short and closes the lot.
	again := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"symbol": "HTBX", "side": "Buy", "openClose": "Close", "orderType": "Market", "limitPrice": nil, "orderQuantity": 200}))
	b.Advance(50 * time.Millisecond)
	if o, _ := ordGet(t, b, b.Live, "LV100001", again.ClientOrderID); o.OrderStatus != "Filled" {
		t.Fatalf("cover: %s %q, want Filled", o.OrderStatus, o.text())
	}
	r = getPnL(t, b, b.Live, "LV100001").row(t, "HTBX")
	if !num(t, r["exposure"]).IsZero() || !num(t, r["realizedPnl"]).Equal(decimal.RequireFromString("100")) {
		t.Errorf("covered lot pnl %v, want exposure 0 and realized 100", r)
	}
}
