package service

import (
	"testing"
	"time"

	"github.com/locatorhq/locator"
)

// Two daemons started together, listing a desk's key pairs in
// different orders, each own the pairs it lists first, while opening many
// key pairs at once. A fleet leaves an account to the record of another
// daemon that lists its key pair earlier, unless that record is its own,
// says the daemon cannot serve it, gives no rank (a daemon of an older
// version), or has stood by longer than yieldAtMost without owning it;
// the records of another account (the key pair's other) are not its.
func TestListedFirst(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)
	other := func(rank int, stood time.Duration, notServed string) locator.Standby {
		return locator.Standby{Account: "LV100001", Process: "daemon:other", PID: 7, Host: "h", Rank: rank,
			Since: since, Expires: since.Add(stood + StandbyTTL), NotServed: notServed}
	}
	mine := locator.Standby{Account: "LV100001", Process: "daemon:me", Rank: 0, Since: since, Expires: since.Add(StandbyTTL)}
	for _, tc := range []struct {
		name string
		sbs  []locator.Standby
		rank int
		want bool
	}{
		{"listed first elsewhere, just announced", []locator.Standby{other(0, 0, "")}, 2, true},
		{"listed first elsewhere, standing by a while", []locator.Standby{other(1, yieldAtMost-time.Second, "")}, 2, true},
		{"listed at the same place", []locator.Standby{other(2, 0, "")}, 2, false},
		{"listed later elsewhere", []locator.Standby{other(3, 0, "")}, 2, false},
		{"listed first here", []locator.Standby{other(0, 0, "")}, 0, false},
		{"this daemon's own record", []locator.Standby{mine}, 2, false},
		{"the other cannot serve it", []locator.Standby{other(0, 0, "not found for these keys")}, 2, false},
		{"the other gave no rank", []locator.Standby{other(-1, 0, "")}, 2, false},
		{"the other stood by too long without owning it", []locator.Standby{other(0, yieldAtMost, "")}, 2, false},
		{"one of several", []locator.Standby{mine, other(5, 0, ""), other(1, 0, "")}, 2, true},
		{"another account's", []locator.Standby{{Account: "LV100002", Process: "daemon:other", Rank: 0, Since: since, Expires: since.Add(StandbyTTL)}}, 2, false},
	} {
		got := listedFirst(tc.sbs, "LV100001", "daemon:me", tc.rank)
		if (got != nil) != tc.want || got != nil && (got.Process != "daemon:other" || got.Rank >= tc.rank) {
			t.Errorf("%s: %+v, want yielded %t", tc.name, got, tc.want)
		}
	}
}
