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

// The regular session is the calendar's, early closes and holidays
// included, and the extended one runs 4 AM to the 8 PM rollover on a
// trading day (spec "Cross-cutting conventions": session hours are
// Eastern; "Orders" rule 2: extended hours are Day_Plus and GTC_Plus).
func TestSessions(t *testing.T) {
	ny := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, NewYork) }
	for _, c := range []struct {
		at                time.Time
		regular, extended bool
	}{
		{ny(25, 3, 59), false, false},  // Wednesday before the pre-market
		{ny(25, 4, 0), false, true},    // the pre-market opens
		{ny(25, 9, 29), false, true},   // a minute before the open
		{ny(25, 9, 30), true, true},    // the open
		{ny(25, 15, 59), true, true},   // a minute before the close
		{ny(25, 16, 1), false, true},   // after the close: after-hours
		{ny(25, 19, 59), false, true},  // the last minute of after-hours
		{ny(25, 20, 0), false, false},  // the rollover
		{ny(26, 11, 0), false, false},  // Thanksgiving
		{ny(27, 12, 59), true, true},   // the early close's last minute
		{ny(27, 13, 0), false, true},   // the early close
		{ny(27, 13, 30), false, true},  // after the early close
		{ny(27, 17, 0), false, true},   // its after-hours
		{ny(28, 11, 0), false, false},  // Saturday
		{ny(30, 10, 0), true, true},    // Monday
		{ny(30, 20, 30), false, false}, // Monday night
	} {
		day := On(c.at)
		if got := Regular(c.at); got != c.regular || day.InRegular(c.at) != c.regular {
			t.Errorf("Regular(%s) = %t, want %t", c.at, got, c.regular)
		}
		if got := day.InExtended(c.at); got != c.extended {
			t.Errorf("InExtended(%s) = %t, want %t", c.at, got, c.extended)
		}
	}
	if open, end := On(ny(26, 12, 0)).Extended(); !open.IsZero() || !end.IsZero() {
		t.Errorf("Thanksgiving's extended session %s-%s, want none", open, end)
	}
}

// SessionDay is the broker's trading day of t: the date's own until its
// 8 PM rollover, then the next trading day's, across Thanksgiving and a
// weekend.
func TestSessionDay(t *testing.T) {
	ny := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, NewYork) }
	for _, c := range []struct {
		at   time.Time
		want int
	}{
		{ny(25, 10, 0), 25},
		{ny(25, 17, 0), 25},  // after the close, before the rollover: still Wednesday's
		{ny(25, 20, 0), 27},  // the rollover: Friday's, Thanksgiving skipped
		{ny(26, 11, 0), 27},  // Thanksgiving belongs to Friday
		{ny(27, 13, 30), 27}, // after the early close: still Friday's
		{ny(27, 20, 0), 30},  // Friday's rollover: Monday's
		{ny(28, 12, 0), 30},
	} {
		if got := SessionDay(c.at).Date; !got.Equal(ny(c.want, 0, 0)) {
			t.Errorf("SessionDay(%s) = %s, want 2026-11-%d", c.at, got.Format(time.DateOnly), c.want)
		}
	}
}
