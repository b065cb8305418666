package brokerclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/locatorhq/locator/brokerclient"
)

// rowsAnswer is a JSON answer of n empty rows, `{},{},…`, between open and
// close: the shape that took a command to 1.6 GB from 8 MB.
func rowsAnswer(open string, n int, close string) []byte {
	var b bytes.Buffer
	b.Grow(len(open) + 3*n + len(close))
	b.WriteString(open)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("{}")
	}
	b.WriteString(close)
	return b.Bytes()
}

// bodyClient is a client of a broker that answers every request 200 with
// body, and counts the requests.
func bodyClient(t *testing.T, body []byte) (*brokerclient.Client, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
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
	return c, &requests
}

// checkTooMany fails unless err is a *TooManyRowsError over limit of
// what, naming the endpoint and the cap in its message.
func checkTooMany(t *testing.T, err error, endpoint, what string, limit int) {
	t.Helper()
	var tm *brokerclient.TooManyRowsError
	if !errors.Is(err, brokerclient.ErrTooManyRows) || !errors.As(err, &tm) {
		t.Fatalf("err = %v, want a *TooManyRowsError", err)
	}
	if tm.Endpoint != endpoint || tm.What != what || tm.Limit != limit {
		t.Errorf("%+v, want %s over %d %s", tm, endpoint, limit, what)
	}
	if msg := err.Error(); !strings.Contains(msg, endpoint) || !strings.Contains(msg, fmt.Sprintf("more than %d %s", limit, what)) {
		t.Errorf("message %q names neither the endpoint nor the cap", msg)
	}
}

// listReads are the reads of a list, each with the spec's envelope of
// its answer (Endpoints: "Accounts and profit and loss", "Orders",
// "Positions", "Short locates", "Cash ledger") and its cap of rows
// (SECURITY.md's table). Those of a date read listDay.
var listReads = []struct {
	endpoint    string
	cap         int
	open, close string
	read        func(ctx context.Context, c *brokerclient.Client) (int, error)
}{
	{"GET /v1/api/accounts", 1_000, `{"accounts":[`, `]}`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Accounts.List(ctx)
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/pnl", 10_000, `{"accountValue":1,"pnl":[`, `],"dayPnl":2}`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Accounts.PnL(ctx, "LV100001")
		if v == nil {
			return 0, err
		}
		return len(v.Lots), err
	}},
	{"GET /v1/api/accounts/{accountId}/orders", 50_000, `[`, `]`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Orders.Book(ctx, "LV100001")
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/orders/start-date/{date}", 50_000, `{"orders":[`, `]}`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Orders.Fills(ctx, "LV100001", listDay)
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/orders-with-pagination/start-date/{date}", 10_000, `{"pagination":{"currentLimit":100,"totalRecords":1},"tradingHistory":[`, `]}`,
		func(ctx context.Context, c *brokerclient.Client) (int, error) {
			n := 0
			for _, err := range c.Orders.History(ctx, "LV100001", listDay, &brokerclient.HistoryOptions{Days: 1}) {
				if err != nil {
					return n, err
				}
				n++
			}
			return n, nil
		}},
	{"GET /v1/api/accounts/{accountId}/routes", 1_000, `[`, `]`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Orders.Routes(ctx, "LV100001")
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/positions", 10_000, `[`, `]`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Positions.Open(ctx, "LV100001")
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/positions/closed", 5_000, `{"closedPositions":[`, `]}`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Positions.Closed(ctx, "LV100001")
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/positions/historical", 5_000, `{"historicalPositions":[`, `]}`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Positions.Historical(ctx, "LV100001", listDay)
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/locates/history", 50_000, `{"locateHistory":[`, `]}`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Locates.History(ctx, "LV100001")
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/locates/inventory", 10_000, `{"locateInventory":[`, `]}`, func(ctx context.Context, c *brokerclient.Client) (int, error) {
		v, _, err := c.Locates.Inventory(ctx, "LV100001")
		return len(v), err
	}},
	{"GET /v1/api/accounts/{accountId}/cash-transactions/start-date/{startDate}", 50_000, `{"cashHistory":[`, `],"pagination":{"currentLimit":50000,"totalRecords":0}}`,
		func(ctx context.Context, c *brokerclient.Client) (int, error) {
			v, _, err := c.Ledger.List(ctx, "LV100001", listDay, nil)
			if v == nil {
				return 0, err
			}
			return len(v.CashHistory), err
		}},
}

// listDay is the date the dated reads of listReads ask for.
var listDay = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

// Every read of a list has its cap of rows (spec, Endpoints: "Accounts and
// profit and loss", "Orders", "Positions", "Short locates", "Cash ledger";
// the caps are SECURITY.md's): an answer of exactly the cap of `{}` rows,
// in the envelope the spec shows, decodes whole; one row more is a
// *TooManyRowsError naming the endpoint and the cap, and the call gives
// back no rows at all, nothing partial.
func TestListRowCaps(t *testing.T) {
	t.Parallel()
	for _, tc := range listReads {
		t.Run(tc.endpoint, func(t *testing.T) {
			t.Parallel()
			c, _ := bodyClient(t, rowsAnswer(tc.open, tc.cap, tc.close))
			if n, err := tc.read(t.Context(), c); err != nil || n != tc.cap {
				t.Errorf("the cap of %d rows: %d rows, %v; want them all", tc.cap, n, err)
			}
			c, requests := bodyClient(t, rowsAnswer(tc.open, tc.cap+1, tc.close))
			n, err := tc.read(t.Context(), c)
			checkTooMany(t, err, tc.endpoint, "rows", tc.cap)
			if n != 0 {
				t.Errorf("%d rows given back with the error, want none", n)
			}
			if r := requests.Load(); r != 1 {
				t.Errorf("%d requests, want 1: an answer over its cap is not asked for again", r)
			}
		})
	}
}

// The red team's answer (8 MB of `{"locateInventory":[{},{},…]}`, 2.7
// million rows) stops at the inventory's cap of 10,000 rows: the client
// reads no further (the server, writing it without a Content-Length,
// never finishes) and none of it is decoded.
func TestRedTeamInventoryStopsAtItsCap(t *testing.T) {
	t.Parallel()
	e := newEndlessAnswer(t, `{"locateInventory":[{}`, bytes.Repeat([]byte(",{}"), 16<<10))
	rows, _, err := e.client.Locates.Inventory(t.Context(), "LV100001")
	checkTooMany(t, err, "GET /v1/api/accounts/{accountId}/locates/inventory", "rows", 10_000)
	if rows != nil {
		t.Errorf("%d rows given back with the error, want none", len(rows))
	}
	<-e.done
	if w := e.written.Load(); w >= 8<<20 {
		t.Errorf("the server wrote %d bytes: the client read on past the cap", w)
	}
}

// Rows nested in a row count as rows and fields in any object as fields
// (spec: Resources, "Order record" legs; "Account (list row and detail)",
// whose undocumented keys are kept): one order answering 1,001 legs, or
// one account detail with 32,001 keys, is refused before it is decoded.
func TestRowsAndFieldsAtAnyDepth(t *testing.T) {
	t.Parallel()
	var keys bytes.Buffer
	keys.WriteString(`{"account":"LV100001"`)
	for i := range 32_000 {
		fmt.Fprintf(&keys, `,"k%d":0`, i)
	}
	keys.WriteString(`}`)
	for _, tc := range []struct {
		name, endpoint, what string
		limit                int
		body                 []byte
		read                 func(ctx context.Context, c *brokerclient.Client) error
	}{
		{"an order's legs", "GET /v1/api/accounts/{accountId}/order/{clientOrderId}", "rows", 1_000,
			rowsAnswer(`{"clientOrderId":"o1","legs":[`, 1_001, `]}`), func(ctx context.Context, c *brokerclient.Client) error {
				_, _, err := c.Orders.Get(ctx, "LV100001", "o1")
				return err
			}},
		{"an account's keys", "GET /v1/api/account/{accountId}", "fields", 32_000,
			keys.Bytes(), func(ctx context.Context, c *brokerclient.Client) error {
				_, _, err := c.Accounts.Get(ctx, "LV100001")
				return err
			}},
		{"a routes list's order types", "GET /v1/api/accounts/{accountId}/routes", "rows", 1_000,
			[]byte(`[{"routeName":"SMART","orderTypes":[` + strings.Repeat(`"Limit",`, 1_000) + `"Limit"]}]`), func(ctx context.Context, c *brokerclient.Client) error {
				_, _, err := c.Orders.Routes(ctx, "LV100001")
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := bodyClient(t, tc.body)
			checkTooMany(t, tc.read(t.Context(), c), tc.endpoint, tc.what, tc.limit)
		})
	}
}

// Brackets, braces and commas inside strings, escaped quotes included,
// are text, not rows: one order (a cap of 1,000 rows) whose text holds
// 4,000 of each decodes, its text as sent (spec: Resources, "Order
// record", text).
func TestRowCountIgnoresStrings(t *testing.T) {
	t.Parallel()
	text := strings.Repeat(`[{,}] \"`, 4_000)
	c, _ := bodyClient(t, []byte(`{"clientOrderId":"o1","text":"`+text+`"}`))
	o, _, err := c.Orders.Get(t.Context(), "LV100001", "o1")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(text, `\"`, `"`); o.Text == nil || *o.Text != want {
		t.Errorf("text %.40v…, want %.40q…", o.Text, want)
	}
}

// A P&L snapshot of more positions than the P&L answer's cap (spec:
// Events, "P&L stream", pnlReturn positions) is a *TooManyRowsError that
// stops the watch for good, as an oversized message does: reconnecting
// would get the same snapshot, so the server sees one connection.
func TestStreamSnapshotRowCap(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns.Add(1)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		ws.Write(ctx, websocket.MessageText, []byte(`{"@system":true,"status":"PENDING_AUTH","message":"Send authenticate message"}`))
		if _, _, err := ws.Read(ctx); err != nil { // the key pair
			return
		}
		ws.Write(ctx, websocket.MessageText, []byte(`{"@system":true,"status":"CONNECTED","message":"Connected"}`))
		if _, _, err := ws.Read(ctx); err != nil { // the subscribe
			return
		}
		ws.Write(ctx, websocket.MessageText, rowsAnswer(`{"action":"init","target":"pnlReturn","account":"LV100001","pnlReturn":{"positions":[`, 10_001, `]}}`))
		ws.Read(ctx) // until the client hangs up
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
	pw, err := c.Streams.WatchPnL(t.Context(), []string{"LV100001"}, brokerclient.WithPing(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	checkTooMany(t, pw.Wait(ctx), "{ws_base_url}/stream/pnl", "rows", 10_000)
	if _, ok := pw.Snapshot("LV100001"); ok {
		t.Error("a snapshot was kept from the refused message")
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (no reconnection)", n)
	}
}
