package market

import "time"

// RolloverHour is the New York hour the broker's trading day ends at:
// 8 PM, the end of the extended session. The spec names no hour; the
// simulator rolls over then (brokersim/rollover.go), the harsher plausible
// choice, and locator counts "today" the same way.
const RolloverHour = 20

// SessionStart is when the broker's trading day t belongs to began: the
// 8 PM rollover that ended the trading day before it. Until a trading
// day's 8 PM, t belongs to that day; from then on, and over a weekend or
// a holiday, to the next trading day.
func SessionStart(t time.Time) time.Time {
	day := On(t)
	if !day.Trading() || !t.Before(rolloverOf(day.Date)) {
		day = Next(t)
	}
	prev := day.Date
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
func SessionEnd(t time.Time) time.Time {
	day := On(t)
	if !day.Trading() || !t.Before(rolloverOf(day.Date)) {
		day = Next(t)
	}
	return rolloverOf(day.Date)
}

// rolloverOf is the rollover of the New York date of midnight.
func rolloverOf(midnight time.Time) time.Time {
	y, m, d := midnight.In(NewYork).Date()
	return time.Date(y, m, d, RolloverHour, 0, 0, 0, NewYork)
}
