package brokersim

import (
	"time"

	"github.com/shopspring/decimal"
)

// The simulator serves consecutive trading days in one run: at each
// midnight in New York (the zone of the spec's session hours and of every
// trade date it stamps) the day rolls over, in time order with the other
// timed events, so a fake clock jumping days runs every rollover on the way.
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

// nextRollover is the first New York midnight after t.
func nextRollover(t time.Time) time.Time {
	et := t.In(eastern)
	return time.Date(et.Year(), et.Month(), et.Day()+1, 0, 0, 0, 0, eastern)
}

// scheduleRollover queues the next rollover, which queues the one after.
func (s *Sim) scheduleRollover() {
	s.after(nextRollover(s.now).Sub(s.now), func() {
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
// that day, or still working from an earlier session.
func (o *order) inSession(now time.Time) bool {
	return o.working() || tradeDate(o.start).Equal(tradeDate(now))
}
