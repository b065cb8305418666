// Order reads: the order and fill records and the handlers that serve them
// (one order, the order book, the fill archive, the order history).

package brokersim

import (
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// orderJSON is the order record (spec: "Order record", reference field list).
type orderJSON struct {
	AccountID              string    `json:"accountId"`
	CanceledQuantity       int64     `json:"canceledQuantity"`
	ClientOrderID          string    `json:"clientOrderId"`
	Executed               int64     `json:"executed"`
	LastPrice              Decimal   `json:"lastPrice"`
	LastQuantity           int64     `json:"lastQuantity"`
	LastUpdated            string    `json:"lastUpdated"`
	LeavesQuantity         int64     `json:"leavesQuantity"`
	LegCount               int       `json:"legCount"`
	Legs                   []legJSON `json:"legs"`
	LimitPrice             Decimal   `json:"limitPrice"`
	MaintenanceRequirement Decimal   `json:"maintenanceRequirement"`
	MarginRequirement      Decimal   `json:"marginRequirement"`
	MaxDisplayQuantity     int64     `json:"maxDisplayQuantity"`
	OpenClose              string    `json:"openClose"`
	OrderQuantity          int64     `json:"orderQuantity"`
	OrderStatus            string    `json:"orderStatus"`
	OrderType              string    `json:"orderType"`
	PegDifference          Decimal   `json:"pegDifference"`
	PegOffsetType          *string   `json:"pegOffsetType"`
	PriceAvg               Decimal   `json:"priceAvg"`
	PriceStop              Decimal   `json:"priceStop"`
	Route                  string    `json:"route"`
	SecurityType           string    `json:"securityType"`
	Side                   string    `json:"side"`
	StartTime              string    `json:"startTime"`
	StrikePrice            Decimal   `json:"strikePrice"`
	Symbol                 string    `json:"symbol"`
	Text                   *string   `json:"text"`
	TimeInForce            string    `json:"timeInForce"`
	TradedSymbol           string    `json:"tradedSymbol"`
}

// legJSON is one leg of a multi-leg order row.
type legJSON struct {
	AvgPx   Decimal `json:"avgPx"`
	CxlQty  int64   `json:"cxlQty"`
	Index   int     `json:"index"`
	LastPx  Decimal `json:"lastPx"`
	LastQty int64   `json:"lastQty"`
	LvsQty  int64   `json:"lvsQty"`
	Qty     int64   `json:"qty"`
	Side    string  `json:"side"`
	Symbol  string  `json:"symbol"`
}

func (o *order) toJSON() orderJSON {
	j := orderJSON{
		AccountID: o.acct.id, CanceledQuantity: o.canceled, ClientOrderID: o.id, Executed: o.executed,
		LastPrice: Dec(o.lastPrice), LastQuantity: o.lastQty, LastUpdated: fmt7(o.updated),
		LeavesQuantity: o.leaves(), LimitPrice: Dec(o.limit),
		OpenClose: o.openClose, OrderQuantity: o.qty, OrderStatus: o.status, OrderType: o.orderType,
		PriceAvg: Dec(o.priceAvg), PriceStop: Dec(o.stop), Route: o.route, SecurityType: o.secType,
		Side: o.side, StartTime: fmt7(o.start), Symbol: o.symbol, Text: o.text, TimeInForce: o.tif,
		TradedSymbol: o.symbol,
	}
	if o.secType == "Option" {
		if occ, ok := parseOCC(o.symbol); ok {
			j.StrikePrice = Dec(occ.strike)
		}
	}
	if len(o.legs) > 0 {
		j.LegCount = len(o.legs)
		for i, l := range o.legs {
			q := o.qty * l.ratio
			lvs := q
			if !o.working() {
				lvs = 0
			}
			j.Legs = append(j.Legs, legJSON{Index: i, Qty: q, LvsQty: lvs, CxlQty: q - lvs, Side: l.side, Symbol: l.symbol})
		}
	}
	return j
}

// lookup finds an order by clientOrderId as the single-order GET and the
// cancel see it: registered (startTime+OrderAsync passed), not hidden, and
// of the session ("today's orders only", or still working).
func (b *orderBook) lookup(a *account, id string, now time.Time) *order {
	o := b.byID[orderKey{a.id, id}]
	if o == nil || o.hidden || now.Before(o.registerAt) || !o.inSession(now) {
		return nil
	}
	return o
}

// handleGetOrder serves GET .../order/{clientOrderId}: one order object,
// 404 text until it is registered.
func (s *Sim) handleGetOrder(c *call) reply {
	o := s.ord.lookup(c.acct, c.r.PathValue("clientOrderId"), c.now)
	if o == nil {
		return notFoundText()
	}
	return jsonReply(http.StatusOK, o.toJSON())
}

// handleOrderBook serves GET .../orders: today's book as a bare JSON array
// (reference notes), every placement of the session in any state and the
// orders still working from earlier sessions, oldest first.
func (s *Sim) handleOrderBook(c *call) reply {
	out := []orderJSON{}
	for _, o := range s.ord.orders {
		if o.acct == c.acct && o.inSession(c.now) {
			out = append(out, o.toJSON())
		}
	}
	return jsonReply(http.StatusOK, out)
}

// fillJSON is a fill row of the archive and the paginated history
// (spec: "Fill row"; reference field list).
type fillJSON struct {
	AccountID     string  `json:"accountId"`
	Canceled      bool    `json:"canceled"`
	Commission    Decimal `json:"commission"`
	Currency      string  `json:"currency"`
	EntryDate     string  `json:"entryDate"`
	ExecTime      string  `json:"execTime,omitempty"`
	GrossProceeds Decimal `json:"grossProceeds"`
	MLegID        *string `json:"mLegId"`
	NetProceeds   Decimal `json:"netProceeds"`
	Notes         string  `json:"notes"`
	Price         Decimal `json:"price"`
	Qty           int64   `json:"qty"`
	SecurityType  string  `json:"securityType"`
	SettleDate    string  `json:"settleDate"`
	Side          string  `json:"side"`
	SpreadType    *string `json:"spreadType"`
	Symbol        string  `json:"symbol"`
	TotalFees     Decimal `json:"totalFees"`
	TradeDate     string  `json:"tradeDate"`
	TradeID       int64   `json:"tradeId"`
}

func (f *fill) toJSON() fillJSON {
	day := tradeDate(f.at)
	gross := f.price.Mul(decimal.NewFromInt(f.qty)).Mul(multiplier(f.secType))
	if f.side == "Buy" {
		gross = gross.Neg()
	}
	j := fillJSON{
		AccountID: f.account, Commission: Dec(f.commission), Currency: "USD",
		EntryDate: day.Format(dateMidnight), GrossProceeds: Dec(gross),
		NetProceeds: Dec(gross.Sub(f.commission)), Price: Dec(f.price), Qty: f.qty,
		SecurityType: f.secType, SettleDate: nextBusinessDay(day).Format(dateMidnight), Side: f.side,
		Symbol: f.symbol, TotalFees: Dec(f.commission), TradeDate: day.Format(dateMidnight), TradeID: f.tradeID,
	}
	// Spec: "on some rows execTime", a bare local time with no zone.
	if !f.seeded && f.tradeID%3 != 0 {
		j.ExecTime = f.at.In(eastern).Format("2006-01-02T15:04:05")
	}
	return j
}

// nextBusinessDay is T+1 settlement, skipping weekends.
func nextBusinessDay(d time.Time) time.Time {
	d = d.AddDate(0, 0, 1)
	for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// fillsBetween returns the account's fills with trade dates in [from, to],
// oldest first, matching symbol when it is not empty.
func (b *orderBook) fillsBetween(account string, from, to time.Time, symbol string) []fillJSON {
	out := []fillJSON{}
	for _, f := range b.fills {
		d := tradeDate(f.at)
		if f.account != account || d.Before(from) || d.After(to) || (symbol != "" && !strings.EqualFold(symbol, f.symbol)) {
			continue
		}
		out = append(out, f.toJSON())
	}
	return out
}

// handleFillArchive serves GET .../orders/start-date/{date}: fills from
// date, at most one week back from today; paper always answers empty.
func (s *Sim) handleFillArchive(c *call) reply {
	start, err := time.Parse(time.DateOnly, c.r.PathValue("date"))
	if err != nil {
		return notFoundText()
	}
	out := struct {
		Orders []fillJSON `json:"orders"`
	}{Orders: []fillJSON{}}
	if !c.acct.paper {
		today := tradeDate(c.now)
		out.Orders = s.ord.fillsBetween(c.acct.id, latest(start, today.AddDate(0, 0, -7)), today, "")
	}
	return jsonReply(http.StatusOK, out)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// handleOrderHistory serves GET .../orders-with-pagination/start-date/{date}:
// the window [date, date+numberOfDays) within one year back, paged by
// offset and limit (at most 100), optionally one symbol.
func (s *Sim) handleOrderHistory(c *call) reply {
	start, err := time.Parse(time.DateOnly, c.r.PathValue("date"))
	if err != nil {
		return notFoundText()
	}
	days, offset, limit := windowParams(c.r.URL.Query(), 100)
	out := struct {
		Pagination     pagination `json:"pagination"`
		TradingHistory []fillJSON `json:"tradingHistory"`
	}{Pagination: pagination{CurrentLimit: limit, CurrentOffset: offset}, TradingHistory: []fillJSON{}}
	if c.acct.paper || days <= 0 {
		return jsonReply(http.StatusOK, out)
	}
	today := tradeDate(c.now)
	rows := s.ord.fillsBetween(c.acct.id, latest(start, today.AddDate(-1, 0, 0)), start.AddDate(0, 0, days-1), c.r.URL.Query().Get("symbol"))
	out.Pagination.TotalRecords = len(rows)
	if offset < len(rows) {
		out.TradingHistory = rows[offset:min(offset+limit, len(rows))]
	}
	return jsonReply(http.StatusOK, out)
}
