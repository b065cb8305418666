package brokersim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// wsWait bounds every wait on a stream message: a failing test fails fast.
const wsWait = 5 * time.Second

// wsConn is a raw stream connection to the simulator.
type wsConn struct {
	t  *testing.T
	ws *websocket.Conn
}

// wsMsg is a decoded stream message.
type wsMsg map[string]any

func (m wsMsg) str(k string) string { s, _ := m[k].(string); return s }

func (m wsMsg) obj(k string) wsMsg { o, _ := m[k].(map[string]any); return o }

func wsDial(t *testing.T, b *simtest.Bundle, kind string) *wsConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wsWait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.URL, "http")+"/stream/"+kind, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", kind, err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &wsConn{t: t, ws: ws}
}

// auth dials and authenticates with key: PENDING_AUTH, {key, secret}, CONNECTED.
func wsAuth(t *testing.T, b *simtest.Bundle, kind string, key simtest.Key) *wsConn {
	t.Helper()
	c := wsDial(t, b, kind)
	c.want(sysStatus("PENDING_AUTH"))
	c.send(map[string]string{"key": key.ID, "secret": key.Secret})
	c.want(sysStatus("CONNECTED"))
	return c
}

func (c *wsConn) send(v any) {
	c.t.Helper()
	b, ok := v.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			c.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(c.t.Context(), wsWait)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads one message, failing the test after wsWait.
func (c *wsConn) next() wsMsg {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), wsWait)
	defer cancel()
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m wsMsg
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("message %s: %v", data, err)
	}
	return m
}

// want reads the next message and checks it with match.
func (c *wsConn) want(match func(wsMsg) bool) wsMsg {
	c.t.Helper()
	m := c.next()
	if !match(m) {
		c.t.Fatalf("unexpected message %v", m)
	}
	return m
}

func sysStatus(status string) func(wsMsg) bool {
	return func(m wsMsg) bool { return m["@system"] == true && m.str("status") == status }
}

func action(act, target string) func(wsMsg) bool {
	return func(m wsMsg) bool { return m.str("action") == act && m.str("target") == target }
}

func streamSim(t *testing.T, opts ...simtest.Option) *simtest.Bundle {
	t.Helper()
	return simtest.New(t, append([]simtest.Option{simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false })}, opts...)...)
}

// tick moves prices through the admin route, as a test or a user would.
func tick(t *testing.T, b *simtest.Bundle, body string) {
	t.Helper()
	resp, err := http.Post(b.URL+"/_sim/prices", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("tick %s: %d", body, resp.StatusCode)
	}
}

// Spec "WebSocket handshake" and "System messages": PENDING_AUTH, then
// {key, secret}; CONNECTED on success, FAILED_AUTH with a message otherwise.
func TestStreamHandshake(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	for _, kind := range []string{"pnl", "portfolio"} {
		t.Run(kind, func(t *testing.T) {
			c := wsDial(t, b, kind)
			m := c.want(sysStatus("PENDING_AUTH"))
			if _, ok := m["ts"].(float64); !ok || m.str("message") == "" {
				t.Errorf("PENDING_AUTH %v: want ts and a message", m)
			}
			c.send(map[string]string{"key": b.Live.ID, "secret": b.Live.Secret})
			c.want(sysStatus("CONNECTED"))

			bad := wsDial(t, b, kind)
			bad.want(sysStatus("PENDING_AUTH"))
			bad.send(map[string]string{"key": b.Live.ID, "secret": "wrong"})
			if m := bad.want(sysStatus("FAILED_AUTH")); m.str("message") == "" {
				t.Errorf("FAILED_AUTH without a message: %v", m)
			}

			empty := wsDial(t, b, kind)
			empty.want(sysStatus("PENDING_AUTH"))
			empty.send(map[string]string{"apiKey": b.Live.ID})
			if m := empty.want(sysStatus("FAILED_AUTH")); !strings.Contains(m.str("message"), "not properly provided") {
				t.Errorf("FAILED_AUTH %v", m)
			}
		})
	}
	// The upgrade is logged like any request; the secret is not.
	n := 0
	for _, r := range b.Sim.Requests() {
		if strings.HasPrefix(r.Path, "/stream/") {
			n++
			if r.Status != http.StatusSwitchingProtocols || strings.Contains(r.Body, b.Live.Secret) {
				t.Errorf("logged %+v", r)
			}
		}
	}
	if n != 6 {
		t.Errorf("%d stream upgrades logged, want 6", n)
	}
}

// Spec "P&L stream": one init pnlReturn snapshot per subscribe, with the
// snapshot's fields and a pnlCalc per position, agreeing with GET .../pnl.
func TestPnLStreamSnapshot(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	c := wsAuth(t, b, "pnl", b.Live)
	c.send(map[string]any{"account": "lv100001", "extra": "ignored"})
	m := c.want(action("init", "pnlReturn"))
	snap := m.obj("pnlReturn")
	for _, f := range []string{"accountValue", "availableCash", "optionCashUsed", "usedLeverage", "allowedLeverage", "sharesTraded",
		"exposure", "dayUnrealized", "dayRealized", "dayPnl", "totalUnrealized", "equityRatio"} {
		if _, ok := snap[f].(float64); !ok {
			t.Errorf("pnlReturn.%s = %v, want a number", f, snap[f])
		}
	}
	positions, _ := snap["positions"].([]any)
	if len(positions) != 1 {
		t.Fatalf("positions %v, want the MSFT lot", snap["positions"])
	}
	pos := wsMsg(positions[0].(map[string]any))
	calc := pos.obj("pnlCalc")
	for _, f := range []string{"unrealizedPnL", "dayUnrealizedPnL", "pctPnLMove", "dayPctPnLMove", "exposure", "realizedPnl", "dayRealizedPnl"} {
		if _, ok := calc[f].(float64); !ok {
			t.Errorf("pnlCalc.%s = %v, want a number", f, calc[f])
		}
	}
	var rest struct {
		AccountValue float64 `json:"accountValue"`
		Pnl          []struct {
			PositionID    string  `json:"positionId"`
			UnrealizedPnL float64 `json:"unrealizedPnL"`
		} `json:"pnl"`
	}
	b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/pnl", nil).JSON(t, &rest)
	if snap["accountValue"] != rest.AccountValue || pos.str("positionId") != rest.Pnl[0].PositionID || calc["unrealizedPnL"] != rest.Pnl[0].UnrealizedPnL {
		t.Errorf("stream snapshot %v disagrees with REST %+v", snap, rest)
	}
	if m.str("account") != "LV100001" {
		t.Errorf("account %q, want the canonical LV100001", m.str("account"))
	}
	// One snapshot per subscribe.
	c.send(map[string]any{"account": "LV100001"})
	c.want(action("init", "pnlReturn"))
}

// Spec "P&L stream" rule 1: per tick of a held position one aggCalcs and one
// position message with equal ts, only changed fields present; rule 2: a
// quote that does not change, or a symbol not held, sends nothing.
func TestPnLStreamTickUpdates(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	c := wsAuth(t, b, "pnl", b.Live)
	c.send(map[string]any{"account": "LV100001"})
	c.want(action("init", "pnlReturn"))

	tick(t, b, `{"symbol":"AAPL","price":191}`) // not held: nothing
	tick(t, b, `{"symbol":"MSFT","price":420}`) // unchanged: nothing
	tick(t, b, `{"symbol":"MSFT","price":421}`)
	first, second := c.next(), c.next()
	agg, pos := first, second
	if first.str("target") == "position" {
		agg, pos = second, first
	}
	if !action("update", "aggCalcs")(agg) || !action("update", "position")(pos) {
		t.Fatalf("messages %v and %v, want one aggCalcs and one position update", first, second)
	}
	if agg["ts"] != pos["ts"] {
		t.Errorf("ts %v and %v, want equal", agg["ts"], pos["ts"])
	}
	a := agg.obj("aggCalcs")
	if _, ok := a["accountValue"]; !ok {
		t.Errorf("aggCalcs %v lacks the changed accountValue", a)
	}
	for _, unchanged := range []string{"allowedLeverage", "availableCash", "sharesTraded", "dayRealized"} {
		if _, ok := a[unchanged]; ok {
			t.Errorf("aggCalcs carries unchanged %s: %v", unchanged, a)
		}
	}
	p := pos.obj("position")
	if p.str("symbol") != "MSFT" || p.str("positionId") == "" {
		t.Errorf("position %v", p)
	}
	if _, ok := p.obj("pnlCalc")["realizedPnl"]; ok {
		t.Errorf("pnlCalc carries the unchanged realizedPnl: %v", p)
	}
	if _, ok := p.obj("pnlCalc")["unrealizedPnL"]; !ok {
		t.Errorf("pnlCalc lacks the changed unrealizedPnL: %v", p)
	}
}

// Spec "P&L stream" rule 1 ("they may arrive consecutively or interleaved")
// and "More accounts may be subscribed on the same connection; each has its
// own snapshot and updates": ticks sent together interleave across
// positions, each target keeping its own order.
func TestPnLStreamInterleavingAndAccounts(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	// A second held symbol: buy AAPL at the market.
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"orderType": "Market", "limitPrice": nil}))
	b.Advance(50 * time.Millisecond)

	c := wsAuth(t, b, "pnl", b.Live)
	c.send(map[string]any{"account": "LV100001"})
	c.send(map[string]any{"account": "LV100002"})
	for _, want := range []string{"LV100001", "LV100002"} {
		if m := c.want(action("init", "pnlReturn")); m.str("account") != want {
			t.Fatalf("init for %q, want %s", m.str("account"), want)
		}
	}
	interleaved := false
	for i := range 20 {
		p1, p2 := 191+i, 421+i
		tick(t, b, `{"ticks":[{"symbol":"AAPL","price":`+itoa(int64(p1))+`},{"symbol":"MSFT","price":`+itoa(int64(p2))+`}]}`)
		var order []string
		for range 4 {
			m := c.next()
			if m.str("account") != "LV100001" {
				t.Fatalf("update for %q, which holds nothing", m.str("account"))
			}
			key := m.str("target")
			if key == "position" {
				key = m.obj("position").str("symbol")
			}
			order = append(order, key)
		}
		// Two aggCalcs (AAPL's tick, then MSFT's), one position each.
		got := strings.Join(order, ",")
		if strings.Count(got, "aggCalcs") != 2 || strings.Count(got, "AAPL") != 1 || strings.Count(got, "MSFT") != 1 {
			t.Fatalf("tick %d: messages %s", i, got)
		}
		interleaved = interleaved || (got != "aggCalcs,AAPL,aggCalcs,MSFT" && got != "AAPL,aggCalcs,aggCalcs,MSFT" &&
			got != "aggCalcs,AAPL,MSFT,aggCalcs" && got != "AAPL,aggCalcs,MSFT,aggCalcs")
	}
	if !interleaved {
		t.Error("20 pairs of ticks never interleaved")
	}
}

// Spec "P&L stream" rule 4 and "Stream errors": an unknown, foreign or
// numeric account is an `action: error` data message "account not found";
// an empty account is TERMINATED and the connection stays open; a payload
// that does not parse is INVALID_DATA and an existing subscription keeps
// delivering.
func TestStreamSubscribeErrors(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	for _, kind := range []string{"pnl", "portfolio"} {
		t.Run(kind, func(t *testing.T) {
			c := wsAuth(t, b, kind, b.Live)
			for _, acct := range []any{"NOPE1", "LV300001", 100001} {
				c.send(map[string]any{"account": acct})
				m := c.next()
				if m["@system"] != nil || m.str("action") != "error" || m.str("message") != "account not found" {
					t.Errorf("account %v: %v, want the account-not-found data message", acct, m)
				}
			}
			c.send(map[string]any{"account": ""})
			if m := c.want(sysStatus("TERMINATED")); m.str("message") == "" {
				t.Errorf("TERMINATED without a message")
			}
			c.send(map[string]any{"account": "LV100001"}) // still open: a corrected subscribe works
			if kind == "pnl" {
				c.want(action("init", "pnlReturn"))
			} else {
				c.want(action("subscribed", "portfolio"))
			}
			c.send([]byte("{not json"))
			if m := c.want(sysStatus("INVALID_DATA")); m.str("message") == "" {
				t.Errorf("INVALID_DATA without the parse error")
			}
			if kind == "pnl" {
				tick(t, b, `{"symbol":"MSFT","price":430}`)
				if m := c.next(); m.str("action") != "update" {
					t.Errorf("after INVALID_DATA: %v, want an update", m)
				}
			} else {
				placed := ordPlace(t, b, b.Live, "LV100001", ordBody(nil))
				if m := c.want(action("update", "Order")); m.obj("order").str("clientOrderId") != placed.ClientOrderID {
					t.Errorf("push %v", m)
				}
			}
		})
	}
}

// Spec "P&L stream" rule 2: outside regular hours the connection stays open
// and the snapshot is delivered; updates arrive only when a held
// position's quote changes.
func TestPnLStreamOutsideRegularHours(t *testing.T) {
	t.Parallel()
	b := streamSim(t, simtest.WithStart(time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC))) // 6:30 PM ET
	c := wsAuth(t, b, "pnl", b.Live)
	c.send(map[string]any{"account": "LV100001"})
	c.want(action("init", "pnlReturn"))
	b.Advance(time.Hour) // time alone sends nothing
	tick(t, b, `{"symbol":"MSFT","price":419}`)
	if m := c.next(); m.str("action") != "update" {
		t.Errorf("%v, want the first update to follow the quote change", m)
	}
}

// Spec "Portfolio stream" and "Operation to event ties": an Order update
// for every order change, keyed on clientOrderId with userOrderId
// <accountId>:<clientOrderId>; position events carry id.
func TestPortfolioStreamOrderLifecycle(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	c := wsAuth(t, b, "portfolio", b.Live)
	c.send(map[string]any{"account": "LV100001"})
	if m := c.want(action("subscribed", "portfolio")); m.str("account") != "LV100001" {
		t.Errorf("ack %v", m)
	}
	order := func(status string) wsMsg {
		t.Helper()
		m := c.want(action("update", "Order"))
		o := m.obj("order")
		if o.str("orderStatus") != status {
			t.Fatalf("order %s %s, want %s", o.str("clientOrderId"), o.str("orderStatus"), status)
		}
		if o.str("userOrderId") != "LV100001:"+o.str("clientOrderId") {
			t.Errorf("userOrderId %q for %q", o.str("userOrderId"), o.str("clientOrderId"))
		}
		return o
	}

	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "w1"}))
	order("PendingNew")
	b.Advance(50 * time.Millisecond)
	order("Accepted")
	b.Do(t, b.Live, "DELETE", "/v1/api/accounts/LV100001/orders/w1", nil)
	if o := order("Canceled"); o["canceledQuantity"] != float64(10) {
		t.Errorf("canceled %v", o)
	}

	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "m1", "orderType": "Market", "limitPrice": nil}))
	order("PendingNew")
	b.Advance(50 * time.Millisecond)
	order("Accepted")
	order("Filled")
	m := c.want(action("update", "Position"))
	if p := m.obj("position"); p.str("id") == "" || p.str("symbol") != "AAPL" || p["shares"] != float64(10) {
		t.Errorf("position event %v, want id, symbol and shares", p)
	}

	// A Day order still working at the close expires, and that is pushed too.
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "day1"}))
	order("PendingNew")
	b.Advance(50 * time.Millisecond)
	order("Accepted")
	b.Advance(7 * time.Hour)
	order("Expired")
}

// Spec "Order statuses" and "Portfolio stream": an asynchronous rejection
// pushes PendingNew, then Rejected with text a few milliseconds later
// (lastUpdated about 50 ms after startTime); R118 with an explicit route
// rejects synchronously and pushes nothing.
func TestPortfolioStreamRejections(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	c := wsAuth(t, b, "portfolio", b.Live)
	c.send(map[string]any{"account": "LV100001", "topics": []string{"Order"}})
	c.want(action("subscribed", "portfolio"))

	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "r54", "route": nil})) // R54, async
	if o := c.want(action("update", "Order")).obj("order"); o.str("orderStatus") != "PendingNew" || o["text"] != nil {
		t.Fatalf("first push %v, want PendingNew with null text", o)
	}
	b.Clock.Advance(50 * time.Millisecond) // the fake clock alone: the pump delivers what falls due
	o := c.want(action("update", "Order")).obj("order")
	if o.str("orderStatus") != "Rejected" || !strings.HasPrefix(o.str("text"), "R54") {
		t.Fatalf("second push %v, want Rejected R54", o)
	}
	start, _ := time.Parse(time.RFC3339Nano, o.str("startTime"))
	updated, _ := time.Parse(time.RFC3339Nano, o.str("lastUpdated"))
	if d := updated.Sub(start); d != 50*time.Millisecond {
		t.Errorf("lastUpdated %v after startTime, want 50ms", d)
	}

	// Spec "Order statuses": a cancel of a Rejected order overwrites text
	// with R130, a change the stream carries too.
	b.Do(t, b.Live, "DELETE", "/v1/api/accounts/LV100001/orders/r54", nil)
	if o := c.want(action("update", "Order")).obj("order"); o.str("orderStatus") != "Rejected" || !strings.HasPrefix(o.str("text"), "R130") {
		t.Errorf("push after the cancel %v, want Rejected R130", o)
	}

	r118 := ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "r118", "orderType": "Stop", "stopPrice": 100, "side": "Buy", "limitPrice": nil}))
	if r118.OrderStatus != "Rejected" || r118.Text != nil {
		t.Fatalf("R118 with route: %s %q", r118.OrderStatus, r118.text())
	}
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "after"}))
	if o := c.want(action("update", "Order")).obj("order"); o.str("clientOrderId") != "after" {
		t.Errorf("push %v, want none for R118 (next is \"after\")", o)
	}
}

// The admin route POST /_sim/streams: "drop" ends connections as a network
// failure would; "stall" freezes them so even protocol pings go unanswered
// (spec: neither stream sends a keepalive, clients detect dead connections
// themselves); "duplicate" repeats every portfolio push.
func TestStreamAdminControls(t *testing.T) {
	t.Parallel()
	b := streamSim(t)
	control := func(body string) int {
		t.Helper()
		resp, err := http.Post(b.URL+"/_sim/streams", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Connections int }
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", body, resp.StatusCode)
		}
		return out.Connections
	}

	c := wsAuth(t, b, "portfolio", b.Live)
	c.send(map[string]any{"account": "LV100001"})
	c.want(action("subscribed", "portfolio"))
	control(`{"duplicate":true}`)
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "d1"}))
	first, second := c.next(), c.next()
	if first.obj("order").str("clientOrderId") != "d1" || second.obj("order").str("clientOrderId") != "d1" {
		t.Errorf("duplicate pushes %v, %v", first, second)
	}
	control(`{"duplicate":false}`)

	if n := control(`{"stream":"portfolio","action":"stall"}`); n != 1 {
		t.Errorf("stalled %d connections, want 1", n)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	go c.ws.Read(ctx) // pongs are read by a concurrent reader
	err := c.ws.Ping(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ping on a stalled connection: %v, want no pong", err)
	}

	d := wsAuth(t, b, "pnl", b.Live)
	if n := control(`{"stream":"pnl","action":"drop"}`); n != 1 {
		t.Errorf("dropped %d connections, want 1", n)
	}
	ctx, cancel = context.WithTimeout(t.Context(), wsWait)
	defer cancel()
	if _, _, err := d.ws.Read(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("read after drop: %v, want the connection gone", err)
	}
	if r, _ := http.Post(b.URL+"/_sim/streams", "application/json", strings.NewReader(`{"action":"explode"}`)); r.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown action: %d", r.StatusCode)
	}
}

// Faults.RatePushLoss loses the portfolio stream's pushes while the
// connection stays up (the spec promises no delivery): at rate 1 no order
// or position update of a filled order arrives, the next message on the
// connection is the answer to a later subscribe, and a read of the order
// still tells its fate; a rate outside [0, 1] is refused.
func TestStreamPushLoss(t *testing.T) {
	t.Parallel()
	b := streamSim(t, simtest.WithSimOption(brokersim.WithFaults(brokersim.Faults{RatePushLoss: 1})))
	c := wsAuth(t, b, "portfolio", b.Live)
	c.send(map[string]any{"account": "LV100001"})
	c.want(action("subscribed", "portfolio"))
	ordPlace(t, b, b.Live, "LV100001", ordBody(map[string]any{"clientOrderId": "m1", "orderType": "Market", "limitPrice": nil}))
	b.Advance(50 * time.Millisecond)
	c.send(map[string]any{"account": "LV100002"})
	if m := c.next(); m.str("action") != "subscribed" || m.str("account") != "LV100002" {
		t.Fatalf("after a fill with every push lost, got %v, want the second subscribe's answer", m)
	}
	r := b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/order/m1", nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"Filled"`) {
		t.Errorf("read of the order: %d %s, want it Filled", r.Status, r.Body)
	}
	if _, err := brokersim.New(brokersim.DefaultScenario(), brokersim.WithFaults(brokersim.Faults{RatePushLoss: 1.5})); err == nil {
		t.Error("a push loss rate of 1.5 was taken")
	}
}
