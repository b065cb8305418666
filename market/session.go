package market

import "time"

// RolloverHour is the New York hour the broker's trading day ends at:
// 8 PM, the end of the extended session. The spec names no hour; the
// simulator rolls over then (brokersim/rollover.go), the harsher plausible
// choice, and locator counts "today" the same way.
const RolloverHour = 20

// ExtendedOpenHour is the New York hour the extended session opens at on a
// trading day: 4 AM, the pre-market brokers of this kind publish (the spec
// names none). The extended session runs from then through the regular
// session to the rollover, also on an early-close day (the simulator keeps
// one end of the day, its rollover); it is when an extended-hours order
// (Day_Plus, GTC_Plus) may trade.
const ExtendedOpenHour = 4

// InRegular reports whether t falls in the day's regular session, from
// its open to its close (13:00 on an early close); never on a day the
// exchange is closed.
func (d Day) InRegular(t time.Time) bool {
	return d.Trading() && !t.Before(d.Open) && t.Before(d.Close)
}

// Extended returns the bounds of the day's extended session, 4 AM to the
// 8 PM rollover; both are zero when the exchange is closed all day.
func (d Day) Extended() (open, end time.Time) {
	if !d.Trading() {
		return time.Time{}, time.Time{}
	}
	y, m, dd := d.Date.Date()
	return time.Date(y, m, dd, ExtendedOpenHour, 0, 0, 0, NewYork), rolloverOf(d.Date)
}

// InExtended reports whether t falls in the day's extended session (the
// regular session lies within it); never on a day the exchange is closed.
func (d Day) InExtended(t time.Time) bool {
	open, end := d.Extended()
	return d.Trading() && !t.Before(open) && t.Before(end)
}

// Regular reports whether t falls in the regular session of its New York
// date: the one rule for "the market is open" (a market order is taken
// only then, spec R78).
func Regular(t time.Time) bool { return On(t).InRegular(t) }

// SessionDay is the broker's trading day t belongs to: the trading day of
// t's date until its 8 PM rollover; from then on, and over a weekend or a
// holiday, the next trading day. A day order works in the sessions of
// the day it was placed in, and the simulator's history and inventory
// are that day's.
func SessionDay(t time.Time) Day {
	day := On(t)
	if !day.Trading() || !t.Before(rolloverOf(day.Date)) {
		day = Next(t)
	}
	return day
}

// SessionStart is when the broker's trading day t belongs to began: the
// 8 PM rollover that ended the trading day before it.
func SessionStart(t time.Time) time.Time {
	prev := SessionDay(t).Date
	for {
		prev = prev.AddDate(0, 0, -1)
		if On(prev).Trading() {
			return rolloverOf(prev)
		}
	}
}

// SessionEnd is when the broker's trading day t belongs to ends: its 8 PM
// rollover, after which the broker's locate history no longer serves
// that day's rows.
func SessionEnd(t time.Time) time.Time { return rolloverOf(SessionDay(t).Date) }

// rolloverOf is the rollover of the New York date of midnight.
func rolloverOf(midnight time.Time) time.Time {
	y, m, d := midnight.In(NewYork).Date()
	return time.Date(y, m, d, RolloverHour, 0, 0, 0, NewYork)
}
