package brokerclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
)

// fixtureClient serves each testdata file at its endpoint path and returns
// a client of it: the recorded payloads go through the same methods as the
// simulator's answers, envelopes and all.
func fixtureClient(t *testing.T, routes map[string]string) *brokerclient.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		file, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			http.Error(w, "404 page not found", http.StatusNotFound)
			return
		}
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(
		brokerclient.WithBaseURL(srv.URL),
		brokerclient.WithCredentials("FIXTUREKEY", "fixture-secret"),
		brokerclient.WithHTTPClient(srv.Client()),
		brokerclient.WithoutPacing(),
	)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkGolden compares v, encoded as indented JSON, with testdata/name;
// UPDATE_GOLDEN=1 rewrites the file.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got), UPDATE_GOLDEN=1 refreshes:\n%s", path, diff)
	}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// decEqual compares decimals by value, so 0.30 equals 0.3.
var decEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func TestDecodeGolden(t *testing.T) {
	t.Parallel()
	const acct = "/v1/api/accounts/LV100001"
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string // spec section
		file   string
		path   string
		fetch  func(ctx context.Context, c *brokerclient.Client) (any, error)
		checks func(t *testing.T, v any)
	}{
		{
			name: "Account list row: buyingPower and optLevel or optionTradingLevel",
			file: "accounts_list.json", path: "GET /v1/api/accounts",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Accounts.List(ctx)
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.Account)
				if len(got) != 2 {
					t.Fatalf("got %d accounts, want 2", len(got))
				}
				if !got[0].BuyingPower.Equal(dec("400000.2")) || got[0].OptLevel != 2 {
					t.Errorf("row 0: buyingPower %s optLevel %d", got[0].BuyingPower, got[0].OptLevel)
				}
				if got[1].OptLevel != 4 || !got[1].IsPaper() || got[0].IsPaper() || !got[0].IsActive() {
					t.Errorf("row 1: optionTradingLevel %d, paper %v/%v", got[1].OptLevel, got[1].IsPaper(), got[0].IsPaper())
				}
				if got[0].AvailableCashEMS != nil || got[0].IsFutureAccount != nil || got[0].Extra != nil {
					t.Errorf("list row has detail-only or extra fields: %+v", got[0])
				}
				if got[0].Realized.String() != "12.345" {
					t.Errorf("realized %s, want the exact 12.345", got[0].Realized)
				}
			},
		},
		{
			name: "Account detail: bp, detail-only fields, undocumented keys kept raw",
			file: "accounts_detail_live.json", path: "GET /v1/api/account/LV100001",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Accounts.Get(ctx, "LV100001")
				return v, err
			},
			checks: func(t *testing.T, v any) {
				a := v.(*brokerclient.Account)
				if !a.BuyingPower.Equal(dec("400000.20")) || a.OptLevel != 2 {
					t.Errorf("bp %s optionTradingLevel %d", a.BuyingPower, a.OptLevel)
				}
				if a.IsFutureAccount == nil || *a.IsFutureAccount || a.AvailableCashEMS == nil || a.MarginRequirement == nil ||
					!a.MarginRequirement.Equal(dec("3500.25")) {
					t.Errorf("detail-only fields: %+v %+v %+v", a.IsFutureAccount, a.AvailableCashEMS, a.MarginRequirement)
				}
				want := map[string]json.RawMessage{
					"marginType": json.RawMessage(`"RegT"`),
					"fractional": json.RawMessage(`{"enabled":false,"note":null}`),
					"unrealized": json.RawMessage(`1500.000000001`),
				}
				if diff := cmp.Diff(want, a.Extra); diff != "" {
					t.Errorf("Extra (-want +got):\n%s", diff)
				}
				// The extras survive a round trip through MarshalJSON.
				b, err := json.Marshal(a)
				if err != nil {
					t.Fatal(err)
				}
				var back brokerclient.Account
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(a, &back, decEqual); diff != "" {
					t.Errorf("round trip (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "Profit and loss: exact key spellings, exact sums, closed lot",
			file: "accounts_pnl.json", path: "GET " + acct + "/pnl",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Accounts.PnL(ctx, "LV100001")
				return v, err
			},
			checks: func(t *testing.T, v any) {
				p := v.(*brokerclient.PnL)
				if len(p.Lots) != 2 {
					t.Fatalf("got %d lots", len(p.Lots))
				}
				// 0.1 + 0.2 == 0.3 exactly: decimals, not floats.
				if !p.DayRealized.Add(p.DayUnrealized).Equal(p.DayPnl) {
					t.Errorf("dayRealized %s + dayUnrealized %s != dayPnl %s", p.DayRealized, p.DayUnrealized, p.DayPnl)
				}
				var dayU, dayR, total decimal.Decimal
				for _, r := range p.Lots {
					dayU, dayR, total = dayU.Add(r.DayUnrealizedPnL), dayR.Add(r.DayRealizedPnl), total.Add(r.UnrealizedPnL)
				}
				if !dayU.Equal(p.DayUnrealized) || !dayR.Equal(p.DayRealized) || !total.Equal(p.TotalUnrealized) {
					t.Errorf("row sums %s %s %s do not match aggregates", dayU, dayR, total)
				}
				if p.Lots[0].Closed() || !p.Lots[1].Closed() {
					t.Errorf("Closed(): %v %v, want false true", p.Lots[0].Closed(), p.Lots[1].Closed())
				}
				if p.Lots[1].PositionID != "9007199254740993" || !p.Lots[0].PctPnLMove.Equal(dec("3.75")) ||
					!p.Lots[1].RealizedPnl.Equal(dec("650")) || !p.Lots[0].DayPctPnLMove.Equal(dec("0.0004819")) {
					t.Errorf("lot fields: %+v", p.Lots)
				}
			},
		},
		{
			name: "Order record: 3 to 7 fractional digits, text null vs empty, R-codes, placeholder route",
			file: "orders_book.json", path: "GET " + acct + "/orders",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Orders.Book(ctx, "LV100001")
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.Order)
				if len(got) != 6 {
					t.Fatalf("got %d orders", len(got))
				}
				base := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
				for i, ns := range []int{123000000, 123400000, 123450000, 123456000, 123456700} {
					if want := base.Add(time.Duration(ns)); !got[i].LastUpdated.Equal(want) || got[i].LastUpdated.NoZone {
						t.Errorf("order %d lastUpdated %v, want %v (zoned)", i, got[i].LastUpdated, want)
					}
				}
				if got[0].Text == nil || *got[0].Text != "" {
					t.Errorf(`order 0 text %v, want ""`, got[0].Text)
				}
				if got[2].Text != nil || got[4].Text != nil {
					t.Errorf("null text decoded as %q / %q", *got[2].Text, *got[4].Text)
				}
				if r := got[0].Rejection(); r != nil {
					t.Errorf("Filled order has a rejection %+v", r)
				}
				txt := "R114: Invalid duplicate user order id"
				broker := "Rejected: Broker Rejected: venue declined"
				wantRej := []*brokerclient.OrderRejection{
					nil,
					{ClientOrderID: "ord-4digits", Code: "R114", Text: &txt},
					{ClientOrderID: "ord-5digitsINVALID20261125150000"},
					{ClientOrderID: "ord-6digits", Text: &broker, BrokerRejected: true},
					nil,
					nil,
				}
				for i := range got {
					if diff := cmp.Diff(wantRej[i], got[i].Rejection()); diff != "" {
						t.Errorf("order %d Rejection (-want +got):\n%s", i, diff)
					}
				}
				if got[2].Route != "" || got[3].Route != "" || got[0].Route != "SMART" {
					t.Errorf("routes %q %q %q", got[0].Route, got[2].Route, got[3].Route)
				}
				if !got[0].LimitPrice.Equal(dec("190.0123")) || !got[2].PriceStop.Equal(dec("250")) {
					t.Errorf("prices %s %s", got[0].LimitPrice, got[2].PriceStop)
				}
				if !got[0].IsTerminal() || got[4].IsTerminal() || !got[1].IsTerminal() {
					t.Error("IsTerminal wrong")
				}
				if got[4].Executed != 40 || got[4].LeavesQuantity != 60 || got[4].OpenClose != brokerclient.OpenCloseClose {
					t.Errorf("partial fill: %+v", got[4])
				}
				if m := got[5]; len(m.Legs) != 2 || m.Legs[1].Symbol != "AAPL261218C00200000" || !m.StartTime.DateOnly ||
					m.PegOffsetType != "0" {
					t.Errorf("multi-leg row: %+v", m)
				}
			},
		},
		{
			name: "Order book: an object with an array inside",
			file: "orders_book_wrapped.json", path: "GET /v1/api/accounts/PP200001/orders",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Orders.Book(ctx, "PP200001")
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.Order)
				if len(got) != 1 || got[0].ClientOrderID != "wrapped-1" || !got[0].LimitPrice.Equal(dec("1.0001")) {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name: "Route record: timesInForce, MLEG, extra order types",
			file: "orders_routes.json", path: "GET " + acct + "/routes",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Orders.Routes(ctx, "LV100001")
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.Route)
				if len(got) != 2 || !got[0].UseDisplayQty || len(got[0].OrderTypes) != 11 {
					t.Fatalf("got %+v", got)
				}
				if !got[1].Allows(brokerclient.SecurityTypeMleg, brokerclient.OrderTypeLimit, brokerclient.TimeInForceDay) {
					t.Error("SMARTM should allow Mleg Limit Day")
				}
				if got[0].Allows(brokerclient.SecurityTypeStock, "", brokerclient.TimeInForceIOC) {
					t.Error("SMART should not allow IOC")
				}
			},
		},
		{
			name: "Fill row: tradeId above 2^53, zone-less execTime, date-only tradeDate",
			file: "fills_archive.json", path: "GET " + acct + "/orders/start-date/2026-11-24",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Orders.Fills(ctx, "LV100001", day)
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.Fill)
				if len(got) != 2 {
					t.Fatalf("got %d fills", len(got))
				}
				if got[0].TradeID != "9007199254740993" || got[1].TradeID != "18446744073709551615" || got[1].MLegID != "12345678901234567890" {
					t.Errorf("ids %q %q %q", got[0].TradeID, got[1].TradeID, got[1].MLegID)
				}
				e := got[0].ExecTime
				if !e.NoZone || e.DateOnly || !e.Equal(time.Date(2026, 11, 24, 10, 15, 30, 250000000, time.UTC)) {
					t.Errorf("zone-less execTime %+v", e)
				}
				if got[1].ExecTime.NoZone || got[1].ExecTime.Nanosecond() != 123456700 {
					t.Errorf("zoned execTime %+v", got[1].ExecTime)
				}
				for _, f := range got {
					if !f.TradeDate.DateOnly || !f.SettleDate.DateOnly || !f.TradeDate.Equal(day) {
						t.Errorf("tradeDate %+v settleDate %+v", f.TradeDate, f.SettleDate)
					}
				}
				// Money is exact: 0.1 + 0.2 commission is 0.3.
				sum := got[0].Commission.Add(got[1].Commission)
				if sum.String() != "0.3" {
					t.Errorf("commission sum %s, want exactly 0.3", sum)
				}
				if net := got[0].NetProceeds.Add(got[1].NetProceeds); !net.Equal(dec("0.6")) {
					t.Errorf("net %s, want 0.6", net)
				}
			},
		},
		{
			name: "Paginated history row: tradeId number and string",
			file: "fills_history_page.json", path: "GET /v1/api/accounts/LV300001/orders-with-pagination/start-date/2025-12-01",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				var out []brokerclient.Fill
				for f, err := range c.Orders.History(ctx, "LV300001", time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), nil) {
					if err != nil {
						return nil, err
					}
					out = append(out, f)
				}
				return out, nil
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.Fill)
				if len(got) != 2 || got[0].TradeID != "9007199254740995" || got[1].TradeID != "9007199254740997" {
					t.Fatalf("got %+v", got)
				}
				if !got[0].ExecTime.NoZone || got[1].ExecTime.NoZone || got[1].ExecTime.Nanosecond() != 123450000 {
					t.Errorf("execTimes %+v %+v", got[0].ExecTime, got[1].ExecTime)
				}
				if !got[0].Price.Equal(dec("10.0005")) {
					t.Errorf("price %s", got[0].Price)
				}
			},
		},
		{
			name: "Open positions: bare array",
			file: "positions_open.json", path: "GET " + acct + "/positions",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Positions.Open(ctx, "LV100001")
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.Position)
				if len(got) != 2 || got[0].PositionID != "20261120000001" || got[0].Shares != 100 {
					t.Fatalf("got %+v", got)
				}
				if u := got[0].Unrealized(); !u.Equal(dec("1500")) {
					t.Errorf("long unrealized %s, want 1500", u)
				}
				if u := got[1].Unrealized(); !u.Equal(dec("50")) || !got[1].IsShort() {
					t.Errorf("short unrealized %s, want 50", u)
				}
				if got[0].CreatedDate.Nanosecond() != 517000000 {
					t.Errorf("createdDate %v", got[0].CreatedDate)
				}
			},
		},
		{
			name: "Closed positions: positionId number above 2^53 kept exactly",
			file: "positions_closed.json", path: "GET " + acct + "/positions/closed",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Positions.Closed(ctx, "LV100001")
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.ClosedPosition)
				if len(got) != 2 || got[0].PositionID != "9007199254740993" || got[1].PositionID != "4815162342" {
					t.Fatalf("got %+v", got)
				}
				if diff := cmp.Diff(map[string]json.RawMessage{"side": json.RawMessage(`"Long"`)}, got[0].Extra); diff != "" {
					t.Errorf("Extra (-want +got):\n%s", diff)
				}
				if !got[1].Realized.Equal(dec("-125")) || !got[0].ClosedDate.DateOnly {
					t.Errorf("row 1: %+v", got[1])
				}
			},
		},
		{
			name: "Historical positions: date query, rows under historicalPositions",
			file: "positions_historical.json", path: "GET " + acct + "/positions/historical",
			fetch: func(ctx context.Context, c *brokerclient.Client) (any, error) {
				v, _, err := c.Positions.Historical(ctx, "LV100001", day)
				return v, err
			},
			checks: func(t *testing.T, v any) {
				got := v.([]brokerclient.HistoricalPosition)
				if len(got) != 1 || !got[0].MarketValue.Equal(dec("41500.1")) || !got[0].Date.DateOnly {
					t.Fatalf("got %+v", got)
				}
				if _, ok := got[0].Extra["dayOvernight"]; !ok {
					t.Errorf("extra keys not kept: %v", got[0].Extra)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := fixtureClient(t, map[string]string{tt.path: tt.file})
			v, err := tt.fetch(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			tt.checks(t, v)
			checkGolden(t, strings.TrimSuffix(tt.file, ".json")+".golden", v)
		})
	}
}

// TestDecodeErrors: a 2xx body that does not decode is a *DecodeError, and
// an object without a list is not silently empty (spec: cross-cutting
// conventions, decode every documented shape, lose nothing).
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/api/accounts/A1/orders":
			w.Write([]byte(`{"message":"no list here"}`))
		case "/v1/api/accounts/A1/positions":
			w.Write([]byte(`{}`))
		case "/v1/api/accounts/A1/routes":
			w.Write([]byte(`"routes"`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithCredentials("k", "s"),
		brokerclient.WithHTTPClient(srv.Client()), brokerclient.WithoutPacing())
	if err != nil {
		t.Fatal(err)
	}
	var de *brokerclient.DecodeError
	if _, _, err := c.Orders.Book(t.Context(), "A1"); !errors.As(err, &de) {
		t.Errorf("book without a list: err %v, want *DecodeError", err)
	}
	if got, _, err := c.Positions.Open(t.Context(), "A1"); err != nil || len(got) != 0 {
		t.Errorf("empty object: %v %v, want an empty list", got, err)
	}
	if _, _, err := c.Orders.Routes(t.Context(), "A1"); !errors.As(err, &de) || !bytes.Contains([]byte(de.Body), []byte("routes")) {
		t.Errorf("string body: err %v, want *DecodeError with the body", err)
	}
}
