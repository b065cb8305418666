package brokersim_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/simtest"
)

// accountKeys are the fields the spec's "Account (list row and detail)"
// table documents on both shapes.
var accountKeys = []string{
	"account", "accountStatus", "accountType", "availableCash", "equity", "leverage", "maintenanceDeficit",
	"marginDeficit", "marginRatio", "optContractsTraded", "optLevel", "optionTradingLevel",
	"optionCashTotalBalance", "overnightBp", "realized", "sharesTraded", "sodEquity", "totalCommissions",
	"totalLocateCosts", "usedLeverage",
}

// decodeNumbers decodes JSON keeping numbers exact.
func decodeNumbers(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

func num(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a JSON number", v, v)
	}
	return decimal.RequireFromString(n.String())
}

// Spec: "Account (list row and detail)" and "Accounts and profit and loss".
func TestAccountFields(t *testing.T) {
	t.Parallel()
	b := ordSim(t)

	t.Run("list: the key's accounts, buyingPower, every documented field", func(t *testing.T) {
		r := b.Do(t, b.Live, "GET", "/v1/api/accounts", nil)
		var out struct{ Accounts []map[string]any }
		decodeNumbers(t, r.Body, &out)
		var ids []string
		for _, row := range out.Accounts {
			ids = append(ids, row["account"].(string))
			for _, k := range append(slices.Clone(accountKeys), "buyingPower") {
				if _, ok := row[k]; !ok {
					t.Errorf("%s: list row lacks %s", row["account"], k)
				}
			}
			for _, k := range []string{"bp", "availableCashEMS", "isFutureAccount"} {
				if _, ok := row[k]; ok {
					t.Errorf("list row carries detail-only %s", k)
				}
			}
		}
		if diff := cmp.Diff([]string{"LV100001", "LV100002"}, ids); diff != "" {
			t.Errorf("accounts (-want +got):\n%s", diff)
		}
	})

	cases := []struct {
		name string
		key  simtest.Key
		path string
		want map[string]any // exact values of some fields
	}{
		{"live margin detail, lowercase id echoed uppercase", b.Live, "/v1/api/account/lv100001", map[string]any{
			"account": "LV100001", "accountStatus": "Active", "accountType": "Margin", "isFutureAccount": false,
			"availableCash": json.Number("100000"), "sodEquity": json.Number("141500"), "optLevel": json.Number("2"),
			"optionTradingLevel": json.Number("2"), "totalLocateCosts": json.Number("0"), "availableCashEMS": json.Number("0"),
		}},
		{"non-Active account", b.Live, "/v1/api/account/LV100002", map[string]any{"accountStatus": "Restricted"}},
		{"paper detail", b.Paper, "/v1/api/account/pp200001", map[string]any{
			"account": "PP200001", "accountType": "Paper", "totalLocateCosts": json.Number("0"),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Do(t, tc.key, "GET", tc.path, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d body %s", r.Status, r.Body)
			}
			var d map[string]any
			decodeNumbers(t, r.Body, &d)
			for _, k := range append(slices.Clone(accountKeys), "bp", "availableCashEMS", "isFutureAccount", "marginRequirement") {
				if _, ok := d[k]; !ok {
					t.Errorf("detail lacks %s", k)
				}
			}
			if _, ok := d["buyingPower"]; ok {
				t.Error("detail carries buyingPower; the spec names it bp there")
			}
			for k, v := range tc.want {
				if d[k] != v {
					t.Errorf("%s = %v, want %v", k, d[k], v)
				}
			}
			if d["accountType"] == "Margin" && !num(t, d["overnightBp"]).LessThan(num(t, d["bp"])) {
				t.Errorf("overnightBp %v not below bp %v on a live margin account", d["overnightBp"], d["bp"])
			}
		})
	}
	t.Run("foreign account is 404 text", func(t *testing.T) {
		if r := b.Do(t, b.Live, "GET", "/v1/api/account/LV300001", nil); r.Status != http.StatusNotFound {
			t.Errorf("status %d", r.Status)
		}
	})
}

// Spec: "HTTP semantics of the account endpoints": JSON, gzip-encoded, with
// Cache-Control: max-age=0, no-cache, no-store.
func TestAccountHeaders(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, path := range []string{"/v1/api/accounts", "/v1/api/account/LV100001", "/v1/api/accounts/LV100001/pnl", "/v1/api/accounts/LV100001/pnl/"} {
		t.Run(path, func(t *testing.T) {
			req, _ := http.NewRequest("GET", b.URL+path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			b.Sign(req, b.Live)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			want := map[string]string{
				"Content-Type":     "application/json; charset=utf-8",
				"Content-Encoding": "gzip",
				"Cache-Control":    "max-age=0, no-cache, no-store",
			}
			for k, v := range want {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(zr)
			if !json.Valid(raw) {
				t.Errorf("body is not JSON: %q", raw)
			}
		})
	}
}

// pnlView is the P&L response with exact numbers.
type pnlView struct {
	Top  map[string]any
	Rows []map[string]any
}

func getPnL(t *testing.T, b *simtest.Bundle, key simtest.Key, acct string) pnlView {
	t.Helper()
	r := b.Do(t, key, "GET", "/v1/api/accounts/"+acct+"/pnl", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("pnl: %d %s", r.Status, r.Body)
	}
	var top map[string]any
	decodeNumbers(t, r.Body, &top)
	var v pnlView
	v.Top = top
	for _, x := range top["pnl"].([]any) {
		v.Rows = append(v.Rows, x.(map[string]any))
	}
	return v
}

// pnlRow finds the row of symbol (the last one when a symbol has several).
func (v pnlView) row(t *testing.T, symbol string) map[string]any {
	t.Helper()
	var found map[string]any
	for _, r := range v.Rows {
		if r["symbol"] == symbol {
			found = r
		}
	}
	if found == nil {
		t.Fatalf("no pnl row for %s in %v", symbol, v.Rows)
	}
	return found
}

// Spec: "Profit and loss response": key spellings, per-lot rows, the sum
// rules, closed lots kept with exposure 0, day fields of carried lots.
func TestPnL(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	mkt := func(id, symbol, side, oc string, qty int) {
		ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": id, "symbol": symbol, "side": side,
			"openClose": oc, "orderType": "Market", "limitPrice": nil, "orderQuantity": qty}))
		b.Advance(50 * time.Millisecond)
		if o, _ := ordGet(t, b, b.Live, "LV100001", id); o.OrderStatus != "Filled" {
			t.Fatalf("%s: %s %q, want Filled", id, o.OrderStatus, o.text())
		}
	}
	mkt("aapl", "AAPL", "Buy", "Open", 100) // opened today at 190
	mkt("spy-in", "SPY", "Buy", "Open", 10) // opened today at 520
	b.Sim.SetPrice("SPY", decimal.RequireFromString("525.055"))
	mkt("spy-out", "SPY", "Sell", "Close", 10) // closed today: +50.55
	mkt("msft", "MSFT", "Sell", "Close", 40)   // 40 of the carried 100 at 420
	b.Sim.SetPrice("AAPL", decimal.RequireFromString("191.3333"))

	v := getPnL(t, b, b.Live, "LV100001")

	t.Run("exact key spellings", func(t *testing.T) {
		var topKeys, rowKeys []string
		for k := range v.Top {
			topKeys = append(topKeys, k)
		}
		for k := range v.Rows[0] {
			rowKeys = append(rowKeys, k)
		}
		slices.Sort(topKeys)
		slices.Sort(rowKeys)
		wantTop := []string{"accountValue", "allowedLeverage", "availableCash", "dayPnl", "dayRealized", "dayUnrealized",
			"equityRatio", "exposure", "optionCashUsed", "pnl", "sharesTraded", "totalUnrealized", "usedLeverage"}
		wantRow := []string{"dayPctPnLMove", "dayRealizedPnl", "dayUnrealizedPnL", "exposure", "pctPnLMove",
			"positionId", "realizedPnl", "symbol", "unrealizedPnL"}
		if diff := cmp.Diff(wantTop, topKeys); diff != "" {
			t.Errorf("top keys (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantRow, rowKeys); diff != "" {
			t.Errorf("row keys (-want +got):\n%s", diff)
		}
		for _, r := range v.Rows {
			if _, ok := r["positionId"].(string); !ok {
				t.Errorf("positionId %v is not a string", r["positionId"])
			}
		}
	})
	t.Run("rule 2 and totals: sums equal aggregates exactly", func(t *testing.T) {
		var dayU, dayR, totU, eqExp decimal.Decimal
		for _, r := range v.Rows {
			dayU = dayU.Add(num(t, r["dayUnrealizedPnL"]))
			dayR = dayR.Add(num(t, r["dayRealizedPnl"]))
			totU = totU.Add(num(t, r["unrealizedPnL"]))
			eqExp = eqExp.Add(num(t, r["exposure"]))
		}
		checks := []struct {
			name      string
			got, want decimal.Decimal
		}{
			{"dayUnrealized", num(t, v.Top["dayUnrealized"]), dayU},
			{"dayRealized", num(t, v.Top["dayRealized"]), dayR},
			{"totalUnrealized", num(t, v.Top["totalUnrealized"]), totU},
			{"dayPnl", num(t, v.Top["dayPnl"]), num(t, v.Top["dayRealized"]).Add(num(t, v.Top["dayUnrealized"]))},
			{"exposure", num(t, v.Top["exposure"]), eqExp},
			{"accountValue", num(t, v.Top["accountValue"]), num(t, v.Top["availableCash"]).Add(eqExp).Add(num(t, v.Top["optionCashUsed"]))},
			{"optionCashUsed", num(t, v.Top["optionCashUsed"]), decimal.Zero},
		}
		for _, c := range checks {
			if !c.got.Equal(c.want) {
				t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
			}
		}
	})
	t.Run("rule 3: a closed lot stays with exposure 0 and unrealizedPnL 0", func(t *testing.T) {
		r := v.row(t, "SPY")
		for k, want := range map[string]string{"exposure": "0", "unrealizedPnL": "0", "dayUnrealizedPnL": "0", "realizedPnl": "50.55", "dayRealizedPnl": "50.55"} {
			if got := num(t, r[k]); !got.Equal(decimal.RequireFromString(want)) {
				t.Errorf("%s = %s, want %s", k, got, want)
			}
		}
	})
	t.Run("rule 4: a lot opened today has day fields equal to lifetime", func(t *testing.T) {
		r := v.row(t, "AAPL")
		if !num(t, r["unrealizedPnL"]).Equal(decimal.RequireFromString("133.33")) {
			t.Errorf("unrealizedPnL %v, want 133.33", r["unrealizedPnL"])
		}
		for _, pair := range [][2]string{{"dayUnrealizedPnL", "unrealizedPnL"}, {"dayRealizedPnl", "realizedPnl"}, {"dayPctPnLMove", "pctPnLMove"}} {
			if !num(t, r[pair[0]]).Equal(num(t, r[pair[1]])) {
				t.Errorf("%s %v != %s %v", pair[0], r[pair[0]], pair[1], r[pair[1]])
			}
		}
	})
	t.Run("rule 4: a carried lot has day fields different from lifetime", func(t *testing.T) {
		r := v.row(t, "MSFT")
		want := map[string]string{
			"unrealizedPnL": "1200", "dayUnrealizedPnL": "300", // 60 left: vs 400 cost, vs 415 prior close
			"realizedPnl": "800", "dayRealizedPnl": "200", // 40 sold at 420
			"exposure": "25200", "pctPnLMove": "5", "dayPctPnLMove": "1.2",
		}
		for k, w := range want {
			if got := num(t, r[k]); !got.Equal(decimal.RequireFromString(w)) {
				t.Errorf("%s = %s, want %s", k, got, w)
			}
		}
	})
	t.Run("sharesTraded and the account counters", func(t *testing.T) {
		if got := num(t, v.Top["sharesTraded"]); got.IntPart() != 160 {
			t.Errorf("sharesTraded %s, want 160", got)
		}
		r := b.Do(t, b.Live, "GET", "/v1/api/accounts", nil)
		var out struct{ Accounts []map[string]any }
		decodeNumbers(t, r.Body, &out)
		row := out.Accounts[0]
		if !num(t, row["totalCommissions"]).Equal(decimal.RequireFromString("0.8")) || num(t, row["sharesTraded"]).IntPart() != 160 {
			t.Errorf("list counters: commissions %v shares %v, want 0.8 and 160", row["totalCommissions"], row["sharesTraded"])
		}
		if !num(t, row["realized"]).Equal(num(t, v.Top["dayRealized"])) {
			t.Errorf("list realized %v, want the P&L dayRealized %v", row["realized"], v.Top["dayRealized"])
		}
		// The detail's today-counters are the session-open values.
		r = b.Do(t, b.Live, "GET", "/v1/api/account/LV100001", nil)
		var d map[string]any
		decodeNumbers(t, r.Body, &d)
		if num(t, d["sharesTraded"]).IntPart() != 0 || !num(t, d["realized"]).IsZero() {
			t.Errorf("detail counters: shares %v realized %v, want session-open zeros", d["sharesTraded"], d["realized"])
		}
	})
}
