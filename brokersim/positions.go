package brokersim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// lot is one position lot: opening fills of a trading day on one symbol and
// side go into one lot (a lot carried from an earlier session stays apart,
// so its day fields keep their own basis); closing fills consume lots first
// in, first out; a lot reopened after closing is a new lot. P&L rows, open positions
// and closed lifecycle rows are all per lot (spec: "Profit and loss
// response" rule 5, "Position records").
type lot struct {
	id      string // positionId: decimal digits, above 2^53
	account string
	symbol  string
	secType string
	sign    int64 // +1 long, -1 short
	shares  int64 // open shares (contracts for options)

	sharesIn, sharesOut int64
	costIn              decimal.Decimal // Σ price×shares bought in (or sold, for a short)
	proceedsOut         decimal.Decimal // Σ price×shares taken out
	outs                []lotClose

	carried    bool            // opened in an earlier session
	priorClose decimal.Decimal // the day basis of a carried lot

	realized    decimal.Decimal // lifetime, exact
	dayRealized decimal.Decimal // today, exact

	opened, updated, closed time.Time // closed is zero while shares remain
}

// lotClose records shares taken out of a lot on a trading day, so historical
// rows can tell the quantity held at the end of any date.
type lotClose struct {
	day    time.Time
	shares int64
}

func (b *orderBook) newLot(account, symbol, secType string, sign int64, at time.Time) *lot {
	b.lotSeq++
	l := &lot{id: strconv.FormatUint(b.lotSeq, 10), account: account, symbol: symbol, secType: secType, sign: sign, opened: at, updated: at}
	b.lots = append(b.lots, l)
	return l
}

// openLot is the lot today's opening fill goes into: the account's open lot
// on symbol and side opened today, else a new one. Merging keeps the lot
// count (and so every valuation) small however many orders fill.
func (b *orderBook) openLot(account, symbol, secType string, sign int64, now time.Time) *lot {
	today := tradeDate(now)
	for _, l := range b.lots {
		if l.account == account && l.symbol == symbol && l.secType == secType && l.sign == sign &&
			l.open() && !l.carried && tradeDate(l.opened).Equal(today) {
			return l
		}
	}
	return b.newLot(account, symbol, secType, sign, now)
}

func (l *lot) open() bool { return l.shares > 0 }

func (l *lot) addShares(q int64, px decimal.Decimal, at time.Time) {
	l.shares += q
	l.sharesIn += q
	l.costIn = l.costIn.Add(px.Mul(decimal.NewFromInt(q)))
	l.updated = at
}

// avg is the lot's average entry price.
func (l *lot) avg() decimal.Decimal {
	if l.sharesIn == 0 {
		return decimal.Zero
	}
	return l.costIn.DivRound(decimal.NewFromInt(l.sharesIn), 6)
}

// dayBasis is the price today's P&L is measured from: the prior close for a
// carried lot, the entry price for a lot opened today (so its day fields
// equal its lifetime fields, spec rule 4).
func (l *lot) dayBasis() decimal.Decimal {
	if l.carried {
		return l.priorClose
	}
	return l.avg()
}

// closeLots takes q shares at px out of the account's lots on symbol with
// the given sign, oldest first, booking realized P&L.
func (b *orderBook) closeLots(account, symbol string, sign, q int64, px decimal.Decimal, now time.Time) {
	for _, l := range b.lots {
		if q == 0 {
			return
		}
		if l.account != account || l.symbol != symbol || l.sign != sign || l.shares == 0 {
			continue
		}
		t := min(q, l.shares)
		q -= t
		dt := decimal.NewFromInt(t)
		m := multiplier(l.secType).Mul(decimal.NewFromInt(l.sign))
		l.realized = l.realized.Add(px.Sub(l.avg()).Mul(dt).Mul(m))
		l.dayRealized = l.dayRealized.Add(px.Sub(l.dayBasis()).Mul(dt).Mul(m))
		l.shares -= t
		l.sharesOut += t
		l.proceedsOut = l.proceedsOut.Add(px.Mul(dt))
		l.outs = append(l.outs, lotClose{tradeDate(now), t})
		l.updated = now
		if l.shares == 0 {
			l.closed = now
		}
	}
}

// multiplier is the contract size: 100 shares per option contract.
func multiplier(secType string) decimal.Decimal {
	if secType == "Option" {
		return decimal.NewFromInt(100)
	}
	return decimal.NewFromInt(1)
}

// occSymbol is a parsed OCC option symbol without padding, e.g. AAPL261218C00190000.
type occSymbol struct {
	root    string
	putCall string
	strike  decimal.Decimal
}

var occPattern = regexp.MustCompile(`^([A-Z.]{1,6})(\d{6})([CP])(\d{8})$`)

func parseOCC(sym string) (occSymbol, bool) {
	m := occPattern.FindStringSubmatch(sym)
	if m == nil {
		return occSymbol{}, false
	}
	n, _ := strconv.ParseInt(m[4], 10, 64)
	pc := "Call"
	if m[3] == "P" {
		pc = "Put"
	}
	return occSymbol{root: m[1], putCall: pc, strike: decimal.New(n, -3)}, true
}

// mark is the lot's current price: the symbol's last price, else its entry.
func (s *Sim) mark(l *lot) decimal.Decimal {
	if p, ok := s.prices[l.symbol]; ok {
		return p
	}
	return l.avg()
}

// positionJSON is an open-position row (reference: "Open positions").
type positionJSON struct {
	AccountID    string  `json:"accountId"`
	CreatedDate  string  `json:"createdDate"`
	DayOvernight string  `json:"dayOvernight"`
	PositionID   string  `json:"positionId"`
	PriceAvg     Decimal `json:"priceAvg"`
	PriceClose   Decimal `json:"priceClose"`
	PriceOpen    Decimal `json:"priceOpen"`
	PriceStrike  Decimal `json:"priceStrike"`
	PutCall      *string `json:"putCall"`
	RootSymbol   string  `json:"rootSymbol"`
	SecurityType string  `json:"securityType"`
	Shares       int64   `json:"shares"`
	Side         string  `json:"side"`
	Symbol       string  `json:"symbol"`
	TradedSymbol string  `json:"tradedSymbol"`
	UpdatedDate  string  `json:"updatedDate"`
}

// handlePositions serves GET .../positions: the open lots as a bare JSON
// array (reference notes), one row per positionId.
func (s *Sim) handlePositions(c *call) reply {
	out := []positionJSON{}
	for _, l := range s.ord.lots {
		if l.account == c.acct.id && l.open() {
			out = append(out, s.positionRow(l))
		}
	}
	return jsonReply(http.StatusOK, out)
}

// positionRow is the open-position row of a lot.
func (s *Sim) positionRow(l *lot) positionJSON {
	p := positionJSON{
		AccountID: l.account, CreatedDate: fmt3(l.opened), DayOvernight: "Day", PositionID: l.id,
		PriceAvg: Dec(l.avg()), PriceClose: Dec(s.mark(l)), PriceOpen: Dec(l.avg()),
		RootSymbol: l.symbol, SecurityType: l.secType, Shares: l.shares, Side: "Long",
		Symbol: l.symbol, TradedSymbol: l.symbol, UpdatedDate: fmt3(l.updated),
	}
	if l.carried {
		p.DayOvernight = "Overnight"
		p.CreatedDate = tradeDate(l.opened).Format(dateMidnight)
	}
	if l.sign < 0 {
		p.Side = "Short"
	}
	if occ, ok := parseOCC(l.symbol); ok && l.secType == "Option" {
		p.RootSymbol, p.PriceStrike, p.PutCall = occ.root, Dec(occ.strike), strp(occ.putCall)
	}
	return p
}

// closedSeed is a closed-position row carried from the scenario.
type closedSeed struct{ ScenarioClosedPosition }

// closedJSON is a closed-position lifecycle row. PositionID is a JSON number
// written from its digits, so ids above 2^53 reach the wire intact (spec:
// "positionId as a JSON number (hold as string when above the safe integer
// range)").
type closedJSON struct {
	AccountID    string          `json:"accountId"`
	PositionID   json.RawMessage `json:"positionId"`
	Symbol       string          `json:"symbol"`
	SecurityType string          `json:"securityType"`
	SharesIn     int64           `json:"sharesIn"`
	SharesOut    int64           `json:"sharesOut"`
	PriceOpen    Decimal         `json:"priceOpen"`
	PriceClose   Decimal         `json:"priceClose"`
	Realized     Decimal         `json:"realized"`
	OpenedDate   string          `json:"openedDate"`
	ClosedDate   string          `json:"closedDate"`
}

// positionIDNumber is the raw JSON literal of a digit-string id; anything
// else is written as a JSON string rather than producing invalid JSON.
func positionIDNumber(id string) json.RawMessage {
	if digitsOnly(id) {
		return json.RawMessage(id)
	}
	b, _ := json.Marshal(id)
	return b
}

func digitsOnly(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// dateOnly rewrites a scenario YYYY-MM-DD as the date-only timestamp form.
func dateOnly(d string) string {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return d
	}
	return t.Format(dateMidnight)
}

// handleClosedPositions serves GET .../positions/closed: the scenario's
// closed rows, then the lots closed in this session.
func (s *Sim) handleClosedPositions(c *call) reply {
	out := struct {
		ClosedPositions []closedJSON `json:"closedPositions"`
	}{ClosedPositions: []closedJSON{}}
	for _, r := range s.ord.closed {
		if r.Account != c.acct.id {
			continue
		}
		out.ClosedPositions = append(out.ClosedPositions, closedJSON{
			AccountID: r.Account, PositionID: positionIDNumber(r.PositionID), Symbol: r.Symbol, SecurityType: "Stock",
			SharesIn: r.SharesIn, SharesOut: r.SharesOut, PriceOpen: r.PriceOpen, PriceClose: r.PriceClose,
			Realized: r.Realized, OpenedDate: dateOnly(r.OpenedDate), ClosedDate: dateOnly(r.ClosedDate),
		})
	}
	for _, l := range s.ord.lots {
		if l.account != c.acct.id || l.open() || l.closed.IsZero() {
			continue
		}
		out.ClosedPositions = append(out.ClosedPositions, closedJSON{
			AccountID: l.account, PositionID: positionIDNumber(l.id), Symbol: l.symbol, SecurityType: l.secType,
			SharesIn: l.sharesIn, SharesOut: l.sharesOut, PriceOpen: Dec(l.avg().Round(4)),
			PriceClose: Dec(l.proceedsOut.DivRound(decimal.NewFromInt(l.sharesOut), 4)),
			Realized:   Dec(l.realized.Round(2)), OpenedDate: fmt3(l.opened), ClosedDate: fmt3(l.closed),
		})
	}
	return jsonReply(http.StatusOK, out)
}

// historicalJSON is one lot held at the end of a trade date.
type historicalJSON struct {
	AccountID     string  `json:"accountId"`
	PositionID    string  `json:"positionId"`
	Symbol        string  `json:"symbol"`
	SecurityType  string  `json:"securityType"`
	Date          string  `json:"date"`
	Quantity      int64   `json:"quantity"`
	MarketValue   Decimal `json:"marketValue"`
	AverageCost   Decimal `json:"averageCost"`
	ClosingPrice  Decimal `json:"closingPrice"`
	UnrealizedPnL Decimal `json:"unrealizedPnL"`
}

// handleHistoricalPositions serves GET .../positions/historical?date=: per
// lot held at the end of that date, its signed quantity, market value,
// average cost, closing price and unrealized P&L. The simulator keeps no
// price history: today uses the last price, a carried lot's earlier days its
// prior close, a scenario closed row its opening price.
func (s *Sim) handleHistoricalPositions(c *call) reply {
	q := c.r.URL.Query()
	if !q.Has("date") || q.Get("date") == "" {
		return validationLines("- date: date is required")
	}
	d, err := time.Parse(time.DateOnly, q.Get("date"))
	if err != nil {
		return validationLines("- date: Does not match format 'date'")
	}
	out := struct {
		HistoricalPositions []historicalJSON `json:"historicalPositions"`
	}{HistoricalPositions: []historicalJSON{}}
	row := func(id, symbol, secType string, qty int64, avg, closing decimal.Decimal) historicalJSON {
		dq := decimal.NewFromInt(qty).Mul(multiplier(secType))
		return historicalJSON{
			AccountID: c.acct.id, PositionID: id, Symbol: symbol, SecurityType: secType, Date: d.Format(dateMidnight),
			Quantity: qty, MarketValue: Dec(closing.Mul(dq).Round(2)), AverageCost: Dec(avg.Round(4)),
			ClosingPrice: Dec(closing), UnrealizedPnL: Dec(closing.Sub(avg).Mul(dq).Round(2)),
		}
	}
	today := tradeDate(c.now)
	for _, r := range s.ord.closed {
		opened, err1 := time.Parse(time.DateOnly, r.OpenedDate)
		closed, err2 := time.Parse(time.DateOnly, r.ClosedDate)
		if r.Account != c.acct.id || err1 != nil || err2 != nil || d.Before(opened) || !d.Before(closed) {
			continue
		}
		out.HistoricalPositions = append(out.HistoricalPositions, row(r.PositionID, r.Symbol, "Stock", r.SharesIn, r.PriceOpen.Decimal, r.PriceOpen.Decimal))
	}
	for _, l := range s.ord.lots {
		if l.account != c.acct.id || d.After(today) || d.Before(tradeDate(l.opened)) {
			continue
		}
		qty := l.sharesIn
		for _, o := range l.outs {
			if !o.day.After(d) {
				qty -= o.shares
			}
		}
		if qty <= 0 {
			continue
		}
		closing := s.mark(l)
		if d.Before(today) {
			closing = l.dayBasis()
		}
		out.HistoricalPositions = append(out.HistoricalPositions, row(l.id, l.symbol, l.secType, qty*l.sign, l.avg(), closing))
	}
	return jsonReply(http.StatusOK, out)
}
