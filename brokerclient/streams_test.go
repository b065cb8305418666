package brokerclient_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// streamWait bounds every wait on a stream signal, so a failing test fails
// fast instead of hanging.
const streamWait = 10 * time.Second

func streamCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), streamWait)
	t.Cleanup(cancel)
	return ctx
}

// streamSetup is a simulator without rate limits and a live client on its
// fake clock; the test moves the clock.
func streamSetup(t *testing.T) (*simtest.Bundle, *brokerclient.Client) {
	t.Helper()
	b := simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false }))
	return b, b.Client(t, b.Live, brokerclient.WithoutPacing())
}

// waitFor waits on changed until cond holds, failing after streamWait.
// With a bundle it also moves the fake clock a second whenever the code
// under test sleeps on it (reconnection backoff, poll interval); with nil
// time stands still.
func waitFor(t *testing.T, b *simtest.Bundle, what string, changed func() <-chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.After(streamWait)
	var sleeping <-chan struct{} // nil: never ready
	for {
		ch := changed()
		if cond() {
			return
		}
		if b != nil {
			sleeping = b.Clock.BlockUntil(1)
		}
		select {
		case <-sleeping:
			b.Advance(time.Second)
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Spec "WebSocket handshake": Dial authenticates; FAILED_AUTH is an
// irrecoverable *StreamAuthError whose text never carries the secret.
func TestStreamDial(t *testing.T) {
	t.Parallel()
	b, c := streamSetup(t)
	ctx := streamCtx(t)
	conn, err := c.Streams.Dial(ctx, brokerclient.StreamPnL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Subscribe(ctx, "LV100001"); err != nil {
		t.Fatal(err)
	}
	m, err := conn.Next(ctx)
	snap, ok := m.(*brokerclient.PnLSnapshotMessage)
	if err != nil || !ok || snap.Account != "LV100001" || len(snap.Snapshot.Positions) != 1 || snap.TS.IsZero() {
		t.Fatalf("first message %#v, %v; want the init snapshot", m, err)
	}

	bad := b.Client(t, simtest.Key{ID: b.Live.ID, Secret: "not-the-secret"})
	_, err = bad.Streams.Dial(ctx, brokerclient.StreamPortfolio)
	var ae *brokerclient.StreamAuthError
	if !errors.Is(err, brokerclient.ErrStreamAuth) || !errors.As(err, &ae) || ae.Message == "" {
		t.Fatalf("bad secret: %v, want a StreamAuthError", err)
	}
	if strings.Contains(err.Error(), "not-the-secret") || strings.Contains(err.Error(), b.Live.Secret) {
		t.Errorf("error %q carries a secret", err)
	}
	if _, err := bad.Streams.FollowOrders(ctx, "LV100001"); !errors.Is(err, brokerclient.ErrStreamAuth) {
		t.Errorf("FollowOrders with a bad secret: %v, want ErrStreamAuth", err)
	}
	if _, err := c.Streams.FollowOrders(ctx, "LV300001"); !errors.Is(err, brokerclient.ErrStreamSubscribe) || !errors.Is(err, brokerclient.ErrNotFound) {
		t.Errorf("foreign account: %v, want a refused subscribe (not found)", err)
	}
}

// decimalEqual compares decimals by value in cmp.Diff.
var decimalEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

// freshSnapshot is what a new subscription says about the account now.
func freshSnapshot(t *testing.T, c *brokerclient.Client, account string) brokerclient.PnLSnapshot {
	t.Helper()
	ctx := streamCtx(t)
	conn, err := c.Streams.Dial(ctx, brokerclient.StreamPnL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Subscribe(ctx, account); err != nil {
		t.Fatal(err)
	}
	m, err := conn.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m.(*brokerclient.PnLSnapshotMessage).Snapshot
}

func sortPositions(s brokerclient.PnLSnapshot) brokerclient.PnLSnapshot {
	slices.SortFunc(s.Positions, func(a, b brokerclient.PnLPosition) int {
		return strings.Compare(string(a.PositionID), string(b.PositionID))
	})
	return s
}

// Spec "P&L stream" rules 1 and 3, and "Events" (reconnection): after 1,000
// random ticks, interleaved, with two forced disconnects, the model equals
// a fresh snapshot field by field.
func TestPnLWatcherConvergesAfterTicksAndDisconnects(t *testing.T) {
	t.Parallel()
	b, c := streamSetup(t)
	ctx := streamCtx(t)
	// Hold three symbols: the scenario's MSFT lot, plus AAPL and SPY bought
	// at the market.
	for _, sym := range []string{"AAPL", "SPY"} {
		req := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeMarket, sym, 10)
		if _, _, err := c.Orders.Place(ctx, "LV100001", req); err != nil {
			t.Fatal(err)
		}
	}
	b.Advance(50 * time.Millisecond)

	w, err := c.Streams.WatchPnL(ctx, []string{"LV100001"}, brokerclient.WithPing(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	prices := map[string]float64{"AAPL": 190, "SPY": 520, "MSFT": 420, "HTBX": 12.5}
	symbols := []string{"AAPL", "SPY", "MSFT", "HTBX"} // HTBX is not held: its ticks send nothing
	drops := map[int]bool{300 + rng.IntN(200): true, 700 + rng.IntN(200): true}
	for sent := 0; sent < 1000; {
		var batch []brokersim.Tick
		for n := 1 + rng.IntN(3); n > 0 && sent < 1000; n-- {
			sym := symbols[rng.IntN(len(symbols))]
			prices[sym] = max(1, prices[sym]+float64(rng.IntN(201)-100)/100)
			batch = append(batch, brokersim.Tick{Symbol: sym, Price: brokersim.Dec(decimal.NewFromFloat(prices[sym]).Round(2))})
			sent++
			if drops[sent] {
				b.Sim.SetPrices(batch)
				batch = nil
				if _, err := b.Sim.ControlStreams(brokersim.StreamControl{Action: "drop"}); err != nil {
					t.Fatal(err)
				}
				waitFor(t, nil, "the watcher to see the drop", w.Changed, func() bool { return !w.Connected() })
				b.Sim.SetPrice("MSFT", decimal.NewFromInt(int64(400+sent%50))) // missed while down
				waitFor(t, b, "the watcher to reconnect", w.Changed, w.Connected)
			}
		}
		if len(batch) > 0 {
			b.Sim.SetPrices(batch)
		}
	}
	want := sortPositions(freshSnapshot(t, c, "LV100001"))
	var last string
	defer func() {
		if t.Failed() {
			t.Logf("model against a fresh snapshot (-want +got):\n%s", last)
		}
	}()
	waitFor(t, nil, "the model to match a fresh snapshot", w.Changed, func() bool {
		got, ok := w.Snapshot("LV100001")
		last = cmp.Diff(want, sortPositions(got), decimalEqual)
		return ok && last == ""
	})
	if len(want.Positions) != 3 {
		t.Errorf("%d positions, want 3", len(want.Positions))
	}
}

// Spec "Events": no keepalive comes from the server, so a stalled
// connection is found by a protocol ping that gets no pong in time, and
// replaced. The ping waits on the client's clock; the pong's wait is an I/O
// timeout on the wall clock, short here.
func TestStreamDeadConnectionDetected(t *testing.T) {
	t.Parallel()
	b, c := streamSetup(t)
	ctx := streamCtx(t)
	w, err := c.Streams.WatchPnL(ctx, []string{"LV100001"}, brokerclient.WithPing(10*time.Second, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Sim.ControlStreams(brokersim.StreamControl{Action: "stall"}); err != nil {
		t.Fatal(err)
	}
	sleeping := func(what string) {
		t.Helper()
		select {
		case <-b.Clock.BlockUntil(1):
		case <-time.After(streamWait):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	sleeping("the pinger to sleep its interval")
	b.Clock.Advance(10 * time.Second)
	waitFor(t, nil, "the dead connection to be dropped", w.Changed, func() bool { return !w.Connected() })
	b.Sim.ControlStreams(brokersim.StreamControl{Action: "resume"}) // let the old server side end
	waitFor(t, b, "the watcher to reconnect", w.Changed, w.Connected)
}

// orderReads are the logged REST reads of the order book and single orders.
func orderReads(recs []brokersim.RequestRecord) []int {
	var out []int
	for i, r := range recs {
		if r.Method == "GET" && (strings.HasSuffix(r.Path, "/orders") || strings.Contains(r.Path, "/order/")) {
			out = append(out, i)
		}
	}
	return out
}

// Spec "Portfolio stream": an order followed from before its placement is
// learnt from the stream alone, each state once, even when every push
// comes twice; R118 with a route pushes nothing and is known from the
// placement's answer.
func TestOrderFollowerStream(t *testing.T) {
	t.Parallel()
	b, c := streamSetup(t)
	ctx := streamCtx(t)
	f, err := c.Streams.FollowOrders(ctx, "LV100001", brokerclient.WithPing(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if up, _ := f.Connected(); !up {
		t.Fatal("not connected after FollowOrders")
	}
	dup := true
	b.Sim.ControlStreams(brokersim.StreamControl{Duplicate: &dup})

	follow := func(req brokerclient.OrderRequest) []brokercode.OrderStatus {
		t.Helper()
		req.ClientOrderID = "f-" + string(req.OrderType) + "-" + req.Symbol
		w := f.Watch(req.ClientOrderID)
		defer w.Close()
		placed, _, err := c.Orders.Place(ctx, "LV100001", req)
		if err != nil {
			t.Fatal(err)
		}
		w.Observe(placed)
		b.Advance(50 * time.Millisecond)
		var seen []brokercode.OrderStatus
		for {
			o, err := w.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, o.OrderStatus)
			if o.IsTerminal() {
				return seen
			}
		}
	}
	market := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeMarket, "AAPL", 10)
	if got := follow(market); !slices.Equal(got, []brokercode.OrderStatus{"PendingNew", "Accepted", "Filled"}) {
		t.Errorf("market order states %v", got)
	}
	noRoute := market
	noRoute.Route, noRoute.Symbol = "", "SPY" // R54: async, PendingNew then Rejected
	if got := follow(noRoute); !slices.Equal(got, []brokercode.OrderStatus{"PendingNew", "Rejected"}) {
		t.Errorf("R54 states %v", got)
	}
	stop := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeStop, "MSFT", 1)
	stop.StopPrice = pricep("100") // below the market: R118, synchronous with a route
	if got := follow(stop); !slices.Equal(got, []brokercode.OrderStatus{"Rejected"}) {
		t.Errorf("R118 states %v", got)
	}
	if reads := orderReads(b.Sim.Requests()); len(reads) != 0 {
		t.Errorf("%d order reads while the stream was up, want none", len(reads))
	}
}

// Spec "Portfolio stream" ("REST polling is the fallback"; "buffer messages
// while loading REST state"): with the stream dropped at random during 50
// placements, every order's final state is known, none twice, and the
// order book was read only while the stream was down (request log).
func TestOrderFollowerFallsBackOnlyWhileDisconnected(t *testing.T) {
	t.Parallel()
	b, c := streamSetup(t)
	ctx := streamCtx(t)
	f, err := c.Streams.FollowOrders(ctx, "LV100001", brokerclient.WithPing(0, 0), brokerclient.WithPollInterval(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(3, 5))

	type window struct{ from, to int }
	var windows []window
	down := -1 // log length when the current drop was sent
	drop := func() {
		down = len(b.Sim.Requests())
		if _, err := b.Sim.ControlStreams(brokersim.StreamControl{Stream: "portfolio", Action: "drop"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, nil, "the follower to see the drop", func() <-chan struct{} { _, ch := f.Connected(); return ch },
			func() bool { up, _ := f.Connected(); return !up })
	}
	// heal lets the follower reconnect and settle from the book.
	heal := func() {
		if down < 0 {
			return
		}
		waitFor(t, b, "the follower to reconnect and settle", func() <-chan struct{} { _, ch := f.Connected(); return ch },
			func() bool { up, _ := f.Connected(); return up })
		windows = append(windows, window{down, len(b.Sim.Requests())})
		down = -1
	}

	finals := map[string]brokercode.OrderStatus{}
	for i := range 50 {
		id := "o" + itoa(int64(i))
		req := stockOrder(brokerclient.SideBuy, brokerclient.OpenCloseOpen, brokerclient.OrderTypeLimit, "AAPL", 10)
		req.ClientOrderID = id
		kind := rng.IntN(4)
		switch kind {
		case 0: // marketable: fills
			req.LimitPrice = pricep("200")
		case 1: // far from the market: works until cancelled
			req.LimitPrice = pricep("100")
		case 2: // no route on a live account: R54, asynchronous
			req.LimitPrice, req.Route = pricep("200"), ""
		case 3: // stop below the market with a route: R118, synchronous, no push
			req.OrderType, req.StopPrice = brokerclient.OrderTypeStop, pricep("100")
		}
		at := rng.IntN(5) // 0: before placing, 1: before the decision, 2: after it, else no drop
		w := f.Watch(id)
		if at == 0 {
			drop()
		}
		placed, _, err := c.Orders.Place(ctx, "LV100001", req)
		if err != nil {
			t.Fatal(err)
		}
		w.Observe(placed)
		if at == 1 {
			drop()
		}
		b.Advance(50 * time.Millisecond)
		if at == 2 {
			drop()
		}
		heal()
		if kind == 1 {
			if _, _, err := c.Orders.Cancel(ctx, "LV100001", id); err != nil {
				t.Fatal(err)
			}
		}
		var seen []brokercode.OrderStatus
		for {
			o, err := w.Next(ctx)
			if err != nil {
				t.Fatalf("order %s after %v: %v", id, seen, err)
			}
			if slices.Contains(seen, o.OrderStatus) {
				t.Errorf("order %s: %s delivered twice (%v)", id, o.OrderStatus, seen)
			}
			seen = append(seen, o.OrderStatus)
			if o.IsTerminal() {
				finals[id] = o.OrderStatus
				break
			}
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		if o, err := w.Next(done); err == nil {
			t.Errorf("order %s: a state after the final one: %s", id, o.OrderStatus)
		}
		w.Close()
	}

	reads := orderReads(b.Sim.Requests())
	for _, i := range reads {
		if !slices.ContainsFunc(windows, func(w window) bool { return i >= w.from && i < w.to }) {
			t.Errorf("order read #%d (%s) while the stream was up", i, b.Sim.Requests()[i].Path)
		}
	}
	if len(windows) == 0 || len(reads) == 0 {
		t.Fatalf("%d drops and %d fallback reads: the test exercised nothing", len(windows), len(reads))
	}
	book, _, err := c.Orders.Book(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range book {
		id := strings.SplitN(o.ClientOrderID, "INVALID", 2)[0]
		if finals[id] != o.OrderStatus {
			t.Errorf("order %s: followed to %s, the book says %s", id, finals[id], o.OrderStatus)
		}
	}
	if len(book) != 50 || len(finals) != 50 {
		t.Errorf("book %d orders, %d finals, want 50", len(book), len(finals))
	}
	t.Logf("%d drops, %d fallback reads", len(windows), len(reads))
}

func itoa(n int64) string { return decimal.NewFromInt(n).String() }

// Spec "Events": each message the two streams send decodes to its type.
func TestDecodeStreamMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw   string
		check func(m brokerclient.StreamMessage) bool
	}{
		{`{"@system":true,"ts":1764082800000,"status":"CONNECTED"}`, func(m brokerclient.StreamMessage) bool {
			s, ok := m.(*brokerclient.SystemMessage)
			return ok && s.Status == brokerclient.StatusConnected && s.TS.Equal(time.UnixMilli(1764082800000))
		}},
		{`{"ts":1,"action":"error","message":"account not found"}`, func(m brokerclient.StreamMessage) bool {
			e, ok := m.(*brokerclient.SubscriptionError)
			return ok && e.Message == "account not found"
		}},
		{`{"ts":1,"account":"LV1","action":"update","target":"Order","order":{"clientOrderId":"a1","userOrderId":"LV1:a1","orderStatus":"Rejected","text":"R54: x"}}`,
			func(m brokerclient.StreamMessage) bool {
				o, ok := m.(*brokerclient.OrderUpdate)
				return ok && o.UserOrderID == "LV1:a1" && o.Order.Rejection().Code == "R54"
			}},
		{`{"ts":1,"account":"LV1","action":"update","target":"Position","position":{"id":"77","symbol":"AAPL","shares":10}}`,
			func(m brokerclient.StreamMessage) bool {
				p, ok := m.(*brokerclient.PositionUpdate)
				return ok && p.ID == "77" && p.Position.Shares == 10
			}},
		{`{"ts":1,"action":"heartbeat"}`, func(m brokerclient.StreamMessage) bool {
			_, ok := m.(*brokerclient.UnknownMessage)
			return ok
		}},
	}
	for _, tt := range tests {
		m, err := brokerclient.DecodeStreamMessage([]byte(tt.raw))
		if err != nil || !tt.check(m) {
			t.Errorf("%s: %#v, %v", tt.raw, m, err)
		}
	}
	for _, bad := range []string{`{"action":"update","target":"aggCalcs"}`, `{"ts":"soon"}`, `nope`} {
		if _, err := brokerclient.DecodeStreamMessage([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// With WithPollInterval(0) the follower leaves REST to its caller: it reads
// nothing, even across a drop, and Connected tells the caller when it must
// settle its orders itself.
func TestOrderFollowerWithoutPolling(t *testing.T) {
	t.Parallel()
	b, c := streamSetup(t)
	ctx := streamCtx(t)
	f, err := c.Streams.FollowOrders(ctx, "LV100001", brokerclient.WithPing(0, 0), brokerclient.WithPollInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := f.Watch("np-1")
	defer w.Close()
	b.Sim.ControlStreams(brokersim.StreamControl{Action: "drop"})
	changed := func() <-chan struct{} { _, ch := f.Connected(); return ch }
	waitFor(t, nil, "the drop", changed, func() bool { up, _ := f.Connected(); return !up })
	waitFor(t, b, "the reconnection", changed, func() bool { up, _ := f.Connected(); return up })
	if reads := orderReads(b.Sim.Requests()); len(reads) != 0 {
		t.Errorf("%d order reads, want none", len(reads))
	}
}
