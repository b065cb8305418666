package brokersim

import (
	"time"

	"github.com/locatorhq/locator/market"

	"github.com/shopspring/decimal"
)

// The simulator serves consecutive trading days in one run: at 8 PM in New
// York (the zone of the spec's session hours and of every trade date it
// stamps), when the extended session ends, the day rolls over to the next
// trading day, in time order with the other timed events, so a fake clock
// jumping days runs every rollover on the way. The spec names no hour:
// 8 PM is the harsher plausible one: a day's locates and history are gone
// four hours before midnight, and a locate made after 8 PM, or on a
// weekend or a holiday, belongs to the next trading day (sessionDay). The
// dates the broker stamps (ledger entryDate, trade dates) stay calendar
// dates (tradeDate), as the spec's "Cash ledger" describes entryDate.
//
// What rolls over, and the spec's words behind it:
//   - locate history serves the trading day's rows ("Short locates":
//     history "for the trading day"); handleHistory filters by trade date;
//   - located inventory is good for the day it was bought: Locate and
//     PreBorrow are "reusable in a day", SingleUse not at all ("Locate
//     types"), so the rows, and the shares tied to open shorts, end with
//     the day;
//   - the order book is "every order of today's session in any state, plus
//     still-working multi-day orders from earlier sessions", and a single
//     order is found "today's orders only" ("Orders"); a clientOrderId is a
//     session-scoped key ("Cross-cutting conventions"), free again;
//   - the today-counters (totalLocateCosts, realized, sharesTraded,
//     totalCommissions, optContractsTraded) start again, the session-open
//     values are the new day's ("Account"), and sodEquity is the equity at
//     the rollover;
//   - positions carry: an open lot becomes an overnight lot whose day P&L
//     is measured from the last price ("Profit and loss response" rules 4
//     and 6); a lot closed earlier leaves pnl[] ("for the rest of the
//     trading day", rule 3) and stays in the closed positions;
//   - the cash ledger keeps every row: new rows carry the new entryDate.

// sessionDay is the trading day t belongs to, as its New York midnight:
// the trading day of t's date until its 8 PM rollover, the next trading
// day from then on and over a weekend or a holiday (market.SessionDay,
// the one rule).
func sessionDay(t time.Time) time.Time { return market.SessionDay(t).Date }

// scheduleRollover queues the next rollover, which queues the one after.
func (s *Sim) scheduleRollover() {
	s.after(market.SessionEnd(s.now).Sub(s.now), func() {
		s.rollover()
		s.scheduleRollover()
	})
}

// rollover starts a new trading day at s.now (see the comment above).
func (s *Sim) rollover() {
	s.loc.inv = nil
	s.ord.used = map[orderKey]bool{}
	for _, l := range s.ord.lots {
		l.dayRealized = decimal.Zero
		if l.open() {
			l.priorClose = s.mark(l)
			l.carried = true
		}
	}
	for _, a := range s.accounts {
		a.locateCosts, a.commissions = decimal.Zero, decimal.Zero
		a.sharesTraded = 0
		ab := s.ord.book(a.id)
		m := s.ord.metrics(s, a)
		ab.optContracts = 0
		ab.sodShares, ab.sodOptContracts = 0, 0
		ab.sodCommissions = decimal.Zero
		ab.sodOptionCash = m.optionCash
		a.sodEquity = m.value
	}
}

// inSession reports whether o belongs to the trading day of now: placed
// in that trading day (sessionDay: one placed after the 8 PM rollover is
// the next trading day's, not its calendar date's), still working from an
// earlier session, or a multi-day order that executed in this one (an
// order of today's session too: its fill is today's, and the book is
// where a client learns of it).
func (o *order) inSession(now time.Time) bool {
	today := sessionDay(now)
	return o.working() || sessionDay(o.start).Equal(today) || (!o.lastFill.IsZero() && sessionDay(o.lastFill).Equal(today))
}
