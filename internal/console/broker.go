package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
)

// The broker's records as the read commands print them: for a person,
// aligned tables with money to 2 decimals and prices as the broker gave
// them; for a script, the broker's records one JSON object per line, or
// the table's rows as CSV.

// Accounts prints the accounts the keys reach, marking the selected one.
func Accounts(out Printer, accts []brokerclient.Account, selected string) {
	var rows [][]string
	var objs []any
	for _, a := range accts {
		mark := ""
		if strings.EqualFold(a.Account, selected) {
			mark = "*"
		}
		rows = append(rows, []string{mark + a.Account, a.AccountType, a.AccountStatus, Money(a.AvailableCash), Money(a.BuyingPower),
			Money(a.Equity), Money(a.Realized), Money(a.TotalCommissions), Money(a.TotalLocateCosts)})
		objs = append(objs, a)
	}
	out.Table([]string{"ACCOUNT", "TYPE", "STATUS", "CASH", "BUYING POWER", "EQUITY", "REALIZED", "COMMISSIONS", "LOCATE COSTS"}, rows, objs)
}

// PnL prints the account's profit and loss: the aggregates, then one row
// per lot with the side and shares of its open position (the lots carry
// neither: PnLRow.OpenPosition). In JSON it is the broker's record alone,
// and open is not needed; CSV is one table, the lots.
func PnL(out Printer, p *brokerclient.PnL, open []brokerclient.Position) {
	if out.JSON() {
		out.Event(p, "")
		return
	}
	if out.Format != CSV {
		out.Table([]string{"ACCOUNT VALUE", "DAY P&L", "DAY REALIZED", "DAY UNREALIZED", "TOTAL UNREALIZED", "EXPOSURE", "CASH", "LEVERAGE USED", "SHARES TRADED"},
			[][]string{{Money(p.AccountValue), Money(p.DayPnl), Money(p.DayRealized), Money(p.DayUnrealized), Money(p.TotalUnrealized),
				Money(p.Exposure), Money(p.AvailableCash), p.UsedLeverage.String() + " of " + p.AllowedLeverage.String(), Int(p.SharesTraded)}}, nil)
	}
	if len(p.Lots) == 0 && out.Format != CSV {
		out.Event(nil, "\nno lots today")
		return
	}
	var rows [][]string
	for _, l := range p.Lots {
		side, shares := "", ""
		if pos, ok := l.OpenPosition(open); ok {
			side, shares = string(pos.Side), Int(pos.Shares)
		} else if l.Closed() {
			side = "closed"
		}
		rows = append(rows, []string{string(l.PositionID), l.Symbol, side, shares, Money(l.Exposure), Money(l.DayRealizedPnl),
			Money(l.DayUnrealizedPnL), Money(l.RealizedPnl), Money(l.UnrealizedPnL), l.DayPctPnLMove.String()})
	}
	if out.Format != CSV {
		fmt.Fprintln(out.W)
	}
	out.Table([]string{"POSITION ID", "SYMBOL", "SIDE", "SHARES", "EXPOSURE", "DAY REALIZED", "DAY UNREALIZED", "REALIZED", "UNREALIZED", "DAY % MOVE"}, rows, nil)
}

// PnLSnapshot prints the P&L stream's model of the account: the aggregates,
// then one row per position.
func PnLSnapshot(out Printer, s brokerclient.PnLSnapshot) {
	out.Table([]string{"ACCOUNT VALUE", "DAY P&L", "DAY REALIZED", "DAY UNREALIZED", "TOTAL UNREALIZED", "EXPOSURE", "CASH", "LEVERAGE USED"},
		[][]string{{Money(s.AccountValue), Money(s.DayPnl), Money(s.DayRealized), Money(s.DayUnrealized), Money(s.TotalUnrealized),
			Money(s.Exposure), Money(s.AvailableCash), s.UsedLeverage.String() + " of " + s.AllowedLeverage.String()}}, nil)
	fmt.Fprintln(out.W)
	var rows [][]string
	for _, pos := range s.Positions {
		pc := pos.PnLCalc
		rows = append(rows, []string{string(pos.PositionID), pos.Symbol, Money(pc.Exposure), Money(pc.DayRealizedPnl), Money(pc.DayUnrealizedPnL),
			Money(pc.RealizedPnl), Money(pc.UnrealizedPnL), pc.DayPctPnLMove.String()})
	}
	out.Table([]string{"POSITION ID", "SYMBOL", "EXPOSURE", "DAY REALIZED", "DAY UNREALIZED", "REALIZED", "UNREALIZED", "DAY % MOVE"}, rows, nil)
}

// OpenPositions prints the open positions with their unrealized P&L.
func OpenPositions(out Printer, ps []brokerclient.Position) {
	var rows [][]string
	var objs []any
	for _, p := range ps {
		rows = append(rows, []string{string(p.PositionID), p.Symbol, string(p.Side), Int(p.Shares), PriceShown(p.PriceAvg),
			PriceShown(p.PriceClose), Money(p.Unrealized()), tradeDay(p.CreatedDate), p.DayOvernight})
		objs = append(objs, p)
	}
	out.Table([]string{"POSITION ID", "SYMBOL", "SIDE", "SHARES", "AVG PRICE", "LAST", "UNREALIZED", "OPENED", "HELD"}, rows, objs)
}

// ClosedPositions prints the closed lots with their realized P&L.
func ClosedPositions(out Printer, ps []brokerclient.ClosedPosition) {
	var rows [][]string
	var objs []any
	for _, p := range ps {
		rows = append(rows, []string{string(p.PositionID), p.Symbol, Int(p.SharesIn), Int(p.SharesOut), PriceShown(p.PriceOpen),
			PriceShown(p.PriceClose), Money(p.Realized), tradeDay(p.OpenedDate), tradeDay(p.ClosedDate)})
		objs = append(objs, p)
	}
	out.Table([]string{"POSITION ID", "SYMBOL", "SHARES IN", "SHARES OUT", "PRICE OPEN", "PRICE CLOSE", "REALIZED", "OPENED", "CLOSED"}, rows, objs)
}

// HistoricalPositions prints the lots held at the end of a past day.
func HistoricalPositions(out Printer, ps []brokerclient.HistoricalPosition) {
	var rows [][]string
	var objs []any
	for _, p := range ps {
		rows = append(rows, []string{tradeDay(p.Date), string(p.PositionID), p.Symbol, Int(p.Quantity), PriceShown(p.AverageCost),
			PriceShown(p.ClosingPrice), Money(p.MarketValue), Money(p.UnrealizedPnL)})
		objs = append(objs, p)
	}
	out.Table([]string{"DATE", "POSITION ID", "SYMBOL", "QUANTITY", "AVG COST", "CLOSING PRICE", "MARKET VALUE", "UNREALIZED"}, rows, objs)
}

// orderHeader and orderCells are an order's table row.
var orderHeader = []string{"START", "CLIENT ORDER ID", "SYMBOL", "SIDE", "OPEN/CLOSE", "TYPE", "TIF", "QTY", "LIMIT", "STATUS", "EXECUTED", "AVG PRICE", "ROUTE", "TEXT"}

func orderCells(o brokerclient.Order) []string {
	text := ""
	if o.Text != nil {
		text = *o.Text
	}
	return []string{clockTime(o.StartTime), o.ClientOrderID, o.Symbol, string(o.Side), string(o.OpenClose),
		string(o.OrderType), string(o.TimeInForce), Int(o.OrderQuantity), priceOrBlank(o.LimitPrice), string(o.OrderStatus),
		Int(o.Executed), priceOrBlank(o.PriceAvg), string(o.Route), text}
}

// OrderBook prints orders one a row: today's book, or the orders the order
// stream has shown.
func OrderBook(out Printer, book []brokerclient.Order) {
	var rows [][]string
	var objs []any
	for _, o := range book {
		rows = append(rows, orderCells(o))
		objs = append(objs, o)
	}
	out.Table(orderHeader, rows, objs)
}

// Fills prints executions with their proceeds, commission and fees.
func Fills(out Printer, fills []brokerclient.Fill) {
	var rows [][]string
	var objs []any
	for _, f := range fills {
		rows = append(rows, []string{tradeDay(f.TradeDate), string(f.TradeID), f.Symbol, string(f.Side), Int(f.Qty), PriceShown(f.Price),
			Money(f.GrossProceeds), Money(f.Commission), Money(f.TotalFees), Money(f.NetProceeds)})
		objs = append(objs, f)
	}
	out.Table([]string{"TRADE DATE", "TRADE ID", "SYMBOL", "SIDE", "QTY", "PRICE", "GROSS", "COMMISSION", "FEES", "NET"}, rows, objs)
}

// Routes prints the routes the account may send orders to, with what each
// takes.
func Routes(out Printer, routes []brokerclient.Route) {
	var rows [][]string
	var objs []any
	for _, r := range routes {
		rows = append(rows, []string{r.RouteName, joinNames(r.SecurityTypes), joinNames(r.OrderTypes), joinNames(r.TimesInForce)})
		objs = append(objs, r)
	}
	out.Table([]string{"ROUTE", "SECURITY TYPES", "ORDER TYPES", "TIMES IN FORCE"}, rows, objs)
}

// Inventory prints the account's located inventory, one row per symbol
// and locate type.
func Inventory(out Printer, rows []brokerclient.InventoryRow) {
	var table [][]string
	var objs []any
	for _, r := range rows {
		table = append(table, []string{r.Symbol, string(r.Type()), strconv.Itoa(r.LocateType), Int(r.Available), Int(r.Unavailable), Int(r.ToBeSold), Int(r.Sold)})
		objs = append(objs, r)
	}
	out.Table([]string{"SYMBOL", "TYPE", "CODE", "AVAILABLE", "UNAVAILABLE", "TO BE SOLD", "SOLD"}, table, objs)
}

// LocateHistory prints the broker's locate history rows of today.
func LocateHistory(out Printer, rows []brokerclient.HistoryRow) {
	var table [][]string
	var objs []any
	for _, r := range rows {
		table = append(table, []string{clockTime(r.UpdatedDate), r.QuoteReqID, r.Symbol, Int(r.LocateShares),
			r.LocateStatus.String(), string(brokercode.LocateTypeForCode(r.LocateType)), LocatePrice(r.LocatePrice), r.TextValue()})
		objs = append(objs, r)
	}
	out.Table([]string{"UPDATED", "QUOTE ID", "SYMBOL", "SHARES", "STATUS", "TYPE", "PRICE", "TEXT"}, table, objs)
}

// tradeDay shows a broker timestamp as its trade date: date-only and zoneless
// values as written, instants as their Eastern date.
func tradeDay(t brokerclient.Time) string {
	switch {
	case t.IsZero():
		return ""
	case t.DateOnly || t.NoZone:
		return t.Time.Format(time.DateOnly)
	}
	return ledger.TradeDate(t.Time).Format(time.DateOnly)
}

// clockTime shows a broker instant as New York time of day (TimeOfDay);
// a time the broker wrote without a zone, as written.
func clockTime(t brokerclient.Time) string {
	if t.IsZero() {
		return ""
	}
	if t.NoZone || t.DateOnly {
		return t.Time.Format(time.DateTime)
	}
	return market.TimeOfDay(t.Time)
}

// priceOrBlank shows a price as given, or nothing for zero (no limit, no
// fill yet).
func priceOrBlank(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return PriceShown(d)
}

// joinNames shows a list of names comma-separated.
func joinNames[T ~string](list []T) string {
	names := make([]string, len(list))
	for i, v := range list {
		names[i] = string(v)
	}
	return strings.Join(names, ",")
}
