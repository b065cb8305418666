package brokersim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/market"
)

// Order statuses the simulator produces (spec: "Order statuses").
const (
	statusPendingNew = "PendingNew"
	statusAccepted   = "Accepted"
	statusPartial    = "PartiallyFilled"
	statusFilled     = "Filled"
	statusCanceled   = "Canceled"
	statusRejected   = "Rejected"
	statusExpired    = "Expired"
)

// Rejection texts (spec: "Order rejection codes"). Clients parse the code
// from the leading R<digits>; the reason after it is free text.
const (
	textR06  = "R06: Symbol is restricted at this price"
	textR24  = "R24: Stop price of zero is not allowed"
	textR54  = "R54: Unable to reach the destination route"
	textR78  = "R78: Market orders are not allowed at this time"
	textR95  = "R95: Cannot have opening buy and sell orders at the same time"
	textR114 = "R114: Invalid duplicate user order id"
	textR118 = "R118: Stop price is on the wrong side of the market"
	textR130 = "R130: Cancel request rejected: the order is already rejected"
	textR145 = "R145: Negative price not allowed"
	// brokerRejected prefixes the spec's no-code venue declines.
	brokerRejected = "Rejected: Broker Rejected: "
)

// orderBook holds orders, fills, lots and positions of every account. Its
// methods run under the simulator's lock.
type orderBook struct {
	orders []*order             // every placement, in arrival order
	byID   map[orderKey]*order  // lookups by clientOrderId (first use only)
	used   map[orderKey]bool    // clientOrderIds consumed this session (R114)
	fills  []*fill              // executions, seeded history first
	lots   []*lot               // open lots and lots closed in this session
	closed []closedSeed         // closed-position rows carried from the scenario
	books  map[string]*acctBook // per-account counters kept here, not on account

	tradeSeq int64  // last tradeId handed out
	lotSeq   uint64 // last positionId handed out
	genSeq   int64  // last generated clientOrderId
}

// orderKey scopes a clientOrderId to its account: the spec's session-scoped
// deduplication is per account.
type orderKey struct{ account, id string }

// acctBook holds the per-account values the order book maintains: counters
// the account struct does not carry, the equity mark (the spec says equity
// does not reprice on every tick, so it moves only on fills), and the
// session-open values the detail object reports for today-counters.
type acctBook struct {
	optContracts int64
	equity       decimal.Decimal

	sodShares       int64
	sodCommissions  decimal.Decimal
	sodOptContracts int64
	sodOptionCash   decimal.Decimal
}

// order is one placement and its lifecycle.
type order struct {
	orderRequest                // the placement as received, with its defaults
	acct                        *account
	id                          string // clientOrderId as returned (rewritten on R118 with a route)
	status                      string
	text                        *string
	start, updated              time.Time
	lastFill                    time.Time // its last execution (zero: none)
	registerAt                  time.Time // the single-order GET and cancel see it from here on
	executed, canceled, lastQty int64
	priceAvg, lastPrice         decimal.Decimal
	triggered                   bool // a stop that has been crossed
	hidden                      bool // R118 with a route: only the book shows it
}

// orderLeg is one leg of a multi-leg order; the spec leaves the leg
// structure out, so the simulator reads only symbol, side and a ratio.
type orderLeg struct {
	symbol, side string
	ratio        int64
}

func (o *order) leaves() int64 { return o.qty - o.executed - o.canceled }

// working reports whether the order can still fill or be cancelled.
func (o *order) working() bool {
	switch o.status {
	case statusPendingNew, statusAccepted, statusPartial:
		return true
	}
	return false
}

func (o *order) buy() bool { return o.side == "Buy" }

func (o *order) stopType() bool { return o.orderType == "Stop" || o.orderType == "StopLimit" }

func (o *order) limitType() bool { return o.orderType == "Limit" || o.orderType == "StopLimit" }

// reject ends the order as Rejected; text nil is the spec's null-text risk
// rejection.
func (o *order) reject(now time.Time, text *string) {
	o.status = statusRejected
	o.text = text
	o.canceled = o.qty - o.executed
	o.updated = now
}

func strp(s string) *string { return &s }

// fill is one execution (spec: "Fill row").
type fill struct {
	tradeID    int64
	account    string
	order      *order // nil on a seeded fill
	symbol     string
	side       string
	secType    string
	qty        int64
	price      decimal.Decimal
	commission decimal.Decimal
	at         time.Time
	seeded     bool // scenario history: date-only, no execTime
}

func (b *orderBook) book(id string) *acctBook {
	ab := b.books[id]
	if ab == nil {
		ab = &acctBook{}
		b.books[id] = ab
	}
	return ab
}

// newOrderBook seeds carried lots from sc.Positions, closed lifecycle rows
// from sc.ClosedPositions, and the fills those imply, so the archive and the
// paginated history have something before the session starts.
func newOrderBook(s *Sim, sc Scenario) orderBook {
	b := orderBook{
		byID:     map[orderKey]*order{},
		used:     map[orderKey]bool{},
		books:    map[string]*acctBook{},
		tradeSeq: 700000000,
		lotSeq:   9007199254750000, // above 2^53: clients must keep ids as strings
	}
	var seeds []*fill
	seedFill := func(account, symbol, side, date string, qty int64, price decimal.Decimal) {
		d, err := time.Parse(time.DateOnly, date)
		if err != nil || qty <= 0 {
			return
		}
		seeds = append(seeds, &fill{
			account: account, symbol: symbol, side: side, secType: "Stock", qty: qty, price: price,
			commission: sc.CommissionPerShare.Mul(decimal.NewFromInt(qty)).Round(2),
			at:         d.Add(15 * time.Hour), seeded: true, // 10:00 ET
		})
	}
	for _, p := range sc.Positions {
		if s.accounts[p.Account] == nil || p.Shares == 0 {
			continue
		}
		opened, err := time.Parse(time.DateOnly, p.OpenedDate)
		if err != nil {
			opened = tradeDate(s.now).AddDate(0, 0, -1)
		}
		sign, shares, side := int64(1), p.Shares, "Buy"
		if shares < 0 {
			sign, shares, side = -1, -shares, "Sell"
		}
		l := b.newLot(p.Account, strings.ToUpper(p.Symbol), "Stock", sign, opened.Add(15*time.Hour))
		l.carried = true
		l.priorClose = p.PriorClose.Decimal
		if !l.priorClose.IsPositive() {
			l.priorClose = p.PriceAvg.Decimal
		}
		l.addShares(shares, p.PriceAvg.Decimal, l.opened)
		seedFill(p.Account, l.symbol, side, p.OpenedDate, shares, p.PriceAvg.Decimal)
	}
	for _, c := range sc.ClosedPositions {
		if s.accounts[c.Account] == nil {
			continue
		}
		b.closed = append(b.closed, closedSeed{c})
		in, out := "Buy", "Sell"
		long := c.PriceClose.Sub(c.PriceOpen.Decimal).Mul(decimal.NewFromInt(c.SharesOut))
		if !long.Equal(c.Realized.Decimal) && long.Neg().Equal(c.Realized.Decimal) {
			in, out = "Sell", "Buy" // a closed short
		}
		seedFill(c.Account, strings.ToUpper(c.Symbol), in, c.OpenedDate, c.SharesIn, c.PriceOpen.Decimal)
		seedFill(c.Account, strings.ToUpper(c.Symbol), out, c.ClosedDate, c.SharesOut, c.PriceClose.Decimal)
	}
	slices.SortStableFunc(seeds, func(x, y *fill) int { return x.at.Compare(y.at) })
	for _, f := range seeds {
		b.tradeSeq++
		f.tradeID = b.tradeSeq
		b.fills = append(b.fills, f)
	}
	for _, a := range s.accounts {
		ab := b.book(a.id)
		m := b.metrics(s, a)
		ab.equity = m.value
		ab.sodShares = a.sharesTraded
		ab.sodCommissions = a.commissions
		ab.sodOptionCash = m.optionCash
	}
	return b
}

// tryWorking re-evaluates the working orders on symbol (every symbol when
// empty) against the last price: after a price change (stops trigger,
// limits become marketable) and at a session's opening (scheduleOpening).
// P&L is computed on demand from the prices, so it reprices by itself.
func (b *orderBook) tryWorking(s *Sim, symbol string) {
	for _, o := range slices.Clone(b.orders) {
		if (symbol == "" || o.symbol == symbol) && o.working() && o.status != statusPendingNew {
			b.evaluate(s, o)
		}
	}
}

// handlePlaceOrder serves POST .../order (spec: "Orders", "Order rejection
// codes"): 400 lines for schema failures, 400 account JSON for an account
// the key does not own, else 200 with the order, rejected or PendingNew.
func (s *Sim) handlePlaceOrder(c *call) reply {
	a := s.ownedAccount(c.key, c.r.PathValue("accountId"))
	if a == nil {
		return accountMismatch()
	}
	req, lines := parseOrderRequest(c.body)
	if len(lines) > 0 {
		return validationLines(lines...)
	}
	o := s.ord.place(s, a, req, c.now)
	return jsonReply(http.StatusOK, o.toJSON())
}

// place runs the synchronous checks and, when they pass, schedules the
// asynchronous outcome Timing.OrderAsync later.
func (b *orderBook) place(s *Sim, a *account, req orderRequest, now time.Time) *order {
	async := time.Duration(s.sc.Timing.OrderAsync)
	o := &order{
		orderRequest: req, acct: a, id: req.clientOrderID,
		status: statusPendingNew, start: now, updated: now, registerAt: now.Add(async),
	}
	if o.id == "" {
		o.id = b.generateID(a.id)
	}
	if o.openClose == "" {
		o.openClose = b.inferOpenClose(a.id, o)
	}
	b.orders = append(b.orders, o)
	key := orderKey{a.id, o.id}
	if b.used[key] {
		// The original keeps the id for lookups, and the stream's updates
		// keyed on it stay the original's: nothing is pushed.
		o.reject(now, strp(textR114))
		return o
	}
	b.used[key] = true
	b.byID[key] = o

	price, hasPrice := s.prices[o.symbol]
	switch {
	case !a.active():
		o.reject(now, nil) // spec: risk check with no surfaced code
	case (o.hasLimit && o.limit.IsNegative()) || (o.hasStop && o.stop.IsNegative()):
		o.reject(now, strp(textR145))
	case o.secType != "Stock" && a.optLevel == 0:
		o.reject(now, nil)
	case o.orderType == "Market" && !market.Regular(now):
		o.reject(now, strp(textR78))
	case o.route != "" && o.stopType() && o.stop.IsPositive() && hasPrice && stopWrongSide(o, price):
		// Spec: R118 with an explicit route is synchronous, text null, the id
		// rewritten, and the single-order GET answers 404 for both ids.
		o.reject(now, nil)
		o.id = fmt.Sprintf("%sINVALID%d", o.id, now.UnixMilli())
		o.hidden = true
		delete(b.byID, key)
	case o.openClose == "Open" && b.overBuyingPower(s, a, o, price, hasPrice):
		o.reject(now, nil)
	default:
		if a.paper && o.route == "" {
			o.route = "PAPER"
			if o.secType == "Mleg" {
				o.route = "PAPERM"
			}
		}
		s.after(async, func() { s.ord.decide(s, o) })
	}
	if !o.hidden {
		s.pushOrder(o) // spec: R118 with a route "may push no useful update"
	}
	return o
}

// inferOpenClose reads a placement without openClose as the trader's
// intent given the position: a Buy closes a short when there is one, a Sell
// closes a long when there is one; otherwise the order opens (a Sell with
// no long position opens a short, which then needs located shares).
func (b *orderBook) inferOpenClose(account string, o *order) string {
	long, short := b.held(account, o.symbol)
	if (o.buy() && short > 0) || (!o.buy() && long > 0) {
		return "Close"
	}
	return "Open"
}

// generateID makes a clientOrderId for a placement that omitted one.
func (b *orderBook) generateID(account string) string {
	for {
		b.genSeq++
		id := fmt.Sprintf("SIM%012d", b.genSeq)
		if !b.used[orderKey{account, id}] {
			return id
		}
	}
}

// stopWrongSide: a buy stop below the last price, or a sell stop above it.
func stopWrongSide(o *order, price decimal.Decimal) bool {
	if o.buy() {
		return o.stop.LessThan(price)
	}
	return o.stop.GreaterThan(price)
}

// overBuyingPower is the risk check on opening orders: the notional at the
// limit (or last) price may not exceed the account's buying power.
func (b *orderBook) overBuyingPower(s *Sim, a *account, o *order, price decimal.Decimal, hasPrice bool) bool {
	px := price
	if o.hasLimit && o.limitType() {
		px = o.limit
	} else if !hasPrice {
		return false
	}
	notional := px.Mul(decimal.NewFromInt(o.qty)).Mul(multiplier(o.secType))
	return notional.GreaterThan(b.metrics(s, a).bp(a))
}

// decide is the asynchronous outcome at startTime+OrderAsync: a rejection
// with its text, or acceptance and a first attempt to fill.
func (b *orderBook) decide(s *Sim, o *order) {
	if o.status != statusPendingNew {
		return // cancelled meanwhile
	}
	if text := b.asyncCheck(s, o); text != "" {
		o.reject(s.now, strp(text))
		s.pushOrder(o)
		return
	}
	o.status = statusAccepted
	o.updated = s.now
	s.pushOrder(o)
	if at, ok := o.expiry(); ok {
		s.after(at.Sub(s.now), func() { s.ord.expire(s, o) })
	}
	b.evaluate(s, o)
	if (o.tif == "IOC" || o.tif == "FOK") && o.working() {
		o.cancel(s.now) // immediate or cancel: what did not fill at once is cancelled
		s.pushOrder(o)
	}
}

// asyncCheck returns the text of the first asynchronous rejection that
// applies, or "".
func (b *orderBook) asyncCheck(s *Sim, o *order) string {
	a := o.acct
	if o.stopType() && !(o.hasStop && o.stop.IsPositive()) {
		return textR24
	}
	price, hasPrice := s.prices[o.symbol]
	if o.stopType() && hasPrice && stopWrongSide(o, price) {
		return textR118 // the quote check runs before routing (spec: R118 async without a route)
	}
	rt, known := routeCatalog[o.route]
	if o.route == "" || !a.hasRoute(o.route) || !known || !slices.Contains(rt.SecurityTypes, routeSecType(o.secType)) {
		return textR54
	}
	if !slices.Contains(rt.OrderTypes, o.orderType) {
		return brokerRejected + o.orderType + " orders are not available on route " + o.route
	}
	switch {
	case (o.tif == "Day_Plus" || o.tif == "GTC_Plus") && o.orderType != "Limit":
		return brokerRejected + "extended-hours orders must be Limit orders"
	case o.tif == "AtTheOpening" && a.paper:
		// Spec: paper accepts AtTheOpening more broadly than live.
	case o.tif == "AtTheOpening" && !o.start.Before(market.SessionDay(o.start).Open):
		return brokerRejected + "AtTheOpening orders are accepted only before the open"
	case !slices.Contains(rt.TimesInForce, o.tif):
		return brokerRejected + "time in force " + o.tif + " is not available on route " + o.route
	}
	if o.openClose == "Open" {
		// Only an earlier order can make this one the second of a pair: the
		// one that arrives last is refused, whichever check runs first.
		for _, w := range b.orders {
			if w == o {
				break
			}
			if w.acct == a && w.symbol == o.symbol && w.openClose == "Open" && w.side != o.side && w.working() {
				return textR95
			}
		}
	}
	if s.restricted[o.symbol] && o.hasLimit && o.limitType() && hasPrice {
		band := price.Mul(s.sc.RestrictedBand.Decimal)
		if o.limit.Sub(price).Abs().GreaterThan(band) {
			return textR06
		}
	}
	return ""
}

// expire ends a day order still working at its session's close.
func (b *orderBook) expire(s *Sim, o *order) {
	if !o.working() || o.status == statusPendingNew {
		return
	}
	o.status = statusExpired
	o.canceled += o.leaves()
	o.updated = s.now
	s.pushOrder(o)
}

// evaluate fills a working order when its session is open (market.go) and
// it is marketable at the last price: stops trigger when the price crosses
// them, limits fill at the last price when it is at or better than the
// limit, market orders fill at the last price. Outside its session nothing
// triggers or fills: the next opening tries it again. Symbols without a
// price never fill; multi-leg orders only work.
func (b *orderBook) evaluate(s *Sim, o *order) {
	if !o.working() || o.status == statusPendingNew || o.secType == "Mleg" || !o.tradesNow(s.now) {
		return
	}
	p, ok := s.prices[o.symbol]
	if !ok {
		return
	}
	if o.stopType() && !o.triggered {
		if (o.buy() && p.LessThan(o.stop)) || (!o.buy() && p.GreaterThan(o.stop)) {
			return
		}
		o.triggered = true
	}
	if o.limitType() && ((o.buy() && o.limit.LessThan(p)) || (!o.buy() && o.limit.GreaterThan(p))) {
		return
	}
	b.fill(s, o, o.leaves(), p)
}

// locateNeeded says whether a short on symbol ties located shares: live
// equity accounts on symbols off the easy-to-borrow list (paper's
// easy-to-borrow check is always true).
func locateNeeded(s *Sim, o *order) bool {
	return !o.acct.paper && o.secType == "Stock" && !s.etb[o.symbol]
}

// preFill returns the venue decline that stops a fill, or "". It reserves
// located shares for a short last, as that has effects.
func (b *orderBook) preFill(s *Sim, o *order, q int64) string {
	long, short := b.held(o.acct.id, o.symbol)
	switch {
	case o.openClose == "Open" && o.buy() && short > 0:
		return brokerRejected + "account is short " + o.symbol + "; buy to close first"
	case o.openClose == "Open" && !o.buy() && long > 0:
		return brokerRejected + "account is long " + o.symbol + "; sell to close first"
	case o.openClose == "Close" && !o.buy() && long < q:
		return brokerRejected + "sell quantity exceeds the long position"
	case o.openClose == "Close" && o.buy() && short < q:
		return brokerRejected + "buy quantity exceeds the short position"
	case o.openClose == "Open" && !o.buy() && locateNeeded(s, o):
		if !s.loc.reserveForShort(s, o.acct.id, o.symbol, q) {
			return brokerRejected + "no locate available"
		}
	}
	return ""
}

// held sums the open shares of the account's long and short lots on symbol.
func (b *orderBook) held(account, symbol string) (long, short int64) {
	for _, l := range b.lots {
		if l.account == account && l.symbol == symbol && l.shares > 0 {
			if l.sign > 0 {
				long += l.shares
			} else {
				short += l.shares
			}
		}
	}
	return long, short
}

// fill executes q shares of o at px: a fill row, cash, counters, lots and
// realized P&L.
func (b *orderBook) fill(s *Sim, o *order, q int64, px decimal.Decimal) {
	if text := b.preFill(s, o, q); text != "" {
		o.reject(s.now, strp(text))
		s.pushOrder(o)
		return
	}
	a := o.acct
	dq := decimal.NewFromInt(q)
	notional := px.Mul(dq).Mul(multiplier(o.secType))
	comm := s.sc.CommissionPerShare.Mul(dq).Round(2) // commissions are charged in cents
	b.tradeSeq++
	b.fills = append(b.fills, &fill{
		tradeID: b.tradeSeq, account: a.id, order: o, symbol: o.symbol, side: o.side, secType: o.secType,
		qty: q, price: px, commission: comm, at: s.now,
	})
	if o.buy() {
		a.cash = a.cash.Sub(notional).Sub(comm)
	} else {
		a.cash = a.cash.Add(notional).Sub(comm)
	}
	a.commissions = a.commissions.Add(comm)
	ab := b.book(a.id)
	if o.secType == "Stock" {
		a.sharesTraded += q
	} else {
		ab.optContracts += q
	}

	prev := o.priceAvg.Mul(decimal.NewFromInt(o.executed))
	o.executed += q
	o.priceAvg = prev.Add(px.Mul(dq)).DivRound(decimal.NewFromInt(o.executed), 4)
	o.lastQty, o.lastPrice = q, px
	o.lastFill = s.now
	o.status = statusPartial
	if o.leaves() == 0 {
		o.status = statusFilled
	}
	o.updated = s.now

	if o.openClose == "Open" {
		sign := int64(1)
		if !o.buy() {
			sign = -1
		}
		b.openLot(a.id, o.symbol, o.secType, sign, s.now).addShares(q, px, s.now)
	} else {
		sign := int64(1) // selling closes longs
		if o.buy() {
			sign = -1
		}
		b.closeLots(a.id, o.symbol, sign, q, px, s.now)
		if o.buy() && locateNeeded(s, o) {
			s.loc.releaseShort(s, a.id, o.symbol, q)
		}
	}
	ab.equity = b.metrics(s, a).value
	s.pushOrder(o)
	s.pushPositions(a.id, o.symbol)
}
