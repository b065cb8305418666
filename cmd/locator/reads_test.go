package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
)

// brokerClient is a client on the bundle's simulator with its live keys, for
// setting up orders the way another tool would.
func (b *cliBundle) brokerClient(t *testing.T) *brokerclient.Client {
	t.Helper()
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(b.env["LOCATOR_BASE_URL"]),
		brokerclient.WithCredentials(b.env["LOCATOR_KEY_ID"], b.env["LOCATOR_SECRET"]))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// placeLimit places a Day limit order on SMART through the client.
func (b *cliBundle) placeLimit(t *testing.T, side brokerclient.Side, oc brokerclient.OpenClose, symbol string, qty int64, limit string) *brokerclient.Order {
	t.Helper()
	px := decimal.RequireFromString(limit)
	o, _, err := b.brokerClient(t).Orders.Place(t.Context(), "LV100001", brokerclient.OrderRequest{
		Symbol: symbol, Side: side, OpenClose: oc, OrderType: brokerclient.OrderTypeLimit, SecurityType: brokerclient.SecurityTypeStock,
		TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: qty, LimitPrice: &px, Route: "SMART",
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// jsonLines decodes every stdout line as one JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("not one JSON object per line: %q", l)
		}
		objs = append(objs, o)
	}
	return objs
}

// pollUntil polls cond on the wall clock (the simulator here runs on it)
// for up to 10 s.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantLines checks that out holds each string.
func wantLines(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// Spec "Account", "Profit and loss response", "Position records", "Route
// record": each read prints an aligned table with money to
// 2 decimals and prices as given, and with --json one record per line. The
// default scenario holds a carried MSFT lot (100 at 400.00, prior close
// 415.00), two closed lots (AAPL with id 9007199254740993, above 2^53, and
// SPY) and the live routes SMART, CTDL, SMARTO, SMARTM, ARCA.
func TestReadCommands(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	paper := map[string]string{"LOCATOR_KEY_ID": "SIMPAPERKEY01", "LOCATOR_SECRET": "sim-paper-secret-01", "LOCATOR_ACCOUNT": "PP200001"}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		table []string // in the table output
		rows  int      // JSON lines
		json  []string // in the JSON output
	}{
		{"accounts", nil, []string{"accounts"},
			[]string{"ACCOUNT", "BUYING POWER", "LOCATE COSTS", "*LV100001", "Margin", "Active", "100000.00", "LV100002", "Restricted", "25000.00"},
			2, []string{`"account":"LV100001"`, `"accountStatus":"Restricted"`}},
		{"accounts without an account set", map[string]string{"LOCATOR_ACCOUNT": ""}, []string{"accounts"},
			[]string{"LV100001", "LV100002"}, 2, []string{`"account":"LV100002"`}},
		{"pnl", nil, []string{"pnl"},
			[]string{"ACCOUNT VALUE", "DAY P&L", "TOTAL UNREALIZED", "POSITION ID", "MSFT", "Long", "100", "LEVERAGE USED"},
			1, []string{`"pnl":[{`, `"symbol":"MSFT"`, `"dayUnrealizedPnL"`}},
		{"positions", nil, []string{"positions"},
			[]string{"POSITION ID", "SIDE", "AVG PRICE", "UNREALIZED", "MSFT", "Long", "100", "400", "2026-11-20", "Overnight"},
			1, []string{`"symbol":"MSFT"`, `"side":"Long"`, `"shares":100`}},
		{"positions --closed", nil, []string{"positions", "--closed"},
			[]string{"PRICE OPEN", "REALIZED", "9007199254740993", "AAPL", "185.1", "188.35", "650.00", "2026-11-17", "2026-11-19", "SPY", "-125.00"},
			2, []string{`"positionId":"9007199254740993"`, `"symbol":"SPY"`}},
		{"positions --historical", nil, []string{"positions", "--historical", "2026-11-18"},
			[]string{"DATE", "CLOSING PRICE", "MARKET VALUE", "2026-11-18", "9007199254740993", "AAPL", "200", "37020.00"},
			1, []string{`"symbol":"AAPL"`, `"quantity":200`}},
		{"routes", nil, []string{"routes"},
			[]string{"ROUTE", "SECURITY TYPES", "TIMES IN FORCE", "SMART", "CTDL", "SMARTO", "SMARTM", "ARCA", "Stock", "Limit", "IOC"},
			5, []string{`"routeName":"SMART"`, `"routeName":"ARCA"`, `"timesInForce":[`}},
		{"routes on paper", paper, []string{"routes", "--env", "paper"},
			[]string{"PAPER", "PAPERM"}, 2, []string{`"routeName":"PAPERM"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := b.MustRunMain(t, tc.env, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			wantLines(t, "table", out, tc.table...)
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if strings.Contains(lines[0], "{") || !strings.Contains(lines[0], "  ") {
				t.Errorf("first line is not a table header: %q", lines[0])
			}
			code, out, errOut = b.MustRunMain(t, tc.env, append(tc.args, "--json")...)
			if code != 0 {
				t.Fatalf("--json: exit %d\n%s\n%s", code, out, errOut)
			}
			if objs := jsonLines(t, out); len(objs) != tc.rows {
				t.Errorf("--json: %d objects, want %d:\n%s", len(objs), tc.rows, out)
			}
			wantLines(t, "--json", out, tc.json...)
		})
	}
	for _, r := range b.sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("a read sent %s %s", r.Method, r.Path)
		}
	}
}

// Spec "Orders": `orders` prints today's book (every order of the session,
// any state); --history DATE within a week reads the fill archive, an older
// DATE the paginated history (asserted from the simulator's request log).
func TestOrdersCommand(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	resting := b.placeLimit(t, brokerclient.SideBuy, brokerclient.OpenCloseOpen, "AAPL", 10, "150.00")
	filled := b.placeLimit(t, brokerclient.SideBuy, brokerclient.OpenCloseOpen, "SPY", 5, "530.00")
	// Let both be registered and decided (50 ms) before the book is read.
	pollUntil(t, "the SPY buy to fill", func() bool {
		o, _, err := b.brokerClient(t).Orders.Get(t.Context(), "LV100001", filled.ClientOrderID)
		return err == nil && o.OrderStatus == brokercode.OrderStatusFilled
	})

	code, out, errOut := b.MustRunMain(t, nil, "orders")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	wantLines(t, "orders", out, "CLIENT ORDER ID", "STATUS", "AVG PRICE", resting.ClientOrderID, "AAPL", "Accepted", "150",
		filled.ClientOrderID, "SPY", "Filled", "520", "SMART", "Day")
	code, out, _ = b.MustRunMain(t, nil, "orders", "--json")
	objs := jsonLines(t, out)
	if code != 0 || len(objs) != 2 || objs[0]["clientOrderId"] != resting.ClientOrderID || objs[1]["orderStatus"] != "Filled" {
		t.Errorf("orders --json: exit %d\n%s", code, out)
	}

	today := ledger.TradeDate(b.clk.Now())
	code, out, errOut = b.MustRunMain(t, nil, "orders", "--history", today.Format(time.DateOnly))
	if code != 0 {
		t.Fatalf("--history today: exit %d\n%s\n%s", code, out, errOut)
	}
	wantLines(t, "fills today", out, "TRADE DATE", "NET", "SPY", "Buy", "5", "520", "2600.00", "0.03")
	code, out, _ = b.MustRunMain(t, nil, "orders", "--history", today.Format(time.DateOnly), "--json")
	if objs := jsonLines(t, out); code != 0 || len(objs) != 1 || objs[0]["symbol"] != "SPY" {
		t.Errorf("--history --json: exit %d\n%s", code, out)
	}

	// Thirty days back: the paginated history, which holds the scenario's
	// seeded fills too.
	month := today.AddDate(0, 0, -30).Format(time.DateOnly)
	code, out, errOut = b.MustRunMain(t, nil, "orders", "--history", month, "--json")
	if code != 0 {
		t.Fatalf("--history a month: exit %d\n%s\n%s", code, out, errOut)
	}
	if objs := jsonLines(t, out); len(objs) < 2 {
		t.Errorf("paginated history: %d fills\n%s", len(objs), out)
	}
	var archive, paginated int
	for _, r := range b.sim.Requests() {
		switch {
		case r.Status != 200:
			// Separate runs have separate token buckets: one may meet a 429
			// the next run's client recovers from.
		case strings.Contains(r.Path, "/orders-with-pagination/start-date/"+month):
			paginated++
			if !strings.Contains(r.Query, "numberOfDays=31") {
				t.Errorf("paginated query %q", r.Query)
			}
		case strings.Contains(r.Path, "/orders/start-date/"):
			archive++
		}
	}
	if archive != 2 || paginated != 1 {
		t.Errorf("archive reads %d (want 2), paginated reads %d (want 1)", archive, paginated)
	}
}

// Bad read input exits 2 and sends nothing (docs/design.md rule 8).
func TestReadCommandsBadInput(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	tomorrow := ledger.TradeDate(b.clk.Now()).AddDate(0, 0, 1).Format(time.DateOnly)
	longAgo := ledger.TradeDate(b.clk.Now()).AddDate(-2, 0, 0).Format(time.DateOnly)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"positions", "--closed", "--historical", "2026-11-18"}, "choose one"},
		{[]string{"positions", "--historical", "18/11/2026"}, "YYYY-MM-DD"},
		{[]string{"positions", "--historical", tomorrow}, "after today"},
		{[]string{"orders", "--history", "yesterday"}, "YYYY-MM-DD"},
		{[]string{"orders", "--history", tomorrow}, "after today"},
		{[]string{"orders", "--history", longAgo}, "one year"},
		{[]string{"accounts", "extra"}, "unexpected argument"},
		{[]string{"routes", "SMART"}, "unexpected argument"},
		{[]string{"pnl", "--env", "demo"}, "live or paper"},
	} {
		code, _, errOut := b.MustRunMain(t, nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if code, _, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_SECRET": "wrong"}, "accounts"); code != 2 || !strings.Contains(errOut, "refused these keys") {
		t.Errorf("bad keys: exit %d %q", code, errOut)
	}
	for _, r := range b.sim.Requests() {
		if r.KeyID == "SIMLIVEKEY01" && r.Status == 200 {
			t.Errorf("bad input sent %s %s", r.Method, r.Path)
		}
	}
}
