package brokersim

import (
	"time"

	"github.com/locatorhq/locator/market"
)

// eastern is the zone of the spec's session hours, the market package's
// (a leaf, which the simulator may import).
var eastern = market.NewYork

// The simulator's sessions are the exchange's calendar (package market),
// one rule for every order: the spec gives the regular session as 9:30 AM
// to 4:00 PM Eastern ("Cross-cutting conventions", R78) and names no
// holiday, and the simulator keeps the exchange's holidays and 13:00 early
// closes besides, the harsher reading (a broker routes to an exchange that
// is closed then). The extended session, where the extended-hours orders
// of "Orders" rule 2 (Day_Plus, GTC_Plus) trade, runs 4 AM to the 8 PM
// rollover on a trading day (the spec names no hours for it).
//
// A day order (Day, Day_Plus, AtTheOpening) belongs to the broker's
// trading day it was placed in (market.SessionDay, the day the rollover
// ends: one placed after 8 PM, on a weekend or on a holiday is the next
// trading day's) and trades only in that day's session: Day and
// AtTheOpening in its regular session, Day_Plus in its extended one. It
// expires at the end of that session; a Day order placed after its day's
// regular close has none left and works, never filling, until its day ends
// at the rollover, when it expires (the spec names no rejection for it).
// A multi-day order trades in the regular session of any trading day
// (GoodTillCancel, GoodTillCrossing), or in its extended session
// (GTC_Plus). IOC and FOK trade at once or not at all, in the regular
// session. A market order outside the regular session is rejected with
// R78.

// tradesNow reports whether o may execute at now by its session.
func (o *order) tradesNow(now time.Time) bool {
	switch o.tif {
	case "Day", "AtTheOpening":
		return market.SessionDay(o.start).InRegular(now)
	case "Day_Plus":
		return market.SessionDay(o.start).InExtended(now)
	case "GTC_Plus":
		return market.On(now).InExtended(now)
	}
	return market.Regular(now)
}

// expiry is when a day order ends unfilled: the end of the last session
// of its day it may trade in (see above); other orders persist.
func (o *order) expiry() (time.Time, bool) {
	day := market.SessionDay(o.start)
	_, extendedEnd := day.Extended()
	switch o.tif {
	case "Day", "AtTheOpening":
		if o.start.Before(day.Close) {
			return day.Close, true
		}
		return extendedEnd, true
	case "Day_Plus":
		return extendedEnd, true
	}
	return time.Time{}, false
}

// nextOpening is the first opening of a session after t: the extended
// session's at 4 AM or the regular one's, on a trading day.
func nextOpening(t time.Time) time.Time {
	for day := market.On(t); ; day = market.Next(day.Date) {
		open, _ := day.Extended()
		for _, at := range []time.Time{open, day.Open} {
			if at.After(t) {
				return at
			}
		}
	}
}

// scheduleOpening queues the next opening of a session, at which the
// working orders that could not trade before are tried against the last
// price; it queues the one after.
func (s *Sim) scheduleOpening() {
	s.after(nextOpening(s.now).Sub(s.now), func() {
		s.ord.tryWorking(s, "")
		s.scheduleOpening()
	})
}
