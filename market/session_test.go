package market

import (
	"testing"
	"time"
)

// The broker's trading day runs from one trading day's 8 PM
// rollover to the next's, so "today" for what locator counts per day
// (SingleUse fills, the budget) starts at the last rollover: an evening
// fill after 8 PM belongs to the next trading day, across a weekend and
// a holiday (Thanksgiving 2026-11-26).
func TestSessionStart(t *testing.T) {
	ny := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, NewYork) }
	for _, c := range []struct{ at, want time.Time }{
		{ny(25, 10, 0), ny(24, 20, 0)},  // Wednesday morning: since Tuesday 8 PM
		{ny(25, 19, 59), ny(24, 20, 0)}, // a minute before the rollover
		{ny(25, 20, 0), ny(25, 20, 0)},  // the rollover: Friday's day began
		{ny(26, 12, 0), ny(25, 20, 0)},  // Thanksgiving belongs to Friday
		{ny(27, 19, 0), ny(25, 20, 0)},  // Friday, before its rollover
		{ny(28, 12, 0), ny(27, 20, 0)},  // Saturday belongs to Monday
		{ny(30, 9, 30), ny(27, 20, 0)},  // Monday's open
	} {
		if got := SessionStart(c.at); !got.Equal(c.want) {
			t.Errorf("SessionStart(%s) = %s, want %s", c.at, got, c.want)
		}
	}
}

// SessionEnd is the rollover that ends the broker's trading day of t, the
// next SessionStart.
func TestSessionEnd(t *testing.T) {
	ny := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, NewYork) }
	for _, c := range []struct{ at, want time.Time }{
		{ny(25, 10, 0), ny(25, 20, 0)},  // Wednesday: its own 8 PM
		{ny(25, 19, 59), ny(25, 20, 0)}, // a minute before the rollover
		{ny(25, 20, 0), ny(27, 20, 0)},  // the rollover: Friday's day, Thanksgiving skipped
		{ny(26, 12, 0), ny(27, 20, 0)},  // Thanksgiving belongs to Friday
		{ny(28, 12, 0), ny(30, 20, 0)},  // Saturday belongs to Monday
	} {
		if got := SessionEnd(c.at); !got.Equal(c.want) {
			t.Errorf("SessionEnd(%s) = %s, want %s", c.at, got, c.want)
		}
		if got := SessionStart(SessionEnd(c.at)); !got.Equal(SessionEnd(c.at)) {
			t.Errorf("SessionStart(SessionEnd(%s)) = %s, want the same rollover", c.at, got)
		}
	}
}
