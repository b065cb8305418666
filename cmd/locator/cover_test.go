package main

import (
	"strings"
	"testing"

	"github.com/locatorhq/locator/account"
)

// Issue 30, spec "Orders" rule 3 (intent is side plus openClose): `cover`
// buys to close (Buy/Close) a short made by `short`, and the broker's open
// positions are flat after it. Run in process and from a follower of a
// serve that owns the account: the same account API does it.
func TestCoverClosesTheShort(t *testing.T) {
	t.Parallel()
	for _, follower := range []bool{false, true} {
		name := "in process"
		if follower {
			name = "follower"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			if follower {
				owner := b.startMain(t, "serve")
				waitFor(t, "the owner", func() bool { return strings.Contains(owner.stderr.String(), "serving LV100001") })
			}
			if code, _, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "12.00", "--max-price", "0.02", "--yes"); code != 0 {
				t.Fatalf("short: exit %d\n%s", code, errOut)
			}
			if got := b.openShares(t, "HTBX"); got != -100 {
				t.Fatalf("after the short: HTBX position %d, want -100", got)
			}
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
}

// openShares is the broker's open position in symbol (negative when
// short), read with `locator positions -o json`.
func (b *cliBundle) openShares(t *testing.T, symbol string) int64 {
	t.Helper()
	code, out, errOut := b.MustRunMain(t, nil, "positions", "-o", "json")
	if code != account.ExitOK {
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
