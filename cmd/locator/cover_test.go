package main

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/market"
)

// Spec "Orders" rule 3 (intent is side plus openClose): `cover`
// buys to close (Buy/Close) a short made by `short`, and the broker's open
// positions are flat after it; a cover of no short position, or of more
// than is short, is refused. Run in process and from a follower of a
// serve that owns the account: the same account API does it.
func TestCoverClosesTheShort(t *testing.T) {
	t.Parallel()
	bothWays(t, testSpeed, func(t *testing.T, b *cliBundle) {
		// The owner refuses a cover its positions
		// cannot take (none short; more than is short), exit 2,
		// nothing sent.
		refused := func(qty, want string) {
			t.Helper()
			before := len(b.writes())
			code, _, errOut := b.MustRunMain(t, nil, "cover", "HTBX", qty, "--limit-price", "13.00", "--yes")
			if code != console.ExitUsage || !strings.Contains(errOut, want) || !strings.Contains(errOut, "nothing was sent") {
				t.Errorf("cover HTBX %s: exit %d, stderr %q; want 2 with %q, nothing sent", qty, code, errOut, want)
			}
			if w := b.writes(); len(w) != before {
				t.Errorf("cover HTBX %s sent %v", qty, w[before:])
			}
		}
		refused("100", "HTBX: the account has no short position to cover")
		if code, _, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.02", "--yes"); code != 0 {
			t.Fatalf("short: exit %d\n%s", code, errOut)
		}
		if got := b.openShares(t, "HTBX"); got != -100 {
			t.Fatalf("after the short: HTBX position %d, want -100", got)
		}
		refused("200", "200 HTBX is more than the 100 shares short")
		code, out, errOut := b.MustRunMain(t, nil, "cover", "HTBX", "100", "--limit-price", "13.00", "--yes", "-o", "json")
		if code != 0 {
			t.Fatalf("cover: exit %d\n%s\n%s", code, out, errOut)
		}
		rec := jsonLines(t, out)
		if len(rec) != 1 || rec[0]["side"] != "Buy" || rec[0]["openClose"] != "Close" || rec[0]["state"] != "filled" || rec[0]["executed"] != 100.0 {
			t.Errorf("cover outcome %v", rec)
		}
		posts := b.orderPosts(t)
		last := posts[len(posts)-1]
		for k, v := range map[string]any{"side": "Buy", "openClose": "Close", "orderType": "Limit", "timeInForce": "Day", "limitPrice": 13.0, "route": "SMART"} {
			if last[k] != v {
				t.Errorf("cover's order %s = %v, want %v", k, last[k], v)
			}
		}
		if got := b.openShares(t, "HTBX"); got != 0 {
			t.Errorf("after the cover: HTBX position %d, want flat", got)
		}
	})
}

// openShares is the broker's open position in symbol (negative when
// short), read with `locator positions -o json`.
func (b *cliBundle) openShares(t *testing.T, symbol string) int64 {
	t.Helper()
	code, out, errOut := b.MustRunMain(t, nil, "positions", "-o", "json")
	if code != console.ExitOK {
		t.Fatalf("positions: exit %d\n%s", code, errOut)
	}
	var n int64
	for _, p := range jsonLines(t, out) {
		if p["symbol"] == symbol {
			shares, _ := p["shares"].(float64)
			if side, _ := p["side"].(string); strings.EqualFold(side, "short") && shares > 0 {
				shares = -shares
			}
			n += int64(shares)
		}
	}
	return n
}

// Spec "Orders" rules 1-2 and "Route record": each order type
// and time in force the spec allows for a stock short places, and the
// broker receives what was asked (market orders, which only the regular
// session takes, are placed in engine's TestMarketOrderOnlyInSession on a
// clock that stands in it).
func TestOrderTypesPlace(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	if code, _, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "800", "--max-price", "0.02"); code != 0 {
		t.Fatalf("locate: exit %d\n%s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want map[string]any
	}{
		{[]string{"--limit-price", "13.00", "--tif", "day-plus"}, map[string]any{"orderType": "Limit", "timeInForce": "Day_Plus", "limitPrice": 13.0}},
		{[]string{"--limit-price", "13.00", "--tif", "gtc"}, map[string]any{"orderType": "Limit", "timeInForce": "GoodTillCancel"}},
		{[]string{"--limit-price", "13.00", "--tif", "gtc-plus"}, map[string]any{"orderType": "Limit", "timeInForce": "GTC_Plus"}},
		{[]string{"--type", "stop", "--stop-price", "11.50"}, map[string]any{"orderType": "Stop", "timeInForce": "Day", "stopPrice": 11.5, "limitPrice": nil}},
		{[]string{"--type", "stop-limit", "--stop-price", "11.00", "--limit-price", "10.90", "--tif", "gtc", "--max-distance", "15"}, map[string]any{"orderType": "StopLimit", "stopPrice": 11.0, "limitPrice": 10.9}},
		{[]string{"--limit-price", "12.00", "--tif", "ioc", "--route", "ARCA"}, map[string]any{"timeInForce": "IOC", "route": "ARCA"}},
		{[]string{"--limit-price", "12.00", "--tif", "fok", "--route", "ARCA"}, map[string]any{"timeInForce": "FOK", "route": "ARCA"}},
	} {
		args := append([]string{"short", "HTBX", "100", "--max-price", "0.02", "--ref-price", "12.50", "--yes"}, tc.args...)
		code, out, errOut := b.MustRunMain(t, nil, args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s\n%s", tc.args, code, out, errOut)
			continue
		}
		posts := b.orderPosts(t)
		last := posts[len(posts)-1]
		for k, v := range tc.want {
			if last[k] != v {
				t.Errorf("%v: order %s = %v, want %v", tc.args, k, last[k], v)
			}
		}
	}
}

// The fat-finger guard (spec "Orders", "Position
// records"): on a fresh day, with no position, fill or close of HTBX for
// a reference, `short HTBX 100 --limit-price 0.555` is refused and says
// how to go on (--ref-price or --force), exit 2, nothing sent (no quote,
// no order); with --ref-price 12.50 it is refused against that price.
// Once a short of HTBX filled at 12.10, the held position's price is the
// reference, shown with its source. A cover whose notional is over
// --max-notional is refused the same way, and --force sends the order.
// In process and from a follower: the owner applies the guard.
func TestFatFingerGuard(t *testing.T) {
	t.Parallel()
	bothWays(t, testSpeed, func(t *testing.T, b *cliBundle) {
		b.sim.SetPrice("HTBX", decimal.RequireFromString("12.10"))
		refused := func(args []string, want ...string) {
			t.Helper()
			before := len(b.writes())
			code, _, errOut := b.MustRunMain(t, nil, args...)
			if code != console.ExitUsage || !strings.Contains(errOut, "--force") || !strings.Contains(errOut, "nothing was sent") {
				t.Errorf("%v: exit %d, stderr %q; want 2, naming --force", args, code, errOut)
			}
			for _, w := range want {
				if !strings.Contains(errOut, w) {
					t.Errorf("%v: stderr %q; want it to say %q", args, errOut, w)
				}
			}
			if w := b.writes(); len(w) != before {
				t.Errorf("%v: writes sent: %v", args, w[before:])
			}
		}
		refused([]string{"short", "HTBX", "100", "--limit-price", "0.555", "--max-price", "0.05", "--yes"},
			"knows no price of HTBX", "--ref-price P")
		refused([]string{"short", "HTBX", "100", "--limit-price", "0.555", "--ref-price", "12.50", "--max-price", "0.05", "--yes"},
			"limit price: 0.555 is 95.6% from HTBX's reference price 12.50 (the reference price given), more than the 10% the fat-finger guard allows")
		if code, o, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.02", "--yes"); code != 0 || o.PriceAvg != "12.10" {
			t.Fatalf("first short: exit %d, %+v\n%s", code, o, errOut)
		}
		held := "HTBX's reference price 12.10 (its open position's price now)"
		refused([]string{"short", "HTBX", "100", "--limit-price", "0.555", "--ref-price", "0.56", "--max-price", "0.02", "--yes"},
			"limit price: 0.555 is 95.4% from "+held)
		refused([]string{"short", "HTBX", "100", "--type", "stop", "--stop-price", "10.00", "--max-distance", "15", "--max-price", "0.02", "--yes"},
			"stop price: 10.00 is 17.4% from "+held+", more than the 15%")
		refused([]string{"cover", "HTBX", "100", "--limit-price", "12.20", "--max-notional", "1000", "--yes"},
			"notional: 100 HTBX at 12.20 is 1220.00, over the 1000.00 the fat-finger guard allows ("+held+")")
		code, o, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "0.555", "--max-price", "0.02", "--yes", "--force")
		if code != 0 || o.State != "filled" {
			t.Errorf("short --force: exit %d, %+v\n%s", code, o, errOut)
		}
	})
}

// Spec R78 ("Order rejection codes": market orders only in the regular
// session) on the exchange's calendar: at 13:30 the day after
// Thanksgiving, after its 13:00 early close, `short` and `cover` of a
// market order are refused (exit 2, nothing sent) with that day's real
// hours, not 9:30 to 16:00, and the next open.
func TestMarketOrderRefusedAfterEarlyClose(t *testing.T) {
	t.Parallel()
	b := setupCLIAt(t, time.Date(2026, 11, 27, 13, 30, 0, 0, market.NewYork), testSpeed)
	const hours = "today's session ran 09:30 to 13:00 ET (an early close); the next opens Mon 2026-11-30 09:30 ET"
	for _, args := range [][]string{
		{"short", "HTBX", "100", "--type", "market", "--max-price", "0.02", "--ref-price", "12.50", "--yes"},
		{"cover", "HTBX", "100", "--type", "market", "--ref-price", "12.50", "--yes"},
	} {
		code, _, errOut := b.MustRunMain(t, nil, args...)
		if code != console.ExitUsage || !strings.Contains(errOut, hours) || !strings.Contains(errOut, "nothing was sent") || strings.Contains(errOut, "16:00") {
			t.Errorf("%v: exit %d, stderr %q; want 2 saying %q", args, code, errOut, hours)
		}
	}
	if w := b.writes(); len(w) != 0 {
		t.Errorf("sent %v", w)
	}
}
