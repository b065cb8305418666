package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// orderPosts returns the bodies of the order placements the simulator
// received, oldest first.
func (b *cliBundle) orderPosts(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range b.sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/order") {
			var body map[string]any
			if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
				t.Fatalf("order body %q: %v", r.Body, err)
			}
			out = append(out, body)
		}
	}
	return out
}

// orderRecord reads the order's write-ahead record from the CLI's database.
func (b *cliBundle) orderRecord(t *testing.T, id string) *workflow.Order {
	t.Helper()
	st, err := store.Open(t.Context(), b.env["LOCATOR_DB"], clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err := st.GetOrder(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// shortJSON runs a short with --json and decodes its one line.
func (b *cliBundle) shortJSON(t *testing.T, env map[string]string, args ...string) (int, console.ShortOutcome, string) {
	t.Helper()
	code, out, errOut := b.MustRunMain(t, env, append([]string{"short"}, append(args, "--json")...)...)
	var o console.ShortOutcome
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &o) != nil {
		t.Fatalf("want one JSON object, exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	return code, o, errOut
}

// Spec "Short locates" then "Orders": HTBX (price 12.50)
// needs a locate; the command takes it, then places one Sell/Open Day limit
// on SMART (live default route) under a fresh clientOrderId recorded before
// the POST, and follows it to Filled at the last price. The table form runs
// the same flow on HTBY (price 8.40).
func TestShortFilled(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, o, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--yes")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if o.State != "filled" || o.OrderStatus != "Filled" || o.Executed != 100 || o.PriceAvg != "12.50" || o.Route != "SMART" ||
		o.LimitPrice != "12.00" || o.Side != "Sell" || o.OpenClose != "Open" || o.Locate == nil || o.Locate.State != "filled" || o.Locate.Shares != 100 {
		t.Errorf("outcome %+v (locate %+v)", o, o.Locate)
	}
	if _, err := uuid.Parse(o.ClientOrderID); err != nil {
		t.Errorf("clientOrderId %q is not a fresh uuid", o.ClientOrderID)
	}

	// Exactly one placement, after the locate was accepted, saying what was asked.
	var accepted, placed int
	for i, r := range b.sim.Requests() {
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/locates/accept"):
			accepted = i
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/order"):
			placed = i
		}
	}
	posts := b.orderPosts(t)
	if len(posts) != 1 || accepted == 0 || placed < accepted {
		t.Fatalf("%d placements (accept at %d, order at %d)", len(posts), accepted, placed)
	}
	want := map[string]any{"clientOrderId": o.ClientOrderID, "symbol": "HTBX", "side": "Sell", "openClose": "Open", "orderType": "Limit",
		"securityType": "Stock", "timeInForce": "Day", "orderQuantity": 100.0, "limitPrice": 12.0, "route": "SMART"}
	for k, v := range want {
		if posts[0][k] != v {
			t.Errorf("order body %s = %v, want %v", k, posts[0][k], v)
		}
	}
	rec := b.orderRecord(t, o.ClientOrderID)
	if rec.State != states.Filled || rec.OrderStatus != "Filled" || rec.Executed != 100 || !rec.LimitPrice.Equal(decimal.NewFromInt(12)) ||
		rec.LocateWorkflowID != o.Locate.ID || rec.SentAt.IsZero() || rec.SentAt.Before(rec.CreatedAt) || rec.Route != "SMART" {
		t.Errorf("record %+v", rec)
	}

	code, out, errOut := b.MustRunMain(t, nil, "short", "HTBY", "300", "--limit-price", "8.40", "--ref-price", "8.40", "--yes")
	if code != 0 {
		t.Fatalf("table: exit %d\n%s\n%s", code, out, errOut)
	}
	wantLines(t, "short table", out, "CLIENT ORDER ID", "STATE", "AVG PRICE", "HTBY", "Sell short", "300", "8.40", "SMART", "filled", "Filled")
	if n := strings.Count(strings.TrimSpace(out), "\n"); n != 1 {
		t.Errorf("want a header and one line, got %d lines:\n%s", n+1, out)
	}
	wantLines(t, "progress", errOut, "locate HTBY", "filled — 300 shares at 0.0300", "PendingNew", "Filled")
}

// Spec "Order statuses": a sell limit above the last price rests; the
// command reports it working (exit 0) instead of waiting for a fill.
func TestShortWorking(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, o, errOut := b.shortJSON(t, nil, "HTBX", "150", "--limit-price", "13.00", "--ref-price", "12.50", "--yes")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if o.State != "working" || o.OrderStatus != "Accepted" || o.Executed != 0 || o.Quantity != 150 || o.Locate.Shares != 200 {
		t.Errorf("outcome %+v (locate %+v)", o, o.Locate)
	}
	if rec := b.orderRecord(t, o.ClientOrderID); rec.State != states.OrderWorking || rec.OrderStatus != "Accepted" {
		t.Errorf("record %+v", rec)
	}
}

// Spec "Order rejection codes": R95 (an opening buy and sell on one symbol)
// is asynchronous; the command follows the order to Rejected and reports the
// code (exit 3). The working buy is placed by another tool first.
func TestShortRejectedR95(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	buy := b.placeLimit(t, brokerclient.SideBuy, brokerclient.OpenCloseOpen, "HTBX", 100, "10.00")
	code, o, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--yes")
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, errOut)
	}
	if o.State != "rejected" || o.OrderStatus != "Rejected" || o.Code != "R95" || !strings.HasPrefix(o.Text, "R95:") {
		t.Errorf("outcome %+v", o)
	}
	if !strings.Contains(errOut, "rejected R95") {
		t.Errorf("stderr %q", errOut)
	}
	if rec := b.orderRecord(t, o.ClientOrderID); rec.State != states.Rejected || rec.Code != "R95" {
		t.Errorf("record %+v", rec)
	}
	posts := b.orderPosts(t)
	if len(posts) != 2 || posts[0]["clientOrderId"] != buy.ClientOrderID || posts[1]["clientOrderId"] != o.ClientOrderID {
		t.Errorf("placements %v", posts)
	}
}

// Spec "Locate errors": a restricted symbol's locate is rejected (R06); the
// command stops with the locate's exit code (3) and places no order.
func TestShortLocateRejected(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, o, errOut := b.shortJSON(t, nil, "RSTR", "100", "--limit-price", "22.00", "--ref-price", "22.00", "--yes")
	if code != 3 || !strings.Contains(errOut, "R06") {
		t.Fatalf("exit %d, want 3 with R06\n%s", code, errOut)
	}
	if o.State != console.NotSent || o.ClientOrderID != "" || o.Locate == nil || o.Locate.State != "rejected" {
		t.Errorf("outcome %+v", o)
	}
	if posts := b.orderPosts(t); len(posts) != 0 {
		t.Errorf("orders placed: %v", posts)
	}
}

// docs/design.md rule 8 and spec "API keys" rule 5: bad input, a non-Active
// account, a paper/live mismatch, a route the account lacks or that takes no
// stock, and a short buying power cannot carry all exit 2 with nothing
// written at the broker.
func TestShortRefusals(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	paper := map[string]string{"LOCATOR_KEY_ID": "SIMPAPERKEY01", "LOCATOR_SECRET": "sim-paper-secret-01", "LOCATOR_ACCOUNT": "PP200001"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"non-Active account", map[string]string{"LOCATOR_ACCOUNT": "LV100002"}, []string{"HTBX", "100", "--limit-price", "12.00"}, "not active"},
		{"paper account under --env live", paper, []string{"HTBX", "100", "--limit-price", "12.00"}, "but live was selected"},
		{"live account under --env paper", nil, []string{"HTBX", "100", "--limit-price", "12.00", "--env", "paper"}, "but paper was selected"},
		{"no limit", nil, []string{"HTBX", "100"}, "--limit-price is required"},
		{"zero limit", nil, []string{"HTBX", "100", "--limit-price", "0"}, "positive"},
		{"negative limit", nil, []string{"HTBX", "100", "--limit-price", "-12"}, "positive"},
		{"limit not a number", nil, []string{"HTBX", "100", "--limit-price", "twelve"}, "positive"},
		{"five decimals", nil, []string{"HTBX", "100", "--limit-price", "0.12345"}, "4 decimal places"},
		{"sub-penny above a dollar", nil, []string{"HTBX", "100", "--limit-price", "12.005"}, "whole cents"},
		{"limit above 9999.99", nil, []string{"HTBX", "100", "--limit-price", "10000"}, "at most 9999.99"},
		{"zero quantity", nil, []string{"HTBX", "0", "--limit-price", "12.00"}, "whole number"},
		{"fractional quantity", nil, []string{"HTBX", "1.5", "--limit-price", "12.00"}, "whole number"},
		{"quantity above a million", nil, []string{"HTBX", "1000001", "--limit-price", "12.00"}, "whole number"},
		{"symbol not a ticker", nil, []string{"ht/bx", "100", "--limit-price", "12.00"}, "not a ticker"},
		{"one argument", nil, []string{"HTBX", "--limit-price", "12.00"}, "SYMBOL QTY"},
		{"bad max price", nil, []string{"HTBX", "100", "--limit-price", "12.00", "--max-price", "-1"}, "max-price"},
		{"unknown route", nil, []string{"HTBX", "100", "--limit-price", "12.00", "--route", "NOPE"}, "not available"},
		{"option route", nil, []string{"HTBX", "100", "--limit-price", "12.00", "--route", "SMARTO"}, "does not take Day limit orders for stock"},
		{"over buying power", nil, []string{"HTBX", "100000", "--limit-price", "12.00"}, "buying power allows"},
		// Spec "Orders" rules 1-2 and "Route record": combinations
		// the spec forbids are refused before the locate or the order.
		{"unknown order type", nil, []string{"HTBX", "100", "--type", "trailing-stop"}, "--type"},
		{"unknown time in force", nil, []string{"HTBX", "100", "--limit-price", "12.00", "--tif", "opg"}, "--tif"},
		{"stop without its price", nil, []string{"HTBX", "100", "--type", "stop"}, "--stop-price is required"},
		{"stop-limit without a limit", nil, []string{"HTBX", "100", "--type", "stop-limit", "--stop-price", "11.00"}, "--limit-price is required"},
		{"limit price on a market order", nil, []string{"HTBX", "100", "--type", "market", "--limit-price", "12.00"}, "takes none"},
		{"stop price on a limit order", nil, []string{"HTBX", "100", "--limit-price", "12.00", "--stop-price", "11.00"}, "takes none"},
		{"extended hours on a stop", nil, []string{"HTBX", "100", "--type", "stop", "--stop-price", "11.00", "--tif", "gtc-plus"}, "takes Limit orders only"},
		{"extended hours on a market order", nil, []string{"HTBX", "100", "--type", "market", "--tif", "day-plus"}, "takes Limit orders only"},
		{"IOC on SMART", nil, []string{"HTBX", "100", "--limit-price", "12.00", "--tif", "ioc"}, "SMART does not take IOC Limit orders"},
		{"FOK on paper", paper, []string{"HTBX", "100", "--limit-price", "12.00", "--tif", "fok", "--env", "paper"}, "no route of paper account PP200001 takes FOK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(b.writes())
			// With HTBX's price as the fat-finger guard's reference: the
			// day's first short has none at the broker.
			code, out, errOut := b.MustRunMain(t, tc.env, append([]string{"short", "--yes", "--ref-price", "12.50"}, tc.args...)...)
			if code != 2 || !strings.Contains(strings.ToLower(errOut), strings.ToLower(tc.want)) {
				t.Errorf("exit %d, stderr %q; want 2 and %q\n%s", code, errOut, tc.want, out)
			}
			if w := b.writes(); len(w) != before {
				t.Errorf("writes sent: %v", w[before:])
			}
		})
	}
	if w := b.writes(); len(w) != 0 {
		t.Errorf("writes sent: %v", w)
	}
}

// A confirmation is required unless --yes; when nobody can
// give one (no terminal; --json is for machines) the command refuses, exit
// 2 like every write that would need a person, before a quote or
// an order is sent.
func TestShortNeedsConfirmation(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, args := range [][]string{
		{"short", "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--json"},
		{"short", "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.02", "--json"},
	} {
		code, out, errOut := b.MustRunMain(t, nil, args...)
		if code != console.ExitUsage || !strings.Contains(errOut, "--yes") || out != "" {
			t.Errorf("%v: exit %d, want 2\nstdout %s\nstderr %s", args, code, out, errOut)
		}
	}
	if w := b.writes(); len(w) != 0 {
		t.Errorf("writes sent: %v", w)
	}
}

// docs/design.md rule 1: an order recorded but left unanswered by an earlier run
// (a crash between the intent and the answer) is settled by its
// clientOrderId before anything new is sent, never placed again: one that
// reached the broker takes its status, one that never did is marked
// unregistered. AAPL is easy to borrow, so no locate is involved.
func TestShortSettlesLeftovers(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	reached, lost := b.leftoverOrders(t)
	code, o, errOut := b.shortJSON(t, nil, "AAPL", "10", "--limit-price", "189.00", "--ref-price", "190.00", "--yes")
	if code != 0 || o.State != "filled" || o.Locate.State != "not_needed" {
		t.Fatalf("exit %d, outcome %+v\n%s", code, o, errOut)
	}
	// Their first step (intent → unknown) is taken as the owner starts,
	// before the command follows the account; how each was settled shows.
	wantLines(t, "stderr", errOut, "order "+reached+" AAPL: unknown → filled (Filled)",
		"order "+lost+" AAPL: unknown → unregistered — it never reached the broker")
	if count := b.leftoversSettled(t, reached, lost); count[reached] != 1 || count[lost] != 0 || count[o.ClientOrderID] != 1 || len(count) != 2 {
		t.Errorf("placements by id: %v", count)
	}
}

// docs/design.md rule 1, and what `locator resume` promises: orders an
// earlier run left unanswered are settled by their clientOrderId before
// resume ends, never placed again; whether resume owns the account or
// follows a serve that does. With no workflow open, resume ended at once,
// its owner's lookups dropped, and the orders were left unknown
// (TestCrashRecovery, now and then).
func TestResumeSettlesLeftoverOrders(t *testing.T) {
	t.Parallel()
	for _, follower := range []bool{false, true} {
		t.Run(map[bool]string{false: "owner", true: "follower"}[follower], func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			reached, lost := b.leftoverOrders(t)
			if follower {
				b.startServe(t)
			}
			code, out, errOut := b.MustRunMain(t, nil, "resume")
			if code != 0 || !strings.Contains(out, "resumed 0 workflow(s)") {
				t.Fatalf("resume: exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			if count := b.leftoversSettled(t, reached, lost); count[reached] != 1 || len(count) != 1 {
				t.Errorf("placements by id: %v; want the one placed before resume alone", count)
			}
		})
	}
}

// leftoversSettled checks that the orders of leftoverOrders were settled
// by their lookup (reached filled, lost unregistered) and returns the
// placements the broker received, by clientOrderId.
func (b *cliBundle) leftoversSettled(t *testing.T, reached, lost string) map[any]int {
	t.Helper()
	if r := b.orderRecord(t, reached); r.State != states.Filled || r.OrderStatus != "Filled" {
		t.Errorf("reached: %+v; want filled", r)
	}
	if r := b.orderRecord(t, lost); r.State != states.OrderUnregistered {
		t.Errorf("lost: %+v; want unregistered", r)
	}
	count := map[any]int{}
	for _, p := range b.orderPosts(t) {
		count[p["clientOrderId"]]++
	}
	return count
}

// leftoverOrders records two AAPL short orders as an earlier run left them
// (intent written, no answer recorded), and places the first at the
// broker (it reached it); it returns their ids.
func (b *cliBundle) leftoverOrders(t *testing.T) (reached, lost string) {
	t.Helper()
	ctx := t.Context()
	reached, lost = uuid.NewString(), uuid.NewString()
	st, err := store.Open(ctx, b.env["LOCATOR_DB"], clock.NewFake(b.clk.Now().Add(-2*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, err := b.brokerClient(t).RowKey() // the earlier run held the key pair
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{reached, lost} {
		o := &workflow.Order{ClientOrderID: id, Account: "LV100001", Symbol: "AAPL", Side: "Sell", OpenClose: "Open",
			OrderType: "Limit", TimeInForce: "Day", Quantity: 10, LimitPrice: decimal.RequireFromString("189.00"), Route: "SMART"}
		o.MAC = workflow.RowKey(key).Order(o)
		if err := st.CreateOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	px := decimal.RequireFromString("189.00")
	if _, _, err := b.brokerClient(t).Orders.Place(ctx, "LV100001", brokerclient.OrderRequest{ClientOrderID: reached, Symbol: "AAPL",
		Side: brokerclient.SideSell, OpenClose: brokerclient.OpenCloseOpen, OrderType: brokerclient.OrderTypeLimit,
		SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: 10, LimitPrice: &px, Route: "SMART"}); err != nil {
		t.Fatal(err)
	}
	return reached, lost
}

// Spec "Cross-cutting conventions" (clientOrderId is not an idempotency key)
// and docs/design.md rule 1: a placement whose answer is lost is settled by its
// clientOrderId, never sent again. A connection reset after the broker took
// the order settles as that order (filled); a reset before it did settles
// as unregistered, exit 1, with nothing working under the id.
func TestShortLostAnswer(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, tc := range []struct {
		kind  string
		code  int
		state states.State
	}{
		{"reset-after", 0, states.Filled},
		{"reset", 1, states.OrderUnregistered},
	} {
		if err := b.sim.SetFaults(brokersim.Faults{Script: []brokersim.FaultStep{{Match: "POST /v1/api/accounts/LV100001/order", Kind: tc.kind, Count: 1}}}); err != nil {
			t.Fatal(err)
		}
		before := len(b.orderPosts(t))
		code, o, errOut := b.shortJSON(t, nil, "AAPL", "10", "--limit-price", "189.00", "--ref-price", "190.00", "--yes")
		if code != tc.code || o.State != string(tc.state) || !strings.Contains(errOut, "the answer was lost") {
			t.Errorf("%s: exit %d (want %d), outcome %+v\n%s", tc.kind, code, tc.code, o, errOut)
		}
		rec := b.orderRecord(t, o.ClientOrderID)
		if rec.State != tc.state || !strings.Contains(rec.Reason, "lost") {
			t.Errorf("%s: record %+v", tc.kind, rec)
		}
		posts := b.orderPosts(t)[before:]
		if len(posts) != 1 || posts[0]["clientOrderId"] != o.ClientOrderID {
			t.Errorf("%s: placements %v", tc.kind, posts)
		}
	}
}

// Locate, size and short share one definition of the shares
// available to short (workflow.Available): located inventory less what
// working short sells will take. With 1000 located and a working 300-share
// short sell, all three see 700.
func TestAvailableSharesAgree(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "1000", "--yes"); code != 0 || !strings.Contains(out, "filled") {
		t.Fatalf("locate: exit %d\n%s\n%s", code, out, errOut)
	}
	b.placeLimit(t, brokerclient.SideSell, brokerclient.OpenCloseOpen, "HTBX", 300, "20.00") // far above the market: it works

	code, out, errOut := b.MustRunMain(t, nil, "size", "HTBX", "--price", "12.50", "--json")
	var z console.SizingJSON
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &z); err != nil || code != 0 {
		t.Fatalf("size: exit %d %q %v\n%s", code, out, err, errOut)
	}
	var inventory int64 = -1
	for _, l := range z.Limits {
		if l.Name == string(locator.LimitInventory) && l.Shares != nil {
			inventory = *l.Shares
		}
	}
	if z.Located != 1000 || z.WorkingSells != 300 || inventory != 700 {
		t.Fatalf("size: located %d, working sells %d, inventory limit %d; want 1000, 300, 700", z.Located, z.WorkingSells, inventory)
	}

	quotes := len(b.requestsTo("POST /v1/api/accounts/locates/quote"))
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "700", "--yes"); code != 0 || !strings.Contains(out, "covered") {
		t.Errorf("locate 700 with 700 available: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "800", "--yes", "--json"); code != 0 || !strings.Contains(out, `"shares":100`) {
		t.Errorf("locate 800 with 700 available should quote the 100-share shortfall: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := len(b.requestsTo("POST /v1/api/accounts/locates/quote")) - quotes; n != 1 {
		t.Errorf("%d quotes for the two locates, want 1", n)
	}
	code, o, errOut := b.shortJSON(t, nil, "HTBX", "800", "--limit-price", "12.50", "--ref-price", "12.50", "--yes")
	if code != 0 || o.Locate == nil || o.Locate.State != "covered" {
		t.Errorf("short 800 with 800 available: exit %d, outcome %+v\n%s", code, o, errOut)
	}
}

// requestsTo lists the simulator's requests whose "METHOD path" has sub.
func (b *cliBundle) requestsTo(sub string) []brokersim.RequestRecord {
	var out []brokersim.RequestRecord
	for _, r := range b.sim.Requests() {
		if strings.Contains(r.Method+" "+r.Path, sub) {
			out = append(out, r)
		}
	}
	return out
}

// `locator orders cancel CLIENT_ORDER_ID` cancels a working order
// locator placed through its order workflow (spec "Orders": DELETE by id);
// an order that is not open is refused with nothing sent.
func TestOrdersCancel(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	// A sell far above the market (past the fat-finger guard, on purpose)
	// stays working.
	code, o, errOut := b.shortJSON(t, nil, "AAPL", "10", "--limit-price", "250.00", "--force", "--yes")
	if code != 0 || o.State != string(states.OrderWorking) {
		t.Fatalf("short: exit %d, outcome %+v\n%s", code, o, errOut)
	}
	code, out, errOut := b.MustRunMain(t, nil, "orders", "cancel", o.ClientOrderID)
	if code != 0 || !strings.Contains(out, "canceled (Canceled)") {
		t.Fatalf("orders cancel: exit %d\n%s\n%s", code, out, errOut)
	}
	if rec := b.orderRecord(t, o.ClientOrderID); rec.State != states.Canceled || rec.OrderStatus != "Canceled" {
		t.Errorf("record %+v", rec)
	}
	deletes := len(b.requestsTo("DELETE /v1/api/accounts/LV100001/orders/"))
	for _, id := range []string{o.ClientOrderID, "not-an-order-of-ours"} {
		if code, _, errOut := b.MustRunMain(t, nil, "orders", "cancel", id); code != 2 || !strings.Contains(errOut, "nothing was sent") {
			t.Errorf("cancel %s again: exit %d, want 2\n%s", id, code, errOut)
		}
	}
	if n := len(b.requestsTo("DELETE /v1/api/accounts/LV100001/orders/")); n != deletes || deletes != 1 {
		t.Errorf("%d order cancels sent, want 1", n)
	}
}

// With
// the stream up, short learns its order's fate from it — the stream is
// subscribed before the POST, and after it no single-order lookup and at
// most one order-book read reach the broker.
func TestShortFollowsTheStream(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, o, errOut := b.shortJSON(t, nil, "AAPL", "10", "--limit-price", "189.00", "--ref-price", "190.00", "--yes")
	if code != 0 || o.State != string(states.Filled) {
		t.Fatalf("exit %d, outcome %+v\n%s", code, o, errOut)
	}
	log := b.sim.Requests()
	placed, subscribed := -1, -1
	for i, r := range log {
		switch {
		case r.Method == "GET" && r.Path == "/stream/portfolio" && subscribed < 0:
			subscribed = i
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/order"):
			placed = i
		}
	}
	if subscribed < 0 || placed < subscribed {
		t.Fatalf("the portfolio stream (at %d) was not subscribed before the order (at %d)", subscribed, placed)
	}
	var lookups, books int
	for _, r := range log[placed+1:] {
		switch {
		case r.Method == "GET" && strings.Contains(r.Path, "/order/"):
			lookups++
		case r.Method == "GET" && strings.HasSuffix(r.Path, "/orders"):
			books++
		}
	}
	if lookups != 0 || books > 1 {
		t.Errorf("after the placement: %d single-order lookups and %d order-book reads; want 0 and at most 1", lookups, books)
	}
}

// The orders a short placed are listed by status beside
// the workflows, newest first, and `status --json` prints one record a
// line, each with its type (owner, workflow, order).
func TestStatusListsShortOrders(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, o, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.05", "--yes")
	if code != 0 || o.ClientOrderID == "" {
		t.Fatalf("short: exit %d %+v\n%s", code, o, errOut)
	}
	code, out, errOut := b.MustRunMain(t, nil, "status")
	if code != 0 || !strings.Contains(out, o.ClientOrderID) || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(o.ClientOrderID)+`\s+\S+ \S+ ET\s+order\s+LV100001\s+HTBX\s+100\s+100\s+12\.0000\s+`+o.State).MatchString(out) {
		t.Errorf("status: exit %d, the order's row is missing\n%s\n%s", code, out, errOut)
	}
	code, out, _ = b.MustRunMain(t, nil, "status", "--json")
	types := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("status --json line %q: %v", line, err)
		}
		typ, _ := rec["type"].(string)
		types[typ]++
		if typ == "order" && (rec["clientOrderId"] != o.ClientOrderID || rec["limitPrice"] != "12.0000" || rec["locateWorkflowId"] == "") {
			t.Errorf("order record %v", rec)
		}
	}
	if code != 0 || types["workflow"] != 1 || types["order"] != 1 || len(types) != 2 {
		t.Errorf("status --json: exit %d, record types %v, want one workflow and one order\n%s", code, types, out)
	}
	// status CLIENT_ORDER_ID shows the order and its transition log, as
	// status ID does a workflow's: created at intent, then sent, ending
	// in the state the short reported.
	code, out, errOut = b.MustRunMain(t, nil, "status", "-o", "json", o.ClientOrderID)
	recs := jsonLines(t, out)
	if code != 0 || len(recs) < 3 {
		t.Fatalf("status %s: exit %d, want the order and its log\n%s\n%s", o.ClientOrderID, code, out, errOut)
	}
	var path []string
	for _, r := range recs[1:] {
		path = append(path, fmt.Sprint(r["to"]))
	}
	if recs[0]["type"] != "order" || recs[0]["clientOrderId"] != o.ClientOrderID ||
		!strings.HasPrefix(strings.Join(path, ">"), "intent>sent>") || path[len(path)-1] != o.State {
		t.Errorf("status %s: exit %d, want the order then its log from intent, sent, to %s\n%s\n%s", o.ClientOrderID, code, o.State, out, errOut)
	}
	if code, _, errOut = b.MustRunMain(t, nil, "status", "LOC-none"); code != console.ExitUsage || !strings.Contains(errOut, "no workflow or order LOC-none") {
		t.Errorf("status LOC-none: exit %d, want 2 saying no workflow or order\n%s", code, errOut)
	}
}
