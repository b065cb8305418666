package brokersim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// ordSim starts a simulator with rate limits off, for tests not about limits.
func ordSim(t *testing.T, opts ...simtest.Option) *simtest.Bundle {
	t.Helper()
	opts = append([]simtest.Option{simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false })}, opts...)
	return simtest.New(t, opts...)
}

// ordRow is the order record as a client decodes it.
type ordRow struct {
	AccountID              string      `json:"accountId"`
	ClientOrderID          string      `json:"clientOrderId"`
	OrderStatus            string      `json:"orderStatus"`
	Text                   *string     `json:"text"`
	StartTime              string      `json:"startTime"`
	LastUpdated            string      `json:"lastUpdated"`
	Executed               int64       `json:"executed"`
	LeavesQuantity         int64       `json:"leavesQuantity"`
	CanceledQuantity       int64       `json:"canceledQuantity"`
	LastQuantity           int64       `json:"lastQuantity"`
	PriceAvg               json.Number `json:"priceAvg"`
	LimitPrice             json.Number `json:"limitPrice"`
	PriceStop              json.Number `json:"priceStop"`
	Route                  string      `json:"route"`
	Symbol                 string      `json:"symbol"`
	Side                   string      `json:"side"`
	OpenClose              string      `json:"openClose"`
	OrderType              string      `json:"orderType"`
	OrderQuantity          int64       `json:"orderQuantity"`
	SecurityType           string      `json:"securityType"`
	TimeInForce            string      `json:"timeInForce"`
	MarginRequirement      json.Number `json:"marginRequirement"`
	MaintenanceRequirement json.Number `json:"maintenanceRequirement"`
}

func (o ordRow) text() string {
	if o.Text == nil {
		return "<null>"
	}
	return *o.Text
}

// ordBody is a valid live limit buy of AAPL on SMART; over replaces or, with
// a nil value, deletes fields.
func ordBody(over map[string]any) map[string]any {
	m := map[string]any{
		"symbol": "AAPL", "side": "Buy", "openClose": "Open", "orderType": "Limit",
		"securityType": "Stock", "timeInForce": "Day", "orderQuantity": 10, "limitPrice": 180, "route": "SMART",
	}
	for k, v := range over {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func ordPlace(t *testing.T, b *simtest.Bundle, key simtest.Key, acct string, body any) ordRow {
	t.Helper()
	r := b.Do(t, key, "POST", "/v1/api/accounts/"+acct+"/order", body)
	if r.Status != http.StatusOK {
		t.Fatalf("place: status %d, body %q", r.Status, r.Body)
	}
	var o ordRow
	r.JSON(t, &o)
	return o
}

// ordGet fetches one order; ok is false on the 404.
func ordGet(t *testing.T, b *simtest.Bundle, key simtest.Key, acct, id string) (ordRow, bool) {
	t.Helper()
	r := b.Do(t, key, "GET", "/v1/api/accounts/"+acct+"/order/"+id, nil)
	if r.Status == http.StatusNotFound {
		return ordRow{}, false
	}
	if r.Status != http.StatusOK {
		t.Fatalf("get order %s: status %d, body %q", id, r.Status, r.Body)
	}
	var o ordRow
	r.JSON(t, &o)
	return o, true
}

func ordBook(t *testing.T, b *simtest.Bundle, key simtest.Key, acct string) []ordRow {
	t.Helper()
	r := b.Do(t, key, "GET", "/v1/api/accounts/"+acct+"/orders", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("book: status %d, body %q", r.Status, r.Body)
	}
	var rows []ordRow
	r.JSON(t, &rows)
	return rows
}

func ordTimes(t *testing.T, o ordRow) (start, updated time.Time) {
	t.Helper()
	var err error
	if start, err = time.Parse(time.RFC3339Nano, o.StartTime); err != nil {
		t.Fatal(err)
	}
	if updated, err = time.Parse(time.RFC3339Nano, o.LastUpdated); err != nil {
		t.Fatal(err)
	}
	return start, updated
}

// ordRaw sends a request with an explicit content type.
func ordRaw(t *testing.T, b *simtest.Bundle, key simtest.Key, method, path, ctype string, body []byte) *simtest.Response {
	t.Helper()
	req, err := http.NewRequest(method, b.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	b.Sign(req, key)
	resp, err := b.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return &simtest.Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
}

// Spec: "HTTP status map" (order schema or parse failure) and "Orders" rule 4.
func TestOrderValidationLines(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	cases := []struct {
		name string
		body any
		want string
	}{
		{"Orders rule 4: fractional quantity", ordBody(map[string]any{"orderQuantity": 1.5}),
			"- orderQuantity: Invalid type. Expected: integer, given: number."},
		{"quantity as a string", ordBody(map[string]any{"orderQuantity": "10"}),
			"- orderQuantity: Invalid type. Expected: integer, given: string."},
		{"quantity zero", ordBody(map[string]any{"orderQuantity": 0}),
			"- orderQuantity: Must be greater than or equal to 1"},
		{"Cross-cutting: side is case-sensitive", ordBody(map[string]any{"side": "buy"}),
			`- side: side must be one of the following: "Buy", "Sell"`},
		{"no short side value", ordBody(map[string]any{"side": "SellShort"}),
			`- side: side must be one of the following: "Buy", "Sell"`},
		{"orderType is case-sensitive", ordBody(map[string]any{"orderType": "limit"}),
			`- orderType: orderType must be one of the following: "Market", "Limit", "Stop", "StopLimit"`},
		{"Orders rule 1: routes' extra types are not placeable", ordBody(map[string]any{"orderType": "RangeOrder"}),
			`- orderType: orderType must be one of the following: "Market", "Limit", "Stop", "StopLimit"`},
		{"securityType is case-sensitive", ordBody(map[string]any{"securityType": "MLEG"}),
			`- securityType: securityType must be one of the following: "Stock", "Option", "Mleg"`},
		{"timeInForce is case-sensitive", ordBody(map[string]any{"timeInForce": "day"}),
			`- timeInForce: timeInForce must be one of the following: "Day", "Day_Plus", "GoodTillCancel", "GTC_Plus", "GoodTillCrossing", "IOC", "FOK", "AtTheOpening"`},
		{"openClose exactly Open or Close", ordBody(map[string]any{"openClose": "open"}),
			`- openClose: openClose must be one of the following: "Open", "Close"`},
		{"Cross-cutting: limitPrice up to four decimals", ordBody(map[string]any{"limitPrice": 180.12345}),
			"- limitPrice: Must be a multiple of 0.0001"},
		{"symbol longer than 30", ordBody(map[string]any{"symbol": strings.Repeat("A", 31)}),
			"- symbol: String length must be less than or equal to 30"},
		{"symbol with a space", ordBody(map[string]any{"symbol": "AA PL"}),
			"- symbol: Does not match pattern '^[A-Za-z0-9._-]+$'"},
		{"limit order without limitPrice", ordBody(map[string]any{"limitPrice": nil}),
			"- (root): limitPrice is required"},
		// The spec marks no field required; only those without which there
		// is no order are (timeInForce, openClose, securityType have
		// defaults: see TestStockOrderWithoutOpenClose).
		{"every required field missing", map[string]any{},
			strings.Join([]string{
				"- (root): symbol is required", "- (root): side is required", "- (root): orderType is required",
				"- (root): orderQuantity is required",
			}, "\n")},
		{"two problems, two lines", ordBody(map[string]any{"side": "BUY", "orderQuantity": 2.5}),
			"- side: side must be one of the following: \"Buy\", \"Sell\"\n- orderQuantity: Invalid type. Expected: integer, given: number."},
		{"not an object", "[1]", "- (root): Invalid type. Expected: object, given: array."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Do(t, b.Live, "POST", "/v1/api/accounts/LV100001/order", tc.body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400 (body %q)", r.Status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("content type %q, want text/plain", ct)
			}
			if diff := cmp.Diff(tc.want, string(r.Body)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// Spec: "HTTP status map": account mismatch on a write is 400 JSON.
func TestOrderAccountMismatch(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	cases := []struct {
		name string
		key  simtest.Key
		acct string
	}{
		{"foreign account", b.Live, "LV300001"},
		{"paper account with a live key", b.Live, "PP200001"},
		{"unknown account", b.Live, "LV999999"},
		{"wrong secret", simtest.Key{ID: b.Live.ID, Secret: "nope"}, "LV100001"},
		{"no keys", simtest.Key{}, "LV100001"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Do(t, tc.key, "POST", "/v1/api/accounts/"+tc.acct+"/order", ordBody(nil))
			var e struct {
				StatusCode string  `json:"statusCode"`
				Message    string  `json:"message"`
				Detail     *string `json:"detail"`
			}
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", r.Status)
			}
			r.JSON(t, &e)
			if e.StatusCode != "BadRequest" || e.Message == "" || e.Detail != nil {
				t.Errorf("body %s", r.Body)
			}
		})
	}
}

// Spec: "Order rejection codes" with their POST timing, and "Order
// statuses" (PendingNew, then Rejected about 50 ms after startTime).
func TestOrderRejectionCodes(t *testing.T) {
	t.Parallel()
	const option = "AAPL261218C00190000"
	cases := []struct {
		name  string
		paper bool
		acct  string // default LV100001 (or PP200001 on paper)
		setup func(t *testing.T, b *simtest.Bundle)
		body  map[string]any
		sync  bool
		text  string // prefix of the rejection text; "" means null
	}{
		{name: "R24 stop without a stopPrice is async",
			body: ordBody(map[string]any{"orderType": "Stop", "limitPrice": nil}), text: "R24: "},
		{name: "R24 stop price of zero is async",
			body: ordBody(map[string]any{"orderType": "StopLimit", "stopPrice": 0}), text: "R24: "},
		{name: "R54 missing route on a live account is async",
			body: ordBody(map[string]any{"route": nil}), text: "R54: "},
		{name: "R54 route the account lacks is async",
			body: ordBody(map[string]any{"route": "PAPER"}), text: "R54: "},
		{name: "R54 single-leg option on the multi-leg paper route is async", paper: true,
			body: ordBody(map[string]any{"route": "PAPERM", "securityType": "Option", "symbol": option, "limitPrice": 5}), text: "R54: "},
		{name: "R95 opening buy and sell on one symbol is async",
			setup: func(t *testing.T, b *simtest.Bundle) {
				ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "working-buy"}))
				b.Advance(time.Second)
			},
			body: ordBody(map[string]any{"side": "Sell", "limitPrice": 200}), text: "R95: "},
		{name: "R06 restricted symbol limit outside the band is async",
			body: ordBody(map[string]any{"symbol": "RSTR", "limitPrice": 30}), text: "R06: "},
		{name: "R118 without a route is async", paper: true,
			body: ordBody(map[string]any{"orderType": "Stop", "limitPrice": nil, "stopPrice": 150, "route": nil}), text: "R118: "},
		{name: "R118 without a route on live is async (before R54)",
			body: ordBody(map[string]any{"orderType": "Stop", "limitPrice": nil, "side": "Sell", "openClose": "Close", "stopPrice": 200, "route": nil}), text: "R118: "},
		{name: "R114 duplicate clientOrderId is sync",
			setup: func(t *testing.T, b *simtest.Bundle) {
				ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "dup"}))
			},
			body: ordBody(map[string]any{"clientOrderId": "dup"}), sync: true, text: "R114: "},
		{name: "R145 negative limitPrice is sync",
			body: ordBody(map[string]any{"limitPrice": -1}), sync: true, text: "R145: "},
		{name: "R145 negative stopPrice is sync",
			body: ordBody(map[string]any{"orderType": "StopLimit", "stopPrice": -2}), sync: true, text: "R145: "},
		{name: "no code: non-Active account is a sync null-text risk rejection", acct: "LV100002",
			body: ordBody(nil), sync: true},
		{name: "no code: options without approval is a sync null-text risk rejection", acct: "LV300001",
			body: ordBody(map[string]any{"securityType": "Option", "symbol": option, "route": "SMARTO"}), sync: true},
		{name: "no code: buying power exceeded is a sync null-text risk rejection", acct: "LV300001",
			body: ordBody(map[string]any{"symbol": "MSFT", "orderQuantity": 1000, "limitPrice": 420}), sync: true},
		{name: "no code: IOC is not available on paper (venue decline, async)", paper: true,
			body: ordBody(map[string]any{"timeInForce": "IOC", "route": nil}), text: "Rejected: Broker Rejected"},
		{name: "no code: IOC on a live route that lacks it (venue decline, async)",
			body: ordBody(map[string]any{"timeInForce": "IOC"}), text: "Rejected: Broker Rejected"},
		{name: "no code: short without a locate (venue decline, async)",
			body: ordBody(map[string]any{"symbol": "HTBX", "side": "Sell", "orderType": "Market", "limitPrice": nil}), text: "Rejected: Broker Rejected: no locate available"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := ordSim(t)
			key, acct := b.Live, "LV100001"
			if tc.paper {
				key, acct = b.Paper, "PP200001"
			}
			if tc.acct != "" {
				acct = tc.acct
				if acct == "LV300001" {
					key = b.Live2
				}
			}
			if tc.setup != nil {
				tc.setup(t, b)
			}
			o := ordPlace(t, b, key, acct, tc.body)
			start, updated := ordTimes(t, o)
			if tc.sync {
				if o.OrderStatus != "Rejected" || !updated.Equal(start) {
					t.Fatalf("sync: status %s, lastUpdated-startTime %v, want Rejected at once", o.OrderStatus, updated.Sub(start))
				}
				if tc.text == "" && o.Text != nil || tc.text != "" && !strings.HasPrefix(o.text(), tc.text) {
					t.Fatalf("text %q, want prefix %q", o.text(), tc.text)
				}
				return
			}
			if o.OrderStatus != "PendingNew" || o.Text != nil {
				t.Fatalf("async: status %s text %q, want PendingNew with null text", o.OrderStatus, o.text())
			}
			if _, ok := ordGet(t, b, key, acct, o.ClientOrderID); ok {
				t.Fatal("order visible before it is registered")
			}
			b.Advance(49 * time.Millisecond)
			if _, ok := ordGet(t, b, key, acct, o.ClientOrderID); ok {
				t.Fatal("order visible 49 ms after placement")
			}
			b.Advance(time.Millisecond)
			got, ok := ordGet(t, b, key, acct, o.ClientOrderID)
			if !ok {
				t.Fatal("order not found 50 ms after placement")
			}
			if got.OrderStatus != "Rejected" || !strings.HasPrefix(got.text(), tc.text) {
				t.Fatalf("status %s text %q, want Rejected with %q", got.OrderStatus, got.text(), tc.text)
			}
			if !regexp.MustCompile(`^(R\d+: |Rejected: Broker Rejected)`).MatchString(got.text()) {
				t.Errorf("text %q carries no parseable code or venue prefix", got.text())
			}
			s, u := ordTimes(t, got)
			if u.Sub(s) != 50*time.Millisecond {
				t.Errorf("lastUpdated - startTime = %v, want 50ms", u.Sub(s))
			}
		})
	}
}

// Spec: "Cross-cutting conventions": clientOrderId is consumed for the
// session, R114 even after the first order was cancelled or rejected.
func TestOrderR114AfterCancelAndReject(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "c1"}))
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "r1", "limitPrice": -5}))
	b.Advance(time.Second)
	if r := b.Do(t, b.Live, "DELETE", "/v1/api/accounts/LV100001/orders/c1", nil); r.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	for _, id := range []string{"c1", "r1"} {
		o := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": id}))
		if o.OrderStatus != "Rejected" || !strings.HasPrefix(o.text(), "R114: ") {
			t.Errorf("%s reused: %s %q, want Rejected R114", id, o.OrderStatus, o.text())
		}
	}
	// The original stays what it was; the response is not replayed.
	if o, _ := ordGet(t, b, b.Live, "LV100001", "c1"); o.OrderStatus != "Canceled" {
		t.Errorf("original c1 is %s, want Canceled", o.OrderStatus)
	}
}

// Spec: "Order statuses": R118 with an explicit route rejects synchronously
// with null text and a rewritten id; the single-order GET answers 404 by the
// original id (and by the rewritten one), and the book keeps the row.
func TestOrderR118WithRoute(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	o := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{
		"clientOrderId": "stop-1", "orderType": "Stop", "limitPrice": nil, "stopPrice": 150, "route": "SMART",
	}))
	if o.OrderStatus != "Rejected" || o.Text != nil {
		t.Fatalf("status %s text %q, want Rejected with null text", o.OrderStatus, o.text())
	}
	want := "stop-1INVALID" + itoa(simtest.Start.UnixMilli())
	if o.ClientOrderID != want {
		t.Fatalf("clientOrderId %q, want %q", o.ClientOrderID, want)
	}
	b.Advance(2 * time.Second)
	for _, id := range []string{"stop-1", o.ClientOrderID} {
		if _, ok := ordGet(t, b, b.Live, "LV100001", id); ok {
			t.Errorf("GET %s found, want 404", id)
		}
	}
	book := ordBook(t, b, b.Live, "LV100001")
	if len(book) != 1 || book[0].ClientOrderID != want || book[0].OrderStatus != "Rejected" || book[0].Text != nil {
		t.Errorf("book %+v, want the rejected row with null text", book)
	}
	// The original id is consumed too.
	if again := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "stop-1"})); !strings.HasPrefix(again.text(), "R114") {
		t.Errorf("reuse of stop-1: %s %q, want R114", again.OrderStatus, again.text())
	}
}

func itoa(n int64) string { return decimal.NewFromInt(n).String() }

// Spec: "Order rejection codes" R78: market orders outside 9:30-16:00 ET
// are rejected synchronously; limit orders are accepted.
func TestOrderR78OutsideRegularHours(t *testing.T) {
	t.Parallel()
	early := time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC) // 08:00 ET
	b := ordSim(t, simtest.WithStart(early))
	m := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"orderType": "Market", "limitPrice": nil}))
	if m.OrderStatus != "Rejected" || !strings.HasPrefix(m.text(), "R78: ") || m.StartTime != m.LastUpdated {
		t.Errorf("market before the open: %s %q, want sync R78", m.OrderStatus, m.text())
	}
	l := ordPlace(t, b, b.Live, "LV100001", ordBody(nil))
	if l.OrderStatus != "PendingNew" {
		t.Errorf("limit before the open: %s, want PendingNew", l.OrderStatus)
	}
	b.Advance(time.Second)
	if o, _ := ordGet(t, b, b.Live, "LV100001", l.ClientOrderID); o.OrderStatus != "Accepted" {
		t.Errorf("limit before the open settled as %s %q, want Accepted", o.OrderStatus, o.text())
	}
}

// Spec: "Orders" (placement, single order, book) and the fill model: a
// market order fills at the last price after the async delay; a limit works
// until the price makes it marketable; a stop triggers when crossed.
func TestOrderFills(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	mkt := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "mkt", "orderType": "Market", "limitPrice": nil, "orderQuantity": 100}))
	lim := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "lim", "symbol": "SPY", "limitPrice": 515, "orderQuantity": 20, "timeInForce": "GoodTillCancel"}))
	b.Advance(50 * time.Millisecond)

	got, _ := ordGet(t, b, b.Live, "LV100001", mkt.ClientOrderID)
	want := ordRow{
		AccountID: "LV100001", ClientOrderID: "mkt", OrderStatus: "Filled", Executed: 100, LastQuantity: 100,
		PriceAvg: "190", LimitPrice: "0", PriceStop: "0", Route: "SMART", Symbol: "AAPL", Side: "Buy",
		OpenClose: "Open", OrderType: "Market", OrderQuantity: 100, SecurityType: "Stock", TimeInForce: "Day",
		MarginRequirement: "0", MaintenanceRequirement: "0",
	}
	got.StartTime, got.LastUpdated = "", ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("market order (-want +got):\n%s", diff)
	}
	if o, _ := ordGet(t, b, b.Live, "LV100001", lim.ClientOrderID); o.OrderStatus != "Accepted" || o.LeavesQuantity != 20 {
		t.Errorf("limit below the market: %s leaves %d, want Accepted 20", o.OrderStatus, o.LeavesQuantity)
	}

	b.Sim.SetPrice("SPY", decimal.RequireFromString("514.25"))
	if o, _ := ordGet(t, b, b.Live, "LV100001", lim.ClientOrderID); o.OrderStatus != "Filled" || o.PriceAvg != "514.25" {
		t.Errorf("limit after the price moved: %s at %s, want Filled at 514.25", o.OrderStatus, o.PriceAvg)
	}

	// A sell stop below the market triggers when the price falls through it.
	stop := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "stop", "side": "Sell", "openClose": "Close",
		"orderType": "Stop", "limitPrice": nil, "stopPrice": 185, "orderQuantity": 40}))
	b.Advance(50 * time.Millisecond)
	if o, _ := ordGet(t, b, b.Live, "LV100001", stop.ClientOrderID); o.OrderStatus != "Accepted" {
		t.Fatalf("stop above the trigger: %s %q, want Accepted", o.OrderStatus, o.text())
	}
	b.Sim.SetPrice("AAPL", decimal.RequireFromString("184.5"))
	if o, _ := ordGet(t, b, b.Live, "LV100001", stop.ClientOrderID); o.OrderStatus != "Filled" || o.PriceAvg != "184.5" {
		t.Errorf("stop after the trigger: %s at %s, want Filled at 184.5", o.OrderStatus, o.PriceAvg)
	}

	book := ordBook(t, b, b.Live, "LV100001")
	var ids []string
	for _, o := range book {
		ids = append(ids, o.ClientOrderID+":"+o.OrderStatus)
	}
	if diff := cmp.Diff([]string{"mkt:Filled", "lim:Filled", "stop:Filled"}, ids); diff != "" {
		t.Errorf("book (-want +got):\n%s", diff)
	}

	// Today's fills reach the archive with the reference's fields.
	r := b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/orders/start-date/2026-11-25", nil)
	var arch struct {
		Orders []map[string]any `json:"orders"`
	}
	r.JSON(t, &arch)
	if len(arch.Orders) != 3 {
		t.Fatalf("archive has %d rows, want 3: %s", len(arch.Orders), r.Body)
	}
	first := arch.Orders[0]
	for _, k := range []string{"tradeId", "qty", "price", "commission", "totalFees", "grossProceeds", "netProceeds", "tradeDate", "accountId", "symbol", "side", "securityType", "currency", "settleDate", "entryDate"} {
		if _, ok := first[k]; !ok {
			t.Errorf("fill row lacks %s: %v", k, first)
		}
	}
	for _, k := range []string{"clientOrderId", "orderStatus"} {
		if _, ok := first[k]; ok {
			t.Errorf("fill row carries %s", k)
		}
	}
	if first["commission"] != 0.5 || first["grossProceeds"] != -19000.0 || first["netProceeds"] != -19000.5 || first["tradeDate"] != "2026-11-25T00:00:00" {
		t.Errorf("fill row %v", first)
	}
	if et, ok := first["execTime"].(string); ok && et != "2026-11-25T10:00:00" {
		t.Errorf("execTime %q, want the zone-less Eastern time", et)
	}
}

// Spec: "Order statuses" (DELETE by id) and "HTTP status map" (cancel rows).
func TestOrderCancel(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "work"}))
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "rej", "route": nil}))
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "fill", "orderType": "Market", "limitPrice": nil}))
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "early"}))
	b.Advance(50 * time.Millisecond)
	late := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "late"}))

	del := func(key simtest.Key, acct, id string) *simtest.Response {
		return b.Do(t, key, "DELETE", "/v1/api/accounts/"+acct+"/orders/"+id, nil)
	}
	t.Run("not yet registered is 404", func(t *testing.T) {
		if r := del(b.Live, "LV100001", late.ClientOrderID); r.Status != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("status %d %q, want 404 text", r.Status, r.Header.Get("Content-Type"))
		}
	})
	t.Run("working order is Canceled with the full order", func(t *testing.T) {
		r := del(b.Live, "lv100001", "work")
		var o ordRow
		r.JSON(t, &o)
		if r.Status != http.StatusOK || o.OrderStatus != "Canceled" || o.CanceledQuantity != 10 || o.LeavesQuantity != 0 || o.Symbol != "AAPL" {
			t.Errorf("status %d order %+v", r.Status, o)
		}
		if r := del(b.Live, "LV100001", "work"); r.Status != http.StatusNotFound {
			t.Errorf("second cancel: %d, want 404", r.Status)
		}
	})
	t.Run("Rejected stays Rejected with R130 text", func(t *testing.T) {
		r := del(b.Live, "LV100001", "rej")
		var o ordRow
		r.JSON(t, &o)
		if r.Status != http.StatusOK || o.OrderStatus != "Rejected" || !strings.HasPrefix(o.text(), "R130: ") {
			t.Errorf("status %d order %s %q", r.Status, o.OrderStatus, o.text())
		}
		if g, _ := ordGet(t, b, b.Live, "LV100001", "rej"); !strings.HasPrefix(g.text(), "R130: ") {
			t.Errorf("R130 did not mask the original reason: %q", g.text())
		}
	})
	t.Run("Filled is 404", func(t *testing.T) {
		if r := del(b.Live, "LV100001", "fill"); r.Status != http.StatusNotFound {
			t.Errorf("status %d, want 404", r.Status)
		}
	})
	t.Run("unknown id is 404", func(t *testing.T) {
		if r := del(b.Live, "LV100001", "nope"); r.Status != http.StatusNotFound {
			t.Errorf("status %d, want 404", r.Status)
		}
	})
	t.Run("path account of another key is 400 CancelOrderWithResponse", func(t *testing.T) {
		r := del(b.Live2, "LV100001", "early")
		var e struct {
			StatusCode string `json:"statusCode"`
			Message    string `json:"message"`
			Detail     string `json:"detail"`
			Error      bool   `json:"error"`
		}
		r.JSON(t, &e)
		if r.Status != http.StatusBadRequest || e.StatusCode != "BadRequest" || e.Message != "CancelOrderWithResponse" || e.Detail == "" || !e.Error {
			t.Errorf("status %d body %s", r.Status, r.Body)
		}
	})
	t.Run("no keys is 401 JSON", func(t *testing.T) {
		r := del(simtest.Key{}, "LV100001", "early")
		var e struct {
			StatusCode string  `json:"statusCode"`
			Detail     *string `json:"detail"`
		}
		r.JSON(t, &e)
		if r.Status != http.StatusUnauthorized || e.StatusCode != "Unauthorized" || e.Detail != nil {
			t.Errorf("status %d body %s", r.Status, r.Body)
		}
		if o, _ := ordGet(t, b, b.Live, "LV100001", "early"); o.OrderStatus != "Accepted" {
			t.Errorf("order is %s after refused cancels, want Accepted", o.OrderStatus)
		}
	})
	t.Run("Expired day order is 404", func(t *testing.T) {
		b.Advance(6 * time.Hour) // past 16:00 ET
		if o, _ := ordGet(t, b, b.Live, "LV100001", "early"); o.OrderStatus != "Expired" {
			t.Fatalf("day order after the close is %s, want Expired", o.OrderStatus)
		}
		if r := del(b.Live, "LV100001", "early"); r.Status != http.StatusNotFound {
			t.Errorf("status %d, want 404", r.Status)
		}
	})
}

// Spec: "Orders" (DELETE /v1/api/accounts/orders) and reference notes: the
// account comes in a form or multipart body, a JSON body is 404, symbol is
// an optional query filter, and the answer is an acceptance message.
func TestOrderCancelAll(t *testing.T) {
	t.Parallel()
	multipartBody := func(fields map[string]string) (string, []byte) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for k, v := range fields {
			w.WriteField(k, v)
		}
		w.Close()
		return w.FormDataContentType(), buf.Bytes()
	}
	mpType, mpBody := multipartBody(map[string]string{"account": "LV100001"})
	cases := []struct {
		name, query, ctype string
		body               []byte
		key                func(b *simtest.Bundle) simtest.Key
		status             int
		left               []string // orders still working afterwards
	}{
		{name: "form body cancels every working order", ctype: "application/x-www-form-urlencoded", body: []byte("account=LV100001"), status: 200},
		{name: "multipart body", ctype: mpType, body: mpBody, status: 200},
		{name: "lowercase account", ctype: "application/x-www-form-urlencoded", body: []byte("account=lv100001"), status: 200},
		{name: "symbol filter in the query", query: "?symbol=SPY", ctype: "application/x-www-form-urlencoded", body: []byte("account=LV100001"), status: 200, left: []string{"a1", "a2"}},
		{name: "JSON body is 404 text", ctype: "application/json", body: []byte(`{"account":"LV100001"}`), status: 404, left: []string{"a1", "a2", "s1"}},
		{name: "missing account is 400 JSON", ctype: "application/x-www-form-urlencoded", body: []byte("symbol=AAPL"), status: 400, left: []string{"a1", "a2", "s1"}},
		{name: "foreign account is 400 JSON", ctype: "application/x-www-form-urlencoded", body: []byte("account=LV300001"), status: 400, left: []string{"a1", "a2", "s1"}},
		{name: "bad credentials are 400 JSON", ctype: "application/x-www-form-urlencoded", body: []byte("account=LV100001"), status: 400, left: []string{"a1", "a2", "s1"},
			key: func(b *simtest.Bundle) simtest.Key { return simtest.Key{ID: b.Live.ID, Secret: "x"} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := ordSim(t)
			for _, o := range []map[string]any{{"clientOrderId": "a1"}, {"clientOrderId": "a2", "limitPrice": 170}, {"clientOrderId": "s1", "symbol": "SPY", "limitPrice": 500}} {
				ordPlace(t, b, b.Live, "LV100001", ordBody(o))
			}
			b.Advance(time.Second)
			key := b.Live
			if tc.key != nil {
				key = tc.key(b)
			}
			r := ordRaw(t, b, key, "DELETE", "/v1/api/accounts/orders"+tc.query, tc.ctype, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d (body %q)", r.Status, tc.status, r.Body)
			}
			switch tc.status {
			case 200:
				var m struct{ Message string }
				r.JSON(t, &m)
				if m.Message == "" {
					t.Errorf("body %s, want a message", r.Body)
				}
			case 404:
				if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
					t.Errorf("content type %q, want text/plain", r.Header.Get("Content-Type"))
				}
			case 400:
				var e struct{ StatusCode string }
				r.JSON(t, &e)
				if e.StatusCode != "BadRequest" {
					t.Errorf("body %s", r.Body)
				}
			}
			b.Advance(time.Second)
			var left []string
			for _, o := range ordBook(t, b, b.Live, "LV100001") {
				if o.OrderStatus == "Accepted" {
					left = append(left, o.ClientOrderID)
				}
			}
			if diff := cmp.Diff(tc.left, left); diff != "" {
				t.Errorf("working orders (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("always 200 even when nothing is open", func(t *testing.T) {
		t.Parallel()
		b := ordSim(t)
		r := ordRaw(t, b, b.Paper, "DELETE", "/v1/api/accounts/orders", "application/x-www-form-urlencoded", []byte("account=PP200001"))
		if r.Status != http.StatusOK {
			t.Errorf("status %d body %s", r.Status, r.Body)
		}
	})
}

// Spec: "Route record", reference notes (envelope, timesInForce), and
// "Paper versus live" (route auto-assigned on paper).
func TestOrderRoutes(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	type route struct {
		RouteName     string   `json:"routeName"`
		SecurityTypes []string `json:"securityTypes"`
		OrderTypes    []string `json:"orderTypes"`
		TimesInForce  []string `json:"timesInForce"`
		UseDisplayQty bool     `json:"useDisplayQty"`
	}
	get := func(key simtest.Key, acct string) map[string]route {
		var out struct{ Routes []route }
		r := b.Do(t, key, "GET", "/v1/api/accounts/"+acct+"/routes", nil)
		r.JSON(t, &out)
		m := map[string]route{}
		for _, rt := range out.Routes {
			m[rt.RouteName] = rt
		}
		return m
	}
	paper := get(b.Paper, "PP200001")
	if diff := cmp.Diff(map[string]route{
		"PAPER":  {"PAPER", []string{"Stock", "Option"}, []string{"Market", "Limit", "Stop", "StopLimit"}, []string{"Day", "GoodTillCancel", "GoodTillCrossing"}, false},
		"PAPERM": {"PAPERM", []string{"MLEG"}, []string{"Market", "Limit"}, []string{"Day"}, false},
	}, paper); diff != "" {
		t.Errorf("paper routes (-want +got):\n%s", diff)
	}
	live := get(b.Live, "LV100001")
	for _, name := range []string{"SMART", "CTDL", "SMARTO", "SMARTM", "ARCA"} {
		if _, ok := live[name]; !ok {
			t.Errorf("live routes lack %s", name)
		}
	}
	if arca := live["ARCA"]; !contains(arca.TimesInForce, "IOC") || !contains(arca.TimesInForce, "FOK") {
		t.Errorf("ARCA times in force %v, want IOC and FOK", arca.TimesInForce)
	}
	if !contains(live["SMART"].OrderTypes, "RangeOrder") || !contains(live["SMARTM"].SecurityTypes, "MLEG") {
		t.Errorf("SMART/SMARTM %+v %+v", live["SMART"], live["SMARTM"])
	}

	// Paper auto-assigns PAPER (or PAPERM for Mleg) when route is omitted.
	st := ordPlace(t, b, b.Paper, "PP200001", ordBody(map[string]any{"route": nil, "orderType": "Market", "limitPrice": nil}))
	ml := ordPlace(t, b, b.Paper, "PP200001", ordBody(map[string]any{"route": nil, "securityType": "Mleg", "symbol": "AAPL", "limitPrice": 1.25,
		"legs": []map[string]any{{"symbol": "AAPL261218C00190000", "side": "Buy"}, {"symbol": "AAPL261218C00200000", "side": "Sell"}}}))
	b.Advance(50 * time.Millisecond)
	s, _ := ordGet(t, b, b.Paper, "PP200001", st.ClientOrderID)
	m, _ := ordGet(t, b, b.Paper, "PP200001", ml.ClientOrderID)
	if s.Route != "PAPER" || s.OrderStatus != "Filled" || m.Route != "PAPERM" || m.OrderStatus != "Accepted" {
		t.Errorf("paper auto-route: stock %s %s, mleg %s %s %q", s.Route, s.OrderStatus, m.Route, m.OrderStatus, m.text())
	}
	// ARCA carries IOC on live: what does not fill at once is cancelled.
	ioc := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"route": "ARCA", "timeInForce": "IOC"}))
	b.Advance(50 * time.Millisecond)
	if o, _ := ordGet(t, b, b.Live, "LV100001", ioc.ClientOrderID); o.OrderStatus != "Canceled" || o.Text != nil {
		t.Errorf("IOC on ARCA below the market: %s %q, want Canceled", o.OrderStatus, o.text())
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Spec: "Orders" (archive and paginated history), "Paper versus live"
// (paper archive always empty) and "Other bounds" (one week, one year,
// page size at most 100).
func TestOrderHistory(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"orderType": "Market", "limitPrice": nil}))
	ordPlace(t, b, b.Paper, "PP200001", ordBody(map[string]any{"orderType": "Market", "limitPrice": nil, "route": nil}))
	b.Advance(50 * time.Millisecond)

	type fillRow struct {
		TradeID   json.Number `json:"tradeId"`
		Symbol    string      `json:"symbol"`
		Side      string      `json:"side"`
		TradeDate string      `json:"tradeDate"`
	}
	archive := func(key simtest.Key, acct, date string) (int, []fillRow) {
		r := b.Do(t, key, "GET", "/v1/api/accounts/"+acct+"/orders/start-date/"+date, nil)
		var out struct{ Orders []fillRow }
		if r.Status == http.StatusOK {
			r.JSON(t, &out)
		}
		return r.Status, out.Orders
	}
	summary := func(rows []fillRow) []string {
		var s []string
		for _, r := range rows {
			if _, err := r.TradeID.Int64(); err != nil {
				t.Errorf("tradeId %q is not an integer", r.TradeID)
			}
			s = append(s, r.TradeDate[:10]+" "+r.Side+" "+r.Symbol)
		}
		return s
	}
	t.Run("archive from a date within the week", func(t *testing.T) {
		_, rows := archive(b.Live, "LV100001", "2026-11-19")
		want := []string{"2026-11-19 Sell AAPL", "2026-11-20 Buy MSFT", "2026-11-25 Buy AAPL"}
		if diff := cmp.Diff(want, summary(rows)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("archive reaches back one week only", func(t *testing.T) {
		_, rows := archive(b.Live, "LV100001", "2026-01-01")
		want := []string{"2026-11-18 Buy SPY", "2026-11-18 Sell SPY", "2026-11-19 Sell AAPL", "2026-11-20 Buy MSFT", "2026-11-25 Buy AAPL"}
		if diff := cmp.Diff(want, summary(rows)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("paper archive is always empty", func(t *testing.T) {
		status, rows := archive(b.Paper, "PP200001", "2026-11-01")
		if status != http.StatusOK || len(rows) != 0 {
			t.Errorf("status %d rows %v", status, rows)
		}
	})
	t.Run("invalid date is 404", func(t *testing.T) {
		if status, _ := archive(b.Live, "LV100001", "2026-13-40"); status != http.StatusNotFound {
			t.Errorf("status %d, want 404", status)
		}
	})

	type page struct {
		Pagination struct {
			CurrentLimit, CurrentOffset, TotalRecords int
		}
		TradingHistory []fillRow
	}
	paged := func(query string) page {
		r := b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/orders-with-pagination/start-date/2026-11-01"+query, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("status %d body %s", r.Status, r.Body)
		}
		var p page
		r.JSON(t, &p)
		return p
	}
	t.Run("paginated: whole window", func(t *testing.T) {
		p := paged("")
		if p.Pagination.TotalRecords != 6 || len(p.TradingHistory) != 6 || p.Pagination.CurrentLimit != 100 {
			t.Errorf("%+v", p)
		}
	})
	t.Run("paginated: offset and limit, clamped to 100", func(t *testing.T) {
		p := paged("?offset=1&limit=2")
		if diff := cmp.Diff([]string{"2026-11-18 Buy SPY", "2026-11-18 Sell SPY"}, summary(p.TradingHistory)); diff != "" || p.Pagination.TotalRecords != 6 {
			t.Errorf("page %+v (-want +got):\n%s", p.Pagination, diff)
		}
		if p := paged("?limit=500"); p.Pagination.CurrentLimit != 100 {
			t.Errorf("currentLimit %d, want 100", p.Pagination.CurrentLimit)
		}
	})
	t.Run("paginated: symbol filter and numberOfDays", func(t *testing.T) {
		if p := paged("?symbol=AAPL"); p.Pagination.TotalRecords != 3 {
			t.Errorf("AAPL rows %d, want 3", p.Pagination.TotalRecords)
		}
		if p := paged("?numberOfDays=18"); p.Pagination.TotalRecords != 3 { // 11-01 .. 11-18
			t.Errorf("18-day window rows %d, want 3: %v", p.Pagination.TotalRecords, summary(p.TradingHistory))
		}
	})
}

// Spec: "Rate limits": the order routes answer 429 with an empty body
// beyond their bucket (order.get 2/s here), and recover after a second.
func TestOrderRateLimit(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	for i, want := range []int{404, 404, 429} {
		r := b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/order/none", nil)
		if r.Status != want || (want == 429 && len(r.Body) != 0) {
			t.Errorf("call %d: status %d body %q, want %d", i, r.Status, r.Body, want)
		}
	}
	b.Advance(time.Second)
	if r := b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/order/none", nil); r.Status != http.StatusNotFound {
		t.Errorf("after a second: %d, want 404", r.Status)
	}
}

// Fidelity where the spec is silent ("Orders": which fields are required is
// not shown; the reference describes openClose as the options flag): a stock
// order without openClose is placed, listed, fetched and cancelled like any
// other, its intent read from the position.
func TestStockOrderWithoutOpenClose(t *testing.T) {
	t.Parallel()
	b := ordSim(t)
	const acct = "LV100001"
	placed := ordPlace(t, b, b.Live, acct, ordBody(map[string]any{"clientOrderId": "no-oc", "openClose": nil, "limitPrice": 150}))
	if placed.OrderStatus != "PendingNew" || placed.OpenClose != "Open" {
		t.Fatalf("placed %s openClose %q, want PendingNew inferred Open", placed.OrderStatus, placed.OpenClose)
	}
	b.Advance(50 * time.Millisecond)
	got, ok := ordGet(t, b, b.Live, acct, "no-oc")
	if !ok || got.OrderStatus != "Accepted" {
		t.Fatalf("get: ok %v status %s, want Accepted", ok, got.OrderStatus)
	}
	listed := false
	for _, o := range ordBook(t, b, b.Live, acct) {
		listed = listed || o.ClientOrderID == "no-oc"
	}
	if !listed {
		t.Error("the order is not in the book")
	}
	r := b.Do(t, b.Live, "DELETE", "/v1/api/accounts/"+acct+"/orders/no-oc", nil)
	var canceled ordRow
	r.JSON(t, &canceled)
	if r.Status != http.StatusOK || canceled.OrderStatus != "Canceled" {
		t.Errorf("cancel: %d %s", r.Status, canceled.OrderStatus)
	}

	// Intent from the position: LV100001 holds 100 MSFT long, so a Sell
	// closes it; a Sell of HTBX (nothing held) opens a short, which needs
	// located shares like an explicit Sell Open.
	sell := ordPlace(t, b, b.Live, acct, ordBody(map[string]any{"clientOrderId": "close-msft", "openClose": nil,
		"symbol": "MSFT", "side": "Sell", "orderType": "Market", "limitPrice": nil, "orderQuantity": 100}))
	short := ordPlace(t, b, b.Live, acct, ordBody(map[string]any{"clientOrderId": "short-htbx", "openClose": nil,
		"symbol": "HTBX", "side": "Sell", "orderType": "Market", "limitPrice": nil, "orderQuantity": 100}))
	if sell.OpenClose != "Close" || short.OpenClose != "Open" {
		t.Errorf("inferred %q and %q, want Close and Open", sell.OpenClose, short.OpenClose)
	}
	b.Advance(50 * time.Millisecond)
	if o, _ := ordGet(t, b, b.Live, acct, "close-msft"); o.OrderStatus != "Filled" {
		t.Errorf("sell of the long: %s %q, want Filled", o.OrderStatus, o.text())
	}
	if o, _ := ordGet(t, b, b.Live, acct, "short-htbx"); o.OrderStatus != "Rejected" || !strings.Contains(o.text(), "no locate") {
		t.Errorf("short without a locate: %s %q, want a locate rejection", o.OrderStatus, o.text())
	}

	// The other optional fields default: no securityType is Stock, no
	// timeInForce is Day.
	bare := ordPlace(t, b, b.Live, acct, ordBody(map[string]any{"clientOrderId": "bare", "openClose": nil, "securityType": nil, "timeInForce": nil}))
	if bare.SecurityType != "Stock" || bare.TimeInForce != "Day" {
		t.Errorf("defaults: securityType %q timeInForce %q, want Stock and Day", bare.SecurityType, bare.TimeInForce)
	}
}
