package brokerclient_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

func pricep(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }

// stockOrder is a Day stock order on the live SMART route.
func stockOrder(side brokerclient.Side, oc brokerclient.OpenClose, typ brokerclient.OrderType, symbol string, qty int64) brokerclient.OrderRequest {
	return brokerclient.OrderRequest{
		Symbol: symbol, Side: side, OpenClose: oc, OrderType: typ,
		SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay,
		OrderQuantity: qty, Route: "SMART",
	}
}

// workingBuy is a limit buy far below the market: it is accepted and works.
func workingBuy(symbol, limit string) brokerclient.OrderRequest {
	r := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeLimit, symbol, 100)
	r.LimitPrice = pricep(limit)
	return r
}

// TestOrderRequestValidation: spec "Orders" placement body and the
// cross-cutting conventions (case-sensitive enumerations, whole quantities,
// four price decimals, no negative prices): refused with an *InputError and
// nothing sent.
func TestOrderRequestValidation(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, true)
	ok := workingBuy("AAPL", "150")
	with := func(edit func(r *brokerclient.OrderRequest)) brokerclient.OrderRequest {
		r := ok
		edit(&r)
		return r
	}
	legs := []brokerclient.OrderLegRequest{
		{Symbol: "AAPL261218C00190000", Side: brokerclient.SideBuy},
		{Symbol: "AAPL261218C00200000", Side: brokerclient.SideSell},
	}
	tests := []struct {
		name      string
		account   string
		req       brokerclient.OrderRequest
		wantField string
	}{
		{"empty account", "", ok, "accountId"},
		{"empty symbol", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Symbol = "" }), "symbol"},
		{"lowercase symbol", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Symbol = "aapl" }), "symbol"},
		{"symbol over 30 characters", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Symbol = strings.Repeat("A", 31) }), "symbol"},
		{"symbol with a space", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Symbol = "BRK B" }), "symbol"},
		{"symbol with a slash", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Symbol = "BRK/B" }), "symbol"},
		{"zero quantity", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OrderQuantity = 0 }), "orderQuantity"},
		{"negative quantity", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OrderQuantity = -5 }), "orderQuantity"},
		{"quantity above 1,000,000", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OrderQuantity = 1_000_001 }), "orderQuantity"},
		{"side wrong case", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Side = "buy" }), "side"},
		{"side Short does not exist", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Side = "Short" }), "side"},
		{"orderType wrong case", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OrderType = "limit" }), "orderType"},
		{"orderType not placeable", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OrderType = "TrailStop" }), "orderType"},
		{"securityType MLEG spelling", "LV100001", with(func(r *brokerclient.OrderRequest) { r.SecurityType = "MLEG" }), "securityType"},
		{"timeInForce wrong case", "LV100001", with(func(r *brokerclient.OrderRequest) { r.TimeInForce = "DAY" }), "timeInForce"},
		{"timeInForce missing", "LV100001", with(func(r *brokerclient.OrderRequest) { r.TimeInForce = "" }), "timeInForce"},
		{"openClose wrong case", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OpenClose = "open" }), "openClose"},
		{"negative limit price", "LV100001", with(func(r *brokerclient.OrderRequest) { r.LimitPrice = pricep("-1") }), "limitPrice"},
		{"five decimals", "LV100001", with(func(r *brokerclient.OrderRequest) { r.LimitPrice = pricep("1.00001") }), "limitPrice"},
		{"negative stop price", "LV100001", with(func(r *brokerclient.OrderRequest) { r.StopPrice = pricep("-0.01") }), "stopPrice"},
		{"Limit without limitPrice", "LV100001", with(func(r *brokerclient.OrderRequest) { r.LimitPrice = nil }), "limitPrice"},
		{"Stop without stopPrice", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OrderType = brokerclient.OrderTypeStop }), "stopPrice"},
		{"StopLimit without stopPrice", "LV100001", with(func(r *brokerclient.OrderRequest) { r.OrderType = brokerclient.OrderTypeStopLimit }), "stopPrice"},
		{"StopLimit without limitPrice", "LV100001", with(func(r *brokerclient.OrderRequest) {
			r.OrderType, r.LimitPrice, r.StopPrice = brokerclient.OrderTypeStopLimit, nil, pricep("1")
		}), "limitPrice"},
		{"client order id over 375 characters", "LV100001", with(func(r *brokerclient.OrderRequest) { r.ClientOrderID = strings.Repeat("x", 376) }), "clientOrderId"},
		{"Mleg with one leg", "LV100001", with(func(r *brokerclient.OrderRequest) {
			r.SecurityType, r.Legs = brokerclient.SecurityTypeMleg, legs[:1]
		}), "legs"},
		{"Mleg legs not sorted by strike", "LV100001", with(func(r *brokerclient.OrderRequest) {
			r.SecurityType, r.Legs = brokerclient.SecurityTypeMleg, []brokerclient.OrderLegRequest{legs[1], legs[0]}
		}), "legs"},
		{"legs on a stock order", "LV100001", with(func(r *brokerclient.OrderRequest) { r.Legs = legs }), "legs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, resp, err := b.live.Orders.Place(t.Context(), tt.account, tt.req)
			var ie *brokercode.InputError
			if !errors.Is(err, brokercode.ErrInput) || !errors.As(err, &ie) {
				t.Fatalf("err %v, want an InputError", err)
			}
			if ie.Field != tt.wantField {
				t.Errorf("field %q (%v), want %q", ie.Field, err, tt.wantField)
			}
			if resp != nil {
				t.Errorf("a response came back: %v", resp.Status)
			}
		})
	}
	t.Cleanup(func() {
		if n := len(b.Sim.Requests()); n != 0 {
			t.Errorf("%d requests reached the simulator, want none", n)
		}
	})

	t.Run("valid requests pass", func(t *testing.T) {
		t.Parallel()
		for _, r := range []brokerclient.OrderRequest{
			ok,
			with(func(r *brokerclient.OrderRequest) { r.LimitPrice = pricep("0.0001") }),
			with(func(r *brokerclient.OrderRequest) { r.Symbol = "BRK.B" }),
			with(func(r *brokerclient.OrderRequest) {
				r.OrderType, r.LimitPrice, r.StopPrice = brokerclient.OrderTypeStop, nil, pricep("0") // R24 is the service's call
			}),
			with(func(r *brokerclient.OrderRequest) { r.SecurityType, r.Legs = brokerclient.SecurityTypeMleg, legs }),
		} {
			if err := r.Validate(); err != nil {
				t.Errorf("%+v: %v", r, err)
			}
		}
	})
}

// TestOrderPlaceWire: spec "Orders" POST body: exact key spellings, prices
// as JSON numbers, a client-generated clientOrderId, and the 200 order JSON.
func TestOrderPlaceWire(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	req := workingBuy("AAPL", "150.1234")
	o, resp, err := b.live.Orders.Place(t.Context(), "LV100001", req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 1 || o.OrderStatus != brokercode.OrderStatusPendingNew || o.Text != nil || o.Rejection() != nil {
		t.Errorf("order %+v attempts %d, want PendingNew with text null", o, resp.Attempts)
	}
	if _, err := uuid.Parse(o.ClientOrderID); err != nil {
		t.Errorf("clientOrderId %q is not the generated UUID: %v", o.ClientOrderID, err)
	}
	posts := b.sent("POST", "/order")
	if len(posts) != 1 {
		t.Fatalf("%d POSTs", len(posts))
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(posts[0].Body), &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]json.RawMessage{
		"clientOrderId": json.RawMessage(`"` + o.ClientOrderID + `"`),
		"symbol":        json.RawMessage(`"AAPL"`),
		"side":          json.RawMessage(`"Buy"`),
		"openClose":     json.RawMessage(`"Open"`),
		"orderType":     json.RawMessage(`"Limit"`),
		"securityType":  json.RawMessage(`"Stock"`),
		"timeInForce":   json.RawMessage(`"Day"`),
		"orderQuantity": json.RawMessage(`100`),
		"limitPrice":    json.RawMessage(`150.1234`),
		"route":         json.RawMessage(`"SMART"`),
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("wire body (-want +got):\n%s", diff)
	}

	t.Run("an id given is sent as is", func(t *testing.T) {
		r := workingBuy("MSFT", "300")
		r.ClientOrderID = "my-id-1"
		o, _, err := b.live.Orders.Place(t.Context(), "LV100001", r)
		if err != nil || o.ClientOrderID != "my-id-1" {
			t.Fatalf("%+v %v", o, err)
		}
	})

	t.Run("multi-leg on the paper multi-leg route", func(t *testing.T) {
		r := brokerclient.OrderRequest{
			Symbol: "AAPL", Side: brokerclient.SideBuy, OpenClose: brokerclient.OpenCloseOpen,
			OrderType: brokerclient.OrderTypeLimit, SecurityType: brokerclient.SecurityTypeMleg,
			TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: 1, LimitPrice: pricep("2.35"),
			Legs: []brokerclient.OrderLegRequest{
				{Symbol: "AAPL261218C00190000", Side: brokerclient.SideBuy},
				{Symbol: "AAPL261218C00200000", Side: brokerclient.SideSell, Ratio: 1},
			},
		}
		o, _, err := b.paper.Orders.Place(t.Context(), "PP200001", r)
		if err != nil {
			t.Fatal(err)
		}
		b.Advance(50 * time.Millisecond)
		got := b.order(t, b.paper, "PP200001", o.ClientOrderID)
		if got.OrderStatus != brokercode.OrderStatusAccepted || got.Route != "PAPERM" || got.LegCount != 2 || len(got.Legs) != 2 {
			t.Errorf("multi-leg order %+v", got)
		}
	})
}

// swapBody sends a fixed body on every POST instead of the client's, so a
// request the client would refuse reaches the simulator and its answer goes
// through the client's error taxonomy.
type swapBody struct {
	base http.RoundTripper
	body string
}

func (s swapBody) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(strings.NewReader(s.body))
		r.ContentLength = int64(len(s.body))
		r.GetBody = nil
	}
	return s.base.RoundTrip(r)
}

// TestOrderSchemaErrors: spec "HTTP status map", order schema or parse
// failure: 400 text/plain, one "- <field>: <message>" line per problem,
// parsed into ErrorResponse.Lines; negative prices are a synchronous R145.
func TestOrderSchemaErrors(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	const base = `"symbol":"AAPL","securityType":"Stock","timeInForce":"Day","route":"SMART"`
	tests := []struct {
		name      string
		raw       string // "" sends the client's own request
		req       brokerclient.OrderRequest
		wantLines []brokerclient.ValidationLine
	}{
		{
			name: "price above the service's cap passes the client and fails the schema",
			req:  workingBuy("AAPL", "10000"),
			wantLines: []brokerclient.ValidationLine{
				{Field: "limitPrice", Message: "Must be less than or equal to 9999.99"},
			},
		},
		{
			name: "fractional orderQuantity (Orders rule 4)",
			raw:  `{` + base + `,"side":"Buy","openClose":"Open","orderType":"Market","orderQuantity":1.5}`,
			wantLines: []brokerclient.ValidationLine{
				{Field: "orderQuantity", Message: "Invalid type. Expected: integer, given: number."},
			},
		},
		{
			name: "enumeration in the wrong case",
			raw:  `{` + base + `,"side":"buy","openClose":"Open","orderType":"Market","orderQuantity":1}`,
			wantLines: []brokerclient.ValidationLine{
				{Field: "side", Message: `side must be one of the following: "Buy", "Sell"`},
			},
		},
		{
			name: "several missing fields, one line each",
			raw:  `{` + base + `,"orderQuantity":1}`,
			wantLines: []brokerclient.ValidationLine{
				{Field: "(root)", Message: "side is required"},
				{Field: "(root)", Message: "orderType is required"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := b.live
			req := tt.req
			if tt.raw != "" {
				c = b.Client(t, b.Live, brokerclient.WithHTTPClient(&http.Client{Transport: swapBody{b.Server.Client().Transport, tt.raw}}))
				req = workingBuy("AAPL", "1")
			}
			_, resp, err := c.Orders.Place(t.Context(), "LV100001", req)
			var er *brokerclient.ErrorResponse
			if !errors.As(err, &er) || !errors.Is(err, brokerclient.ErrBadRequest) || errors.Is(err, brokerclient.ErrAccount) {
				t.Fatalf("err %v, want a 400 ErrorResponse", err)
			}
			if errors.Is(err, brokerclient.ErrOutcomeUnknown) {
				t.Error("a 400 is a definite answer, not an unknown outcome")
			}
			if er.StatusCode != 400 || !strings.HasPrefix(er.ContentType, "text/plain") || resp.StatusCode != 400 {
				t.Errorf("status %d content type %q", er.StatusCode, er.ContentType)
			}
			if diff := cmp.Diff(tt.wantLines, er.Lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("negative price is a synchronous R145 rejection", func(t *testing.T) {
		t.Parallel()
		raw := `{` + base + `,"clientOrderId":"neg-1","side":"Buy","openClose":"Open","orderType":"Limit","orderQuantity":1,"limitPrice":-1}`
		c := b.Client(t, b.Live, brokerclient.WithHTTPClient(&http.Client{Transport: swapBody{b.Server.Client().Transport, raw}}))
		o, _, err := c.Orders.Place(t.Context(), "LV100001", workingBuy("AAPL", "1"))
		if err != nil {
			t.Fatal(err)
		}
		rej := o.Rejection()
		if rej == nil || rej.Code != "R145" || rej.ClientOrderID != "neg-1" || !errors.Is(rej, brokerclient.ErrOrderRejected) {
			t.Errorf("rejection %+v", rej)
		}
	})

	t.Run("account of another key is the 400 account JSON", func(t *testing.T) {
		t.Parallel()
		_, _, err := b.live.Orders.Place(t.Context(), "PP200001", workingBuy("AAPL", "1"))
		var er *brokerclient.ErrorResponse
		if !errors.Is(err, brokerclient.ErrAccount) || !errors.As(err, &er) || er.Status != "BadRequest" || len(er.Lines) != 0 {
			t.Fatalf("err %v, want ErrAccount", err)
		}
	})
}

// TestOrderRejectionCodes: spec "Order rejection codes": the R-code is parsed
// from the start of text; synchronous rejections come back from Place,
// asynchronous ones go PendingNew then Rejected about 50 ms later.
func TestOrderRejectionCodes(t *testing.T) {
	t.Parallel()
	stop := func(side brokerclient.Side, price string, route string) brokerclient.OrderRequest {
		r := stockOrder(side, brokerclient.OpenCloseOpen, brokerclient.OrderTypeStop, "AAPL", 10)
		r.StopPrice, r.Route = pricep(price), route
		return r
	}
	noRoute := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeMarket, "AAPL", 10)
	noRoute.Route = ""
	ioc := workingBuy("AAPL", "150")
	ioc.TimeInForce = brokerclient.TimeInForceIOC
	restricted := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeLimit, "RSTR", 10)
	restricted.LimitPrice = pricep("15")
	tests := []struct {
		name        string
		account     string
		req         brokerclient.OrderRequest
		async       bool
		wantCode    string
		wantBroker  bool
		wantNilText bool
	}{
		{name: "R24 stop price of zero", account: "LV100001", req: stop(brokerclient.SideBuy, "0", "SMART"), async: true, wantCode: "R24"},
		{name: "R54 no route on a live account", account: "LV100001", req: noRoute, async: true, wantCode: "R54"},
		{name: "R54 paper route on a live account", account: "LV100001", req: func() brokerclient.OrderRequest { r := noRoute; r.Route = "PAPER"; return r }(), async: true, wantCode: "R54"},
		{name: "R118 without a route is asynchronous", account: "LV100001", req: stop(brokerclient.SideBuy, "100", ""), async: true, wantCode: "R118"},
		{name: "R06 restricted symbol far from the band", account: "LV100001", req: restricted, async: true, wantCode: "R06"},
		{name: "venue decline carries no code", account: "LV100001", req: ioc, async: true, wantBroker: true},
		{name: "risk check with null text on a non-Active account", account: "LV100002", req: workingBuy("AAPL", "150"), wantNilText: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := acctSetup(t, true)
			o, _, err := b.live.Orders.Place(t.Context(), tt.account, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.async {
				if o.OrderStatus != brokercode.OrderStatusPendingNew || o.Text != nil {
					t.Fatalf("first answer %s %v, want PendingNew with text null", o.OrderStatus, o.Text)
				}
				b.Advance(50 * time.Millisecond)
				o = b.order(t, b.live, tt.account, o.ClientOrderID)
				if d := o.LastUpdated.Sub(o.StartTime.Time).Round(time.Millisecond); d != 50*time.Millisecond {
					t.Errorf("lastUpdated %v - startTime %v, want about 50 ms", o.LastUpdated, o.StartTime)
				}
			}
			rej := o.Rejection()
			if rej == nil {
				t.Fatalf("status %s text %v, want Rejected", o.OrderStatus, o.Text)
			}
			if rej.Code != tt.wantCode || rej.BrokerRejected != tt.wantBroker || (rej.Text == nil) != tt.wantNilText {
				t.Errorf("rejection code %q broker %v text %v", rej.Code, rej.BrokerRejected, rej.Text)
			}
			if !o.IsTerminal() || rej.ClientOrderID != o.ClientOrderID {
				t.Errorf("terminal %v id %q", o.IsTerminal(), rej.ClientOrderID)
			}
		})
	}

	t.Run("R95 opening buy and sell at once", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, true)
		if _, _, err := b.live.Orders.Place(t.Context(), "LV100001", workingBuy("SPY", "400")); err != nil {
			t.Fatal(err)
		}
		b.Advance(50 * time.Millisecond) // the buy is Accepted and working
		sell := stockOrder(brokerclient.SideSell, brokerclient.OpenCloseOpen, brokerclient.OrderTypeLimit, "SPY", 10)
		sell.LimitPrice = pricep("600")
		o, _, err := b.live.Orders.Place(t.Context(), "LV100001", sell)
		if err != nil {
			t.Fatal(err)
		}
		b.Advance(50 * time.Millisecond)
		got := b.order(t, b.live, "LV100001", o.ClientOrderID)
		if rej := got.Rejection(); rej == nil || rej.Code != "R95" {
			t.Errorf("order %+v: rejection %+v, want R95", got, rej)
		}
	})

	t.Run("R114 reusing an id after cancel", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, false)
		r := workingBuy("AAPL", "150")
		r.ClientOrderID = "dup-1"
		if _, _, err := b.live.Orders.Place(t.Context(), "LV100001", r); err != nil {
			t.Fatal(err)
		}
		b.Advance(50 * time.Millisecond)
		c, _, err := b.live.Orders.Cancel(t.Context(), "LV100001", "dup-1")
		if err != nil || c.OrderStatus != brokercode.OrderStatusCanceled {
			t.Fatalf("cancel: %+v %v", c, err)
		}
		o, _, err := b.live.Orders.Place(t.Context(), "LV100001", r)
		if err != nil {
			t.Fatal(err)
		}
		rej := o.Rejection()
		if rej == nil || rej.Code != "R114" || rej.ClientOrderID != "dup-1" {
			t.Fatalf("second placement %+v, want a synchronous R114", o)
		}
	})

	t.Run("R118 with a route: synchronous, text null, id rewritten", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, false)
		r := stop(brokerclient.SideBuy, "100", "SMART")
		r.ClientOrderID = "stop-1"
		o, _, err := b.live.Orders.Place(t.Context(), "LV100001", r)
		if err != nil {
			t.Fatal(err)
		}
		rej := o.Rejection()
		if rej == nil || rej.Text != nil || rej.Code != "" || !strings.HasPrefix(o.ClientOrderID, "stop-1INVALID") {
			t.Fatalf("order %+v rejection %+v", o, rej)
		}
		b.Advance(time.Second)
		for _, id := range []string{"stop-1", o.ClientOrderID} {
			if _, _, err := b.live.Orders.Get(t.Context(), "LV100001", id); !errors.Is(err, brokerclient.ErrNotFound) {
				t.Errorf("get %s: %v, want 404", id, err)
			}
		}
		got, _, err := b.live.Orders.ResolveOrder(t.Context(), "LV100001", "stop-1")
		if err != nil || got.ClientOrderID != o.ClientOrderID {
			t.Fatalf("ResolveOrder: %+v %v, want the rewritten order from the book", got, err)
		}
	})
}

// TestOrderR78OutsideHours: spec R78: market orders outside 9:30 AM to
// 4:00 PM ET are rejected synchronously; extended-hours limit orders are not.
func TestOrderR78OutsideHours(t *testing.T) {
	t.Parallel()
	eight := time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC) // 08:00 ET
	b := acctSetup(t, true, simtest.WithStart(eight))
	o, _, err := b.live.Orders.Place(t.Context(), "LV100001",
		stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeMarket, "AAPL", 10))
	if err != nil {
		t.Fatal(err)
	}
	if rej := o.Rejection(); rej == nil || rej.Code != "R78" || rej.Text == nil || !strings.HasPrefix(*rej.Text, "R78") {
		t.Errorf("rejection %+v, want a synchronous R78", rej)
	}
	ext := workingBuy("AAPL", "150")
	ext.TimeInForce = brokerclient.TimeInForceDayPlus
	o, _, err = b.live.Orders.Place(t.Context(), "LV100001", ext)
	if err != nil {
		t.Fatal(err)
	}
	b.Advance(50 * time.Millisecond)
	if got := b.order(t, b.live, "LV100001", o.ClientOrderID); got.OrderStatus != brokercode.OrderStatusAccepted {
		t.Errorf("Day_Plus limit before the open: %s %v", got.OrderStatus, got.Text)
	}
}

// TestOrderGetAndBook: spec GET .../order/{clientOrderId} (404 until
// registered) and GET .../orders (today's book, any state, bare array).
func TestOrderGetAndBook(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, true)
	ctx := t.Context()
	book, _, err := b.paper.Orders.Book(ctx, "PP200001")
	if err != nil || book == nil || len(book) != 0 {
		t.Fatalf("empty book: %v %v, want an empty list", book, err)
	}

	paper := workingBuy("SPY", "400")
	paper.Route = "" // paper assigns a route when omitted
	o, _, err := b.paper.Orders.Place(ctx, "PP200001", paper)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.paper.Orders.Get(ctx, "PP200001", o.ClientOrderID); !errors.Is(err, brokerclient.ErrNotFound) {
		t.Errorf("get before registration: %v, want 404", err)
	}
	b.Advance(time.Second) // past registration, and the route's pacer (2/s, burst 1)
	got, _, err := b.paper.Orders.Get(ctx, "PP200001", o.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	if got.OrderStatus != brokercode.OrderStatusAccepted || got.Route != "PAPER" || !got.LimitPrice.Equal(dec("400")) ||
		got.LeavesQuantity != 100 || got.StartTime.IsZero() || got.StartTime.NoZone {
		t.Errorf("order %+v", got)
	}
	rejected := paper
	rejected.TimeInForce = brokerclient.TimeInForceIOC // not available on paper
	if _, _, err := b.paper.Orders.Place(ctx, "PP200001", rejected); err != nil {
		t.Fatal(err)
	}
	b.Advance(time.Second)
	book, _, err = b.paper.Orders.Book(ctx, "PP200001")
	if err != nil {
		t.Fatal(err)
	}
	var states []brokercode.OrderStatus
	for _, o := range book {
		states = append(states, o.OrderStatus)
	}
	if diff := cmp.Diff([]brokercode.OrderStatus{brokercode.OrderStatusAccepted, brokercode.OrderStatusRejected}, states); diff != "" {
		t.Errorf("book states (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", ".", "a/b"} {
		if _, _, err := b.paper.Orders.Get(ctx, "PP200001", bad); !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("id %q: %v, want InputError", bad, err)
		}
	}
}

// TestOrderCancel: spec "Order statuses" transitions for DELETE: working →
// Canceled; Rejected → still Rejected with R130; Filled/terminal → 404;
// not yet registered → 404; a foreign path account → 400 JSON.
func TestOrderCancel(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	ctx := t.Context()
	place := func(r brokerclient.OrderRequest) *brokerclient.Order {
		t.Helper()
		o, _, err := b.live.Orders.Place(ctx, "LV100001", r)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	working := place(workingBuy("AAPL", "150"))
	noRoute := workingBuy("MSFT", "300")
	noRoute.Route = ""
	rejected := place(noRoute)
	filled := place(stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeMarket, "SPY", 1))
	early := place(workingBuy("AAPL", "151"))
	if _, _, err := b.live.Orders.Cancel(ctx, "LV100001", early.ClientOrderID); !errors.Is(err, brokerclient.ErrNotFound) {
		t.Errorf("cancel before registration: %v, want 404 (Orders rule 5)", err)
	}
	b.Advance(50 * time.Millisecond)

	c, resp, err := b.live.Orders.Cancel(ctx, "LV100001", working.ClientOrderID)
	if err != nil || c.OrderStatus != brokercode.OrderStatusCanceled || c.CanceledQuantity != 100 || resp.Attempts != 1 {
		t.Errorf("cancel working: %+v %v", c, err)
	}
	if before := b.order(t, b.live, "LV100001", rejected.ClientOrderID).Rejection(); before == nil || before.Code != "R54" {
		t.Fatalf("setup: %+v, want R54", before)
	}
	c, _, err = b.live.Orders.Cancel(ctx, "LV100001", rejected.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	if rej := c.Rejection(); rej == nil || rej.Code != "R130" {
		t.Errorf("cancel of a Rejected order: %+v, want still Rejected with R130 masking R54", rej)
	}
	if got := b.order(t, b.live, "LV100001", filled.ClientOrderID); got.OrderStatus != brokercode.OrderStatusFilled {
		t.Fatalf("setup: %s", got.OrderStatus)
	}
	for name, id := range map[string]string{"filled": filled.ClientOrderID, "canceled": working.ClientOrderID, "unknown": "no-such-order"} {
		if _, _, err := b.live.Orders.Cancel(ctx, "LV100001", id); !errors.Is(err, brokerclient.ErrNotFound) {
			t.Errorf("cancel %s: %v, want ErrNotFound", name, err)
		}
	}

	_, _, err = b.live.Orders.Cancel(ctx, "PP200001", "x")
	var er *brokerclient.ErrorResponse
	if !errors.As(err, &er) || er.StatusCode != 400 || er.Message != "CancelOrderWithResponse" || errors.Is(err, brokerclient.ErrAccount) {
		t.Errorf("foreign account: %v, want 400 CancelOrderWithResponse", err)
	}

	t.Run("a retried cancel whose first attempt landed returns the order", func(t *testing.T) {
		o := place(workingBuy("AAPL", "152"))
		b.Advance(50 * time.Millisecond)
		path := "/v1/api/accounts/LV100001/orders/" + o.ClientOrderID
		if err := b.Sim.SetFaults(brokersim.Faults{Script: []brokersim.FaultStep{{Match: "DELETE " + path, Kind: "reset-after", Count: 1}}}); err != nil {
			t.Fatal(err)
		}
		c, resp, err := b.live.Orders.Cancel(ctx, "LV100001", o.ClientOrderID)
		if err != nil || c.OrderStatus != brokercode.OrderStatusCanceled {
			t.Fatalf("%+v %v", c, err)
		}
		if resp.Attempts != 2 || len(b.sent("DELETE", path)) != 2 {
			t.Errorf("attempts %d, deletes %d, want 2", resp.Attempts, len(b.sent("DELETE", path)))
		}
	})
}

// TestOrderCancelAll: spec DELETE /v1/api/accounts/orders: form body
// `account`, optional query `symbol`, a message confirming acceptance only.
func TestOrderCancelAll(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	ctx := t.Context()
	var ids []string
	for _, r := range []brokerclient.OrderRequest{workingBuy("AAPL", "150"), workingBuy("AAPL", "149"), workingBuy("MSFT", "300")} {
		o, _, err := b.live.Orders.Place(ctx, "LV100001", r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ClientOrderID)
	}
	b.Advance(50 * time.Millisecond)
	statuses := func() map[string]brokercode.OrderStatus {
		book, _, err := b.live.Orders.Book(ctx, "LV100001")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]brokercode.OrderStatus{}
		for _, o := range book {
			m[o.ClientOrderID] = o.OrderStatus
		}
		return m
	}

	msg, _, err := b.live.Orders.CancelAll(ctx, "LV100001", "AAPL")
	if err != nil || msg == "" {
		t.Fatalf("cancel all AAPL: %q %v", msg, err)
	}
	b.Advance(50 * time.Millisecond)
	want := map[string]brokercode.OrderStatus{
		ids[0]: brokercode.OrderStatusCanceled, ids[1]: brokercode.OrderStatusCanceled, ids[2]: brokercode.OrderStatusAccepted,
	}
	if diff := cmp.Diff(want, statuses()); diff != "" {
		t.Errorf("after cancel-all AAPL (-want +got):\n%s", diff)
	}
	if _, _, err := b.live.Orders.CancelAll(ctx, "LV100001", ""); err != nil {
		t.Fatal(err)
	}
	b.Advance(50 * time.Millisecond)
	want[ids[2]] = brokercode.OrderStatusCanceled
	if diff := cmp.Diff(want, statuses()); diff != "" {
		t.Errorf("after cancel-all (-want +got):\n%s", diff)
	}
	// Nothing open: still a message.
	if msg, _, err := b.live.Orders.CancelAll(ctx, "LV100001", ""); err != nil || msg == "" {
		t.Errorf("cancel all with nothing open: %q %v", msg, err)
	}

	sent := b.sent("DELETE", "/v1/api/accounts/orders")
	if len(sent) != 3 {
		t.Fatalf("%d cancel-all requests", len(sent))
	}
	form, err := url.ParseQuery(sent[0].Body)
	if err != nil || form.Get("account") != "LV100001" || len(form) != 1 || sent[0].Query != "symbol=AAPL" || sent[1].Query != "" {
		t.Errorf("first request body %q query %q; second query %q", sent[0].Body, sent[0].Query, sent[1].Query)
	}

	if _, _, err := b.live.Orders.CancelAll(ctx, "PP200001", ""); !errors.Is(err, brokerclient.ErrAccount) {
		t.Errorf("foreign account: %v, want ErrAccount", err)
	}
	if _, _, err := b.live.Orders.CancelAll(ctx, "LV100001", "aapl"); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("lowercase symbol: %v, want InputError", err)
	}
}

// TestOrderRoutes: spec "Route record": two synthetic paper routes, the
// live set queried, timesInForce and MLEG spellings.
func TestOrderRoutes(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	tests := []struct {
		name    string
		c       *brokerclient.Client
		account string
		want    []string
		allows  map[string][3]string // route → security type, order type, tif it allows
		refuses map[string][3]string
	}{
		{
			name: "paper", c: b.paper, account: "PP200001", want: []string{"PAPER", "PAPERM"},
			allows:  map[string][3]string{"PAPER": {"Stock", "Stop", "GoodTillCrossing"}, "PAPERM": {"Mleg", "Limit", "Day"}},
			refuses: map[string][3]string{"PAPER": {"Mleg", "", ""}, "PAPERM": {"", "", "GoodTillCancel"}},
		},
		{
			name: "live", c: b.live, account: "LV100001", want: []string{"SMART", "CTDL", "SMARTO", "SMARTM", "ARCA"},
			allows:  map[string][3]string{"ARCA": {"Stock", "Limit", "IOC"}, "SMARTO": {"Option", "Limit", "Day"}},
			refuses: map[string][3]string{"SMART": {"", "", "IOC"}, "SMARTM": {"Stock", "", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			routes, _, err := tt.c.Orders.Routes(t.Context(), tt.account)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]brokerclient.Route{}
			var names []string
			for _, r := range routes {
				names = append(names, r.RouteName)
				byName[r.RouteName] = r
				if len(r.TimesInForce) == 0 || len(r.OrderTypes) == 0 || len(r.SecurityTypes) == 0 {
					t.Errorf("route %+v has empty lists", r)
				}
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("routes (-want +got):\n%s", diff)
			}
			for name, a := range tt.allows {
				if !byName[name].Allows(brokerclient.SecurityType(a[0]), brokerclient.OrderType(a[1]), brokerclient.TimeInForce(a[2])) {
					t.Errorf("%s should allow %v", name, a)
				}
			}
			for name, a := range tt.refuses {
				if byName[name].Allows(brokerclient.SecurityType(a[0]), brokerclient.OrderType(a[1]), brokerclient.TimeInForce(a[2])) {
					t.Errorf("%s should not allow %v", name, a)
				}
			}
		})
	}
}

// TestOrderEasyToBorrow: spec Orders rule 6: exact, case-sensitive list
// match; typos are false; paper is always true; empty symbols or a lone dot
// never reach the router.
func TestOrderEasyToBorrow(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	tests := []struct {
		name    string
		c       *brokerclient.Client
		account string
		symbol  string
		want    bool
		wantErr bool
	}{
		{"on the list", b.live, "LV100001", "AAPL", true, false},
		{"hard to borrow", b.live, "LV100001", "HTBX", false, false},
		{"typo is false", b.live, "LV100001", "AAPLL", false, false},
		{"dotted class share", b.live, "LV100001", "BRK.B", false, false},
		{"paper is always true", b.paper, "PP200001", "HTBX", true, false},
		{"empty", b.live, "LV100001", "", false, true},
		{"lone dot", b.live, "LV100001", ".", false, true},
		{"slash", b.live, "LV100001", "A/B", false, true},
		{"lowercase", b.live, "LV100001", "aapl", false, true},
		{"empty account", b.live, "", "AAPL", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := tt.c.Orders.EasyToBorrow(t.Context(), tt.account, tt.symbol)
			if tt.wantErr {
				if !errors.Is(err, brokercode.ErrInput) {
					t.Errorf("err %v, want InputError", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v %v, want %v", got, err, tt.want)
			}
		})
	}
	t.Cleanup(func() {
		for _, r := range b.Sim.Requests() {
			if strings.HasSuffix(r.Path, "/symbol/") || strings.HasSuffix(r.Path, "/symbol/.") || strings.Contains(r.Path, "aapl") {
				t.Errorf("refused symbol reached the simulator: %s", r.Path)
			}
		}
	})
}

// TestOrderFills: spec GET .../orders/start-date/{date}: `{ orders: [fill
// rows] }`, one week back, paper always empty; some rows carry a bare local
// execTime.
func TestOrderFills(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	ctx := t.Context()
	from := time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC)
	fills, _, err := b.live.Orders.Fills(ctx, "LV100001", from)
	if err != nil {
		t.Fatal(err)
	}
	var syms []string
	for _, f := range fills {
		syms = append(syms, f.Symbol)
		if !f.TradeDate.DateOnly || f.TradeID == "" || !f.ExecTime.IsZero() {
			t.Errorf("seeded fill %+v", f)
		}
	}
	if diff := cmp.Diff([]string{"SPY", "SPY", "AAPL", "MSFT"}, syms); diff != "" {
		t.Errorf("fills from 2026-11-18 (-want +got):\n%s", diff)
	}
	if got := b.sent("GET", "/orders/start-date/"); len(got) != 1 || !strings.HasSuffix(got[0].Path, "/2026-11-18") {
		t.Errorf("request %+v", got)
	}

	// Two fills today: the simulator gives some rows a zone-less execTime.
	for range 2 {
		o, _, err := b.live.Orders.Place(ctx, "LV100001",
			stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeMarket, "AAPL", 10))
		if err != nil {
			t.Fatal(err)
		}
		b.Advance(50 * time.Millisecond)
		if got := b.order(t, b.live, "LV100001", o.ClientOrderID); got.OrderStatus != brokercode.OrderStatusFilled {
			t.Fatalf("setup: %s", got.OrderStatus)
		}
	}
	fills, _, err = b.live.Orders.Fills(ctx, "LV100001", simtest.Start)
	if err != nil {
		t.Fatal(err)
	}
	if len(fills) != 2 {
		t.Fatalf("today's fills %+v", fills)
	}
	zoneless := 0
	for _, f := range fills {
		if !f.Price.Equal(dec("190")) || f.Qty != 10 || !f.GrossProceeds.Equal(dec("-1900")) || !f.NetProceeds.Equal(f.GrossProceeds.Sub(f.Commission)) {
			t.Errorf("fill %+v", f)
		}
		if !f.ExecTime.IsZero() {
			if !f.ExecTime.NoZone {
				t.Errorf("execTime %+v, want zone-less", f.ExecTime)
			}
			zoneless++
		}
	}
	if zoneless == 0 {
		t.Error("no fill carried an execTime")
	}

	paper, _, err := b.paper.Orders.Fills(ctx, "PP200001", from)
	if err != nil || paper == nil || len(paper) != 0 {
		t.Errorf("paper archive: %v %v, want an empty list", paper, err)
	}
	if _, _, err := b.live.Orders.Fills(ctx, "LV100001", time.Time{}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("zero date: %v", err)
	}
}

// historyQuery is the part of a paginated-history request the tests check.
type historyQuery struct {
	Date, Days, Offset, Limit, Symbol string
}

// TestOrderHistory: spec GET .../orders-with-pagination/start-date/{date}:
// rows under tradingHistory, limit at most 100, offset raised by limit while
// offset + rows < totalRecords; windows over 365 days split.
func TestOrderHistory(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	tests := []struct {
		name      string
		start     time.Time
		opts      *brokerclient.HistoryOptions
		stopAfter int // stop the loop after this many rows (0: read all)
		wantSyms  []string
		wantQuery []historyQuery
	}{
		{
			name: "defaults: 30 days, limit 100, one page", start: day("2026-11-01"),
			wantSyms:  []string{"AAPL", "SPY", "SPY", "AAPL", "MSFT"},
			wantQuery: []historyQuery{{"2026-11-01", "30", "0", "100", ""}},
		},
		{
			name: "pages of two", start: day("2026-11-01"), opts: &brokerclient.HistoryOptions{Limit: 2},
			wantSyms: []string{"AAPL", "SPY", "SPY", "AAPL", "MSFT"},
			wantQuery: []historyQuery{
				{"2026-11-01", "30", "0", "2", ""}, {"2026-11-01", "30", "2", "2", ""}, {"2026-11-01", "30", "4", "2", ""},
			},
		},
		{
			name: "a 420-day window is read as 365 + 55 days", start: day("2025-10-01"), opts: &brokerclient.HistoryOptions{Days: 420, Limit: 2},
			wantSyms: []string{"AAPL", "SPY", "SPY", "AAPL", "MSFT"},
			wantQuery: []historyQuery{
				{"2025-10-01", "365", "0", "2", ""},
				{"2026-10-01", "55", "0", "2", ""}, {"2026-10-01", "55", "2", "2", ""}, {"2026-10-01", "55", "4", "2", ""},
			},
		},
		{
			name: "symbol filter", start: day("2026-11-01"), opts: &brokerclient.HistoryOptions{Symbol: "SPY", Days: 365},
			wantSyms:  []string{"SPY", "SPY"},
			wantQuery: []historyQuery{{"2026-11-01", "365", "0", "100", "SPY"}},
		},
		{
			name: "stopping early stops the reads", start: day("2026-11-01"), opts: &brokerclient.HistoryOptions{Limit: 2}, stopAfter: 1,
			wantSyms:  []string{"AAPL"},
			wantQuery: []historyQuery{{"2026-11-01", "30", "0", "2", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := acctSetup(t, false)
			var syms []string
			for f, err := range b.live.Orders.History(t.Context(), "LV100001", tt.start, tt.opts) {
				if err != nil {
					t.Fatal(err)
				}
				if f.TradeID == "" || !f.TradeDate.DateOnly {
					t.Errorf("row %+v", f)
				}
				syms = append(syms, f.Symbol)
				if len(syms) == tt.stopAfter {
					break
				}
			}
			if diff := cmp.Diff(tt.wantSyms, syms); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			var got []historyQuery
			for _, r := range b.sent("GET", "/orders-with-pagination/start-date/") {
				q, _ := url.ParseQuery(r.Query)
				got = append(got, historyQuery{r.Path[strings.LastIndex(r.Path, "/")+1:], q.Get("numberOfDays"), q.Get("offset"), q.Get("limit"), q.Get("symbol")})
			}
			if diff := cmp.Diff(tt.wantQuery, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("bad options are yielded as the only error, nothing sent", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, false)
		for _, o := range []*brokerclient.HistoryOptions{{Limit: 101}, {Limit: -1}, {Days: -1}, {Symbol: "spy"}} {
			n := 0
			for f, err := range b.live.Orders.History(t.Context(), "LV100001", day("2026-11-01"), o) {
				n++
				if !errors.Is(err, brokercode.ErrInput) || f.TradeID != "" {
					t.Errorf("%+v: %v", o, err)
				}
			}
			if n != 1 {
				t.Errorf("%+v: %d yields, want 1", o, n)
			}
		}
		if len(b.Sim.Requests()) != 0 {
			t.Error("requests were sent")
		}
	})

	t.Run("paper history is empty", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, false)
		for _, err := range b.paper.Orders.History(t.Context(), "PP200001", day("2026-11-01"), nil) {
			t.Errorf("paper yielded a row or error: %v", err)
		}
	})
}

// TestOrderLostAnswer: spec "clientOrderId is a session-scoped
// deduplication key, not an idempotency key": a placement whose answer is
// lost is an OutcomeUnknownError carrying the id, is never re-sent, and is
// settled by ResolveOrder.
func TestOrderLostAnswer(t *testing.T) {
	t.Parallel()
	const postPath = "POST /v1/api/accounts/LV100001/order"
	lose := func(t *testing.T, b *acctBundle, kind string) {
		t.Helper()
		if err := b.Sim.SetFaults(brokersim.Faults{Script: []brokersim.FaultStep{{Match: postPath, Kind: kind, Count: 1}}}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("processed, then the connection reset", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, false)
		lose(t, b, "reset-after")
		_, _, err := b.live.Orders.Place(t.Context(), "LV100001", workingBuy("AAPL", "150"))
		var ou *brokerclient.OutcomeUnknownError
		if !errors.Is(err, brokerclient.ErrOutcomeUnknown) || !errors.As(err, &ou) {
			t.Fatalf("err %v, want OutcomeUnknownError", err)
		}
		if _, perr := uuid.Parse(ou.ClientID); perr != nil {
			t.Fatalf("ClientID %q is not the generated id", ou.ClientID)
		}
		posts := b.sent("POST", "/v1/api/accounts/LV100001/order")
		if len(posts) != 1 || posts[0].Status != 0 || !strings.Contains(posts[0].Body, ou.ClientID) {
			t.Fatalf("POSTs %+v, want exactly one, reset", posts)
		}
		o, _, err := b.live.Orders.ResolveOrder(t.Context(), "LV100001", ou.ClientID)
		if err != nil || o.ClientOrderID != ou.ClientID {
			t.Fatalf("ResolveOrder: %+v %v", o, err)
		}
		if n := len(b.sent("POST", "/order")); n != 1 {
			t.Errorf("%d POSTs after resolving, want 1", n)
		}
	})

	t.Run("never processed: resolved as never registered, placed again under a new id", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, false)
		lose(t, b, "reset")
		r := workingBuy("AAPL", "150")
		r.ClientOrderID = "lost-1"
		_, _, err := b.live.Orders.Place(t.Context(), "LV100001", r)
		var ou *brokerclient.OutcomeUnknownError
		if !errors.As(err, &ou) || ou.ClientID != "lost-1" {
			t.Fatalf("err %v", err)
		}
		_, _, err = b.live.Orders.ResolveOrder(t.Context(), "LV100001", "lost-1")
		var ue *brokerclient.UnregisteredOrderError
		if !errors.Is(err, brokerclient.ErrNeverRegistered) || !errors.Is(err, brokerclient.ErrNotFound) || !errors.As(err, &ue) || ue.ClientOrderID != "lost-1" {
			t.Fatalf("err %v, want UnregisteredOrderError", err)
		}
		gets := b.sent("GET", "/order/lost-1")
		if len(gets) < 4 {
			t.Fatalf("%d GETs by id, want retries for about 2 s", len(gets))
		}
		for i := 1; i < len(gets); i++ {
			if gap := gets[i].Time.Sub(gets[i-1].Time); gap < 500*time.Millisecond {
				t.Errorf("GET %d came %v after the previous one, want >= 500 ms", i, gap)
			}
		}
		if span := gets[len(gets)-1].Time.Sub(gets[0].Time); span < 2*time.Second || span > 3*time.Second {
			t.Errorf("GETs spanned %v, want about 2 s", span)
		}
		if n := len(b.sent("GET", "/v1/api/accounts/LV100001/orders")); n != 1 {
			t.Errorf("%d book reads, want 1", n)
		}
		r.ClientOrderID = "lost-1-retry"
		o, _, err := b.live.Orders.Place(t.Context(), "LV100001", r)
		if err != nil || o.Rejection() != nil {
			t.Fatalf("placing again: %+v %v", o, err)
		}
	})

	t.Run("R118 rewritten id found in the book", func(t *testing.T) {
		t.Parallel()
		b := acctSetup(t, false)
		lose(t, b, "reset-after")
		r := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeStop, "AAPL", 10)
		r.StopPrice, r.ClientOrderID = pricep("100"), "stop-lost"
		if _, _, err := b.live.Orders.Place(t.Context(), "LV100001", r); !errors.Is(err, brokerclient.ErrOutcomeUnknown) {
			t.Fatalf("err %v", err)
		}
		o, _, err := b.live.Orders.ResolveOrder(t.Context(), "LV100001", "stop-lost")
		if err != nil {
			t.Fatal(err)
		}
		rej := o.Rejection()
		if !strings.HasPrefix(o.ClientOrderID, "stop-lostINVALID") || rej == nil || rej.Text != nil {
			t.Errorf("resolved %+v, want the rewritten, rejected order", o)
		}
	})
}

// TestOrderRejectionParsing: spec "Parse the code from the start of text
// with the pattern R followed by digits".
func TestOrderRejectionParsing(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	tests := []struct {
		status     brokercode.OrderStatus
		text       *string
		wantNil    bool
		wantCode   string
		wantBroker bool
	}{
		{status: brokercode.OrderStatusRejected, text: s("R06: Symbol is restricted at this price"), wantCode: "R06"},
		{status: brokercode.OrderStatusRejected, text: s("R130: Cancel request rejected"), wantCode: "R130"},
		{status: brokercode.OrderStatusRejected, text: s("R118"), wantCode: "R118"},
		{status: brokercode.OrderStatusRejected, text: s("Rejected: Broker Rejected: no"), wantBroker: true},
		{status: brokercode.OrderStatusRejected, text: s("Reason R114 later"), wantCode: ""},
		{status: brokercode.OrderStatusRejected, text: s("RX1: odd"), wantCode: ""},
		{status: brokercode.OrderStatusRejected, text: s("")},
		{status: brokercode.OrderStatusRejected, text: nil},
		{status: brokercode.OrderStatusCanceled, text: s("R114: stale"), wantNil: true},
		{status: brokercode.OrderStatusPendingNew, text: nil, wantNil: true},
	}
	for _, tt := range tests {
		o := &brokerclient.Order{ClientOrderID: "x", OrderStatus: tt.status, Text: tt.text}
		rej := o.Rejection()
		if tt.wantNil {
			if rej != nil {
				t.Errorf("%s %v: %+v, want nil", tt.status, tt.text, rej)
			}
			continue
		}
		if rej == nil || rej.Code != tt.wantCode || rej.BrokerRejected != tt.wantBroker || rej.ClientOrderID != "x" {
			t.Errorf("%v: %+v", tt.text, rej)
			continue
		}
		if (tt.text == nil) != (rej.Text == nil) || rej.Error() == "" {
			t.Errorf("%v: text %v", tt.text, rej.Text)
		}
	}
	for st, want := range map[brokercode.OrderStatus]bool{
		"Filled": true, "Canceled": true, "Expired": true, "Rejected": true,
		"New": false, "PendingNew": false, "Accepted": false, "PartiallyFilled": false, "DoneForDay": false,
	} {
		if got := (&brokerclient.Order{OrderStatus: st}).IsTerminal(); got != want {
			t.Errorf("%s terminal %v, want %v", st, got, want)
		}
	}
}

// TestOrderWithoutOpenClose: the spec never marks openClose required and
// published clients place stock orders without it: an empty OpenClose is
// left out of the body, and the order is placed, fetched, listed and
// cancelled like any other.
func TestOrderWithoutOpenClose(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, true)
	ctx := t.Context()
	req := workingBuy("AAPL", "150")
	req.OpenClose = ""
	o, _, err := b.live.Orders.Place(ctx, "LV100001", req)
	if err != nil {
		t.Fatal(err)
	}
	if body := b.sent("POST", "/order")[0].Body; strings.Contains(body, "openClose") {
		t.Errorf("body %s carries openClose", body)
	}
	b.Advance(50 * time.Millisecond)
	got, _, err := b.live.Orders.Get(ctx, "LV100001", o.ClientOrderID)
	if err != nil || got.OrderStatus != brokercode.OrderStatusAccepted {
		t.Fatalf("get: %v %v", got, err)
	}
	book, _, err := b.live.Orders.Book(ctx, "LV100001")
	if err != nil || len(book) != 1 || book[0].ClientOrderID != o.ClientOrderID {
		t.Fatalf("book: %v %v", book, err)
	}
	c, _, err := b.live.Orders.Cancel(ctx, "LV100001", o.ClientOrderID)
	if err != nil || c.OrderStatus != brokercode.OrderStatusCanceled {
		t.Fatalf("cancel: %v %v", c, err)
	}
}
