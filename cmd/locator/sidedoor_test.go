package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// With `locator serve` owning the account,
// every read command (audit's order book and plan's account read too)
// reads through it (the account's Read): each succeeds,
// and every broker request the simulator logged while they ran carries
// the serve process's pid in its User-Agent, none a command's. The paths
// of the records the commands asked for are among them (only the
// commands ask for most), so the reads did reach the broker, through the
// owner.
func TestReadCommandsBesideServeSendNothingOfTheirOwn(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	serve := b.serve(t)
	past := b.clk.Now().AddDate(0, 0, -3).Format(time.DateOnly)
	from := len(b.requests(t))
	for _, args := range [][]string{
		{"accounts"},
		{"pnl"},
		{"pnl", "-o", "json"},
		{"positions"},
		{"positions", "--closed"},
		{"positions", "--historical", past},
		{"orders"},
		{"orders", "--history", past},
		{"routes"},
		{"inventory"},
		{"history"},
		{"audit"},
		{"plan", "--watchlist", writeFile(t, "watchlist.csv", "symbol,quantity\nHTBX,100\n")},
	} {
		if code, out := b.run(t, nil, args...); code != 0 {
			t.Errorf("%v beside serve: exit %d\n%s", args, code, out)
		}
	}
	owner := fmt.Sprintf("(pid %d)", serve.Process.Pid)
	paths := map[string]bool{}
	for _, r := range b.requests(t)[from:] {
		paths[r.Method+" "+r.Path] = true
		if !strings.Contains(r.UserAgent, owner) {
			t.Errorf("%s %s sent by %q, not the owner %s", r.Method, r.Path, r.UserAgent, owner)
		}
		if r.Method != http.MethodGet {
			t.Errorf("%s %s sent while only reads ran", r.Method, r.Path)
		}
	}
	for _, want := range []string{"routes", "positions", "pnl", "orders", "start-date"} {
		found := false
		for p := range paths {
			found = found || strings.Contains(strings.ToLower(p), want)
		}
		if !found {
			t.Errorf("no request for %s reached the broker; saw %v", want, paths)
		}
	}
}
