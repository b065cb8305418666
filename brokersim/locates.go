package brokersim

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// Locate status codes (spec: "Locate statuses").
const (
	locNew      = 48 // credit-back row just queued
	locFilled   = 50
	locCanceled = 52
	locPending  = 54
	locRejected = 56
	locOffered  = 65
	locExpired  = 67
	locQuoting  = 81
)

// Locate type codes (spec: "Locate types"); rows where no pool was chosen
// keep the zero value.
const (
	typeLocate    = 1
	typeIntraDay  = 2
	typePreBorrow = 3
	typeSingleUse = 4
)

// suSuffix marks the SingleUse shadow row of a Reg SHO quote.
const suSuffix = ".SU"

// quoteExpiredText is the text of an expired quote and of a Reg SHO sibling
// expired by the acceptance of the other side.
const quoteExpiredText = "Quote expired."

// sellTypes maps the /sell locateType strings (spec: "Locate types",
// "Versioning" rule 4) to the inventory codes they may credit back; Unknown
// names no pool and so never matches, IntraDay is the deprecated alias of
// Locate.
var sellTypes = map[string][]int{
	"Unknown":   nil,
	"Locate":    {typeLocate, typeIntraDay},
	"IntraDay":  {typeLocate, typeIntraDay},
	"PreBorrow": {typePreBorrow},
	"SingleUse": {typeSingleUse},
}

// knownSellType reports whether v is one of the five /sell locateType strings.
func knownSellType(v string) bool {
	_, ok := sellTypes[v]
	return ok
}

// maxLocateQty is the largest quote or sell quantity (spec: "Locate limits").
const maxLocateQty = 2147483647

// locateBook holds the locate pools, every history row (quotes and
// credit-backs, oldest first) and the accounts' located inventory.
type locateBook struct {
	pools map[locPoolKey]*locatePool
	rows  []*locateRow
	byID  map[locRowKey]*locateRow
	inv   []*invRow // in order of first appearance
	// lastQuote is when each (account, symbol) last had a quote processed,
	// for the spec's 30-second same-symbol spacing.
	lastQuote map[locSymKey]time.Time
}

type locPoolKey struct {
	symbol string
	typ    int
}

type locRowKey struct{ account, id string }

type locSymKey struct{ account, symbol string }

// locatePool is the broker-wide inventory of one symbol and locate type.
type locatePool struct {
	shares int64
	price  decimal.Decimal
}

// locateRow is one history row: a quote, one side of a Reg SHO pair, or a
// credit-back.
type locateRow struct {
	account, symbol, id string
	shares, filled      int64
	status, typ         int
	errCode             int
	price               decimal.Decimal
	// wire is locatePrice as the broker writes it, set when the price is
	// (Scenario.FloatPrices); empty: price's exact decimal text.
	wire             string
	text             *string // nil while Quoting
	created, updated time.Time
	offered          time.Time  // when it settled as Offered (zero: never)
	expires          time.Time  // end of the offer window once settled
	sibling          *locateRow // the other side of a Reg SHO pair
	credit           *invRow    // credit-back rows: the inventory row being credited
	sellQty          int64      // credit-back rows: shares credited
}

// invRow is one inventory row, keyed by (account, symbol, locateType).
// unavailable is not stored: it is locked (frozen by a pending credit-back)
// plus tied (held by open shorts), so the two causes can be undone apart.
type invRow struct {
	account, symbol string
	typ             int
	available       int64
	sold            int64
	toBeSold        int64
	locked          int64
	tied            int64
	// usedForShort marks a SingleUse row that opened a short: it can no
	// longer be credited back (spec: "Locate types").
	usedForShort bool
	// bought and cost are every accepted fill on the row, for the average
	// price a credit-back refunds.
	bought int64
	cost   decimal.Decimal
}

func (r *invRow) unavailable() int64 { return r.locked + r.tied }

// avgPrice is the average price per share paid for the row's fills.
func (r *invRow) avgPrice() decimal.Decimal {
	if r.bought == 0 {
		return decimal.Zero
	}
	return r.cost.Div(decimal.NewFromInt(r.bought))
}

func newLocateBook(sc Scenario) locateBook {
	b := locateBook{
		pools:     map[locPoolKey]*locatePool{},
		byID:      map[locRowKey]*locateRow{},
		lastQuote: map[locSymKey]time.Time{},
	}
	for _, p := range sc.Pools {
		k := locPoolKey{p.Symbol, p.LocateType}
		if old := b.pools[k]; old != nil {
			old.shares += p.Shares // a scenario listing a pool twice adds it up
			continue
		}
		b.pools[k] = &locatePool{shares: p.Shares, price: p.Price.Decimal}
	}
	return b
}

// locRejection is an asynchronous locate rejection: the row's locateError and text.
type locRejection struct {
	code int
	text string
	// refused marks a quote turned away for its timing (already pending,
	// too soon): it does not restart the same-symbol spacing clock.
	refused bool
}

// The asynchronous rejections of the spec's "Locate errors" table, plus the
// ones the spec leaves without a text (malformed quote, paper account, quote
// spacing), which use the locate service's generic code 1 and a bare-number
// text saying what happened.
var (
	rejMalformed    = locRejection{code: 1, text: "1 Invalid locate request: symbol is required."}
	rejPaper        = locRejection{code: 1, text: "1 Locates are not available on paper accounts."}
	rejEasyToBorrow = locRejection{code: 56, text: "R56: Symbol is easy to borrow, no need to locate"}
	rejRestricted   = locRejection{code: 4, text: "R06: Symbol restricted at this price"}
	rejLots         = locRejection{code: 67, text: "R67: You can only offer for credit in lots of 100"}
	rejPending      = locRejection{code: 14, text: "14 Locate is already pending.", refused: true}
	rejNoShares     = locRejection{code: 11, text: "11 No shares available. Please try again later."}
	rejInsufficient = locRejection{code: 16, text: "16 Insufficient shares."}
)

// rejSpacing is the rejection of a same-symbol quote sent sooner than the
// spacing after the previous one.
func rejSpacing(spacing time.Duration) locRejection {
	text := fmt.Sprintf("1 Quotes for the same symbol must be at least %g seconds apart.", spacing.Seconds())
	return locRejection{code: 1, text: text, refused: true}
}

// addRow appends a history row and indexes it by (account, quoteReqID).
func (b *locateBook) addRow(r *locateRow) {
	b.rows = append(b.rows, r)
	b.byID[locRowKey{r.account, r.id}] = r
}

// set moves a row to status with text at now.
func (r *locateRow) set(status int, text string, now time.Time) {
	r.status, r.text, r.updated = status, strp(text), now
	if status == locOffered {
		r.offered = now
	}
}

// wirePrice is the row's locatePrice as a JSON number.
func (r *locateRow) wirePrice() json.Number {
	if r.wire != "" {
		return json.Number(r.wire)
	}
	return json.Number(r.price.String())
}

// floatText is how a broker that keeps prices in binary floating point
// writes p (Scenario.FloatPrices): the shortest text of the float64
// nearest p, or, on about half the quotes (a seeded draw), of its
// neighbour one ulp up, as arithmetic on floats leaves it: 0.013 comes
// back as 0.013000000000000001. Empty when FloatPrices is off.
func (s *Sim) floatText(p decimal.Decimal) string {
	if !s.sc.FloatPrices {
		return ""
	}
	f, _ := p.Float64()
	if s.rng.IntN(2) == 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func (r *locateRow) open() bool {
	return r.status == locQuoting || r.status == locOffered || r.status == locPending
}

// quoteRejection decides, when the quote arrives, whether it will settle as
// Rejected; no-inventory is judged at settle time instead, from the pools.
func (b *locateBook) quoteRejection(s *Sim, a *account, symbol string, qty int64, now time.Time) *locRejection {
	switch {
	case symbol == "":
		return &rejMalformed
	case a.paper:
		return &rejPaper
	case s.etb[symbol]:
		return &rejEasyToBorrow
	case s.restricted[symbol]:
		return &rejRestricted
	case qty%100 != 0:
		return &rejLots
	}
	for _, r := range b.rows {
		if r.account == a.id && r.symbol == symbol && r.credit == nil && r.open() {
			return &rejPending
		}
	}
	spacing := time.Duration(s.sc.Timing.QuoteSpacing)
	if last, ok := b.lastQuote[locSymKey{a.id, symbol}]; ok && now.Sub(last) < spacing {
		r := rejSpacing(spacing)
		return &r
	}
	return nil
}

// quote records a quote as Quoting (two rows for a Reg SHO symbol) and
// schedules its settlement after the seeded 1.5 to 3 second delay. A
// quoteReqID already used on the account is ignored, so the first request's
// rows stay the only ones under that id.
func (b *locateBook) quote(s *Sim, a *account, symbol string, qty int64, id string, now time.Time) {
	if b.byID[locRowKey{a.id, id}] != nil || b.byID[locRowKey{a.id, id + suSuffix}] != nil {
		return
	}
	rej := b.quoteRejection(s, a, symbol, qty, now)
	if symbol != "" && (rej == nil || !rej.refused) {
		b.lastQuote[locSymKey{a.id, symbol}] = now
	}
	main := &locateRow{account: a.id, symbol: symbol, id: id, shares: qty, status: locQuoting, created: now, updated: now}
	b.addRow(main)
	if rej == nil && s.regSHO[symbol] {
		main.typ = typePreBorrow
		su := &locateRow{account: a.id, symbol: symbol, id: id + suSuffix, shares: qty, typ: typeSingleUse,
			status: locQuoting, created: now, updated: now, sibling: main}
		main.sibling = su
		b.addRow(su)
	}
	delay := s.uniform(time.Duration(s.sc.Timing.SettleMin), time.Duration(s.sc.Timing.SettleMax))
	s.after(delay, func() { b.settle(s, main, rej) })
}

// settle turns a Quoting row (or pair) into Rejected, Offered or Pending and
// starts the offer window. A quote cancelled meanwhile stays cancelled.
func (b *locateBook) settle(s *Sim, main *locateRow, rej *locRejection) {
	if main.status != locQuoting {
		return
	}
	now := s.now
	window := time.Duration(s.sc.Timing.OfferWindow)
	if rej != nil {
		main.errCode = rej.code
		main.set(locRejected, rej.text, now)
		return
	}
	if main.sibling != nil {
		for _, r := range []*locateRow{main, main.sibling} {
			if p := b.pools[locPoolKey{r.symbol, r.typ}]; p != nil && p.shares >= r.shares {
				r.price, r.wire = p.price, s.floatText(p.price)
				r.set(locOffered, "", now)
			} else {
				r.set(locPending, "", now)
			}
			r.expires = now.Add(window)
		}
		s.after(window, func() { expireLocates(s, main, main.sibling) })
		return
	}
	for _, t := range []int{typeLocate, typeIntraDay} {
		if p := b.pools[locPoolKey{main.symbol, t}]; p != nil && p.shares >= main.shares {
			main.typ, main.price, main.wire = t, p.price, s.floatText(p.price)
			main.set(locOffered, "", now)
			main.expires = now.Add(window)
			s.after(window, func() { expireLocates(s, main) })
			return
		}
	}
	main.errCode = rejNoShares.code
	main.set(locRejected, rejNoShares.text, now)
}

// expireLocates ends the offer window of rows still Offered or Pending.
func expireLocates(s *Sim, rows ...*locateRow) {
	for _, r := range rows {
		if r.status == locOffered || r.status == locPending {
			r.set(locExpired, quoteExpiredText, s.now)
		}
	}
}

// inventory finds the account's row for (symbol, typ), or nil.
func (b *locateBook) inventory(account, symbol string, typ int) *invRow {
	for _, r := range b.inv {
		if r.account == account && r.symbol == symbol && r.typ == typ {
			return r
		}
	}
	return nil
}

// dropIfEmpty removes an inventory row with nothing left in it, as the spec
// describes once a credit-back clears.
func (b *locateBook) dropIfEmpty(row *invRow) {
	if row.available != 0 || row.unavailable() != 0 || row.toBeSold != 0 {
		return
	}
	for i, r := range b.inv {
		if r == row {
			b.inv = append(b.inv[:i], b.inv[i+1:]...)
			return
		}
	}
}

// accept fills an Offered row still inside its window; anything else
// (unknown, expired, filled, pending, rejected) changes nothing.
func (b *locateBook) accept(s *Sim, a *account, id string, now time.Time) {
	r := b.byID[locRowKey{a.id, id}]
	if r == nil || r.credit != nil || r.status != locOffered || !now.Before(r.expires) {
		return
	}
	r.filled = r.shares
	r.set(locFilled, "", now)
	if sib := r.sibling; sib != nil && sib.open() {
		sib.set(locExpired, quoteExpiredText, now)
	}
	if p := b.pools[locPoolKey{r.symbol, r.typ}]; p != nil {
		p.shares = max(p.shares-r.shares, 0)
	}
	row := b.inventory(a.id, r.symbol, r.typ)
	if row == nil {
		row = &invRow{account: a.id, symbol: r.symbol, typ: r.typ}
		b.inv = append(b.inv, row)
	}
	row.available += r.shares
	row.bought += r.shares
	row.cost = row.cost.Add(r.price.Mul(decimal.NewFromInt(r.shares)))

	fee := r.price.Mul(decimal.NewFromInt(r.shares)).Mul(s.sc.FeeMultiplier.Decimal).Round(2)
	a.locateCosts = a.locateCosts.Add(fee)
	if !fee.IsPositive() {
		return
	}
	note := fmt.Sprintf("Locate fee %s %d shares @ %s (quoteReqID %s)", r.symbol, r.shares, r.price, r.id)
	acct := a.id
	// The spec: "A locate fee row may appear later than the locate fill".
	s.after(time.Duration(s.sc.Timing.FeeDelay), func() {
		s.cash.add(cashRow{account: acct, date: tradeDate(s.now), cashType: "Locate Fees", withdraw: fee, note: note})
	})
}

// sell queues a credit-back: a Rejected row when the lot size or the
// (symbol, type) inventory does not allow it, else a New row that freezes
// the inventory row until the credit clears.
func (b *locateBook) sell(s *Sim, a *account, symbol string, qty int64, typ, id string, now time.Time) {
	if b.byID[locRowKey{a.id, id}] != nil {
		return
	}
	r := &locateRow{account: a.id, symbol: symbol, id: id, shares: -qty, created: now, updated: now}
	b.addRow(r)
	reject := func(rej locRejection) {
		r.errCode = rej.code
		r.set(locRejected, rej.text, now)
	}
	if qty%100 != 0 {
		reject(rejLots)
		return
	}
	var row *invRow
	for _, t := range sellTypes[typ] {
		cand := b.inventory(a.id, symbol, t)
		if cand != nil && cand.available >= qty && !(t == typeSingleUse && cand.usedForShort) {
			row = cand
			break
		}
	}
	if row == nil {
		reject(rejInsufficient)
		return
	}
	r.typ, r.price, r.credit, r.sellQty = row.typ, row.avgPrice().Round(4), row, qty
	r.set(locNew, "", now)
	row.locked += row.available
	row.available = 0
	row.toBeSold += qty
	s.after(time.Duration(s.sc.Timing.CreditClear), func() { b.clearSell(s, r) })
}

// clearSell completes a credit-back still New: the shares count as sold, the
// rest of the frozen shares return to available, and the refund of the
// average price paid goes to the ledger.
func (b *locateBook) clearSell(s *Sim, r *locateRow) {
	if r.status != locNew {
		return
	}
	row, qty := r.credit, r.sellQty
	r.filled = r.shares
	r.set(locFilled, "", s.now)
	row.sold += qty
	row.toBeSold -= qty
	row.available += row.locked - qty
	row.locked = 0
	b.dropIfEmpty(row)
	refund := row.avgPrice().Mul(decimal.NewFromInt(qty)).Mul(s.sc.CreditBackRefund.Decimal).Round(2)
	if refund.IsPositive() {
		s.cash.add(cashRow{account: r.account, date: tradeDate(s.now), cashType: "Locate Fees", deposit: refund,
			note: fmt.Sprintf("Locate credit-back %s %d shares @ %s (quoteReqID %s)", r.symbol, qty, row.avgPrice().Round(4), r.id)})
	}
}

// cancel cancels an open quote (both rows of a Reg SHO pair, by either id)
// or a pending credit-back, whose frozen shares return to available. Unknown
// and terminal ids change nothing.
func (b *locateBook) cancel(s *Sim, a *account, id string, now time.Time) {
	r := b.byID[locRowKey{a.id, id}]
	if r == nil {
		return
	}
	if r.credit != nil {
		if r.status == locNew {
			r.set(locCanceled, "", now)
			row := r.credit
			row.toBeSold -= r.sellQty
			row.available += row.locked
			row.locked = 0
		}
		return
	}
	for _, q := range []*locateRow{r, r.sibling} {
		if q != nil && q.open() {
			q.set(locCanceled, "", now)
		}
	}
}

// reserveForShort ties shares of the account's located inventory for symbol
// to a short being opened; it reports false, taking nothing, when too few are
// available (unless the scenario fills shorts without a locate: then it
// ties what it finds). Locate and PreBorrow rows are used before SingleUse, whose use
// makes it non-creditable. Paper accounts hold no inventory and treat every
// symbol as easy to borrow (spec: "Paper versus live"), so they always pass.
func (b *locateBook) reserveForShort(s *Sim, account, symbol string, shares int64) bool {
	if a := s.accounts[account]; a != nil && a.paper {
		return true
	}
	rows := b.shortRows(account, symbol)
	var total int64
	for _, r := range rows {
		total += r.available
	}
	if total < shares && !s.sc.ShortsWithoutLocate {
		return false
	}
	for _, r := range rows {
		take := min(r.available, shares)
		if take == 0 {
			continue
		}
		r.available -= take
		r.tied += take
		if r.typ == typeSingleUse {
			r.usedForShort = true
		}
		shares -= take
	}
	return true
}

// releaseShort unties shares when a short is covered. Locate and PreBorrow
// shares return to available (reusable in a day); SingleUse shares are
// consumed, since the spec's "Locate types" says they are not reusable.
func (b *locateBook) releaseShort(s *Sim, account, symbol string, shares int64) {
	for _, r := range b.shortRows(account, symbol) {
		take := min(r.tied, shares)
		if take == 0 {
			continue
		}
		r.tied -= take
		if r.typ != typeSingleUse {
			r.available += take
		}
		shares -= take
		b.dropIfEmpty(r)
	}
}

// shortRows lists the account's inventory rows for symbol in the order
// shorts draw on them: reusable types first, SingleUse last.
func (b *locateBook) shortRows(account, symbol string) []*invRow {
	var first, last []*invRow
	for _, r := range b.inv {
		if r.account != account || r.symbol != symbol {
			continue
		}
		if r.typ == typeSingleUse {
			last = append(last, r)
		} else {
			first = append(first, r)
		}
	}
	return append(first, last...)
}
