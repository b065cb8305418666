package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/console"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/states"
)

// The read commands print what the broker says about the account for a
// person (aligned tables: money with 2 decimals, prices as the broker gave
// them) or, with --json, the broker's records one per line. They send only
// GETs and open no database.

// accountsCommand lists the accounts the keys reach (spec "Accounts and
// profit and loss"); the list also proves the keys work.
type accountsCommand struct{ conn connFlags }

func (c *accountsCommand) synopsis() string {
	return "list the accounts these keys reach: type, status, cash, buying power"
}

func (c *accountsCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *accountsCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	// The list needs no account: it is how a person finds theirs.
	s, err := c.conn.resolve(false)
	if err != nil {
		return err
	}
	client, err := c.conn.client(s, clock.Real{})
	if err != nil {
		return usagef("%v", err)
	}
	accts, _, err := client.Accounts.List(ctx)
	if errors.Is(err, brokerclient.ErrNotFound) {
		// Spec: the list doubles as a credential check (404 invalid).
		if s.auth == authPartner {
			return usagef("the broker refused the partner token (404): run 'locator login --partner' again")
		}
		return usagef("the broker refused these keys (404): check LOCATOR_KEY_ID and LOCATOR_SECRET")
	}
	if err != nil {
		return err
	}
	printAccounts(c.conn.out(), accts, s.account)
	return nil
}

// printAccounts prints the account list, marking the selected account.
func printAccounts(out console.Printer, accts []brokerclient.Account, selected string) {
	var rows [][]string
	var objs []any
	for _, a := range accts {
		mark := ""
		if strings.EqualFold(a.Account, selected) {
			mark = "*"
		}
		rows = append(rows, []string{mark + a.Account, a.AccountType, a.AccountStatus, console.Money(a.AvailableCash), console.Money(a.BuyingPower),
			console.Money(a.Equity), console.Money(a.Realized), console.Money(a.TotalCommissions), console.Money(a.TotalLocateCosts)})
		objs = append(objs, a)
	}
	out.Table([]string{"ACCOUNT", "TYPE", "STATUS", "CASH", "BUYING POWER", "EQUITY", "REALIZED", "COMMISSIONS", "LOCATE COSTS"}, rows, objs)
}

// pnlCommand prints the account's profit and loss: the aggregates, then one
// row per lot joined to the open positions for side and shares (spec "Profit
// and loss response" rule 5: the rows carry neither).
type pnlCommand struct{ conn connFlags }

func (c *pnlCommand) synopsis() string { return "print today's profit and loss, per lot" }

func (c *pnlCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *pnlCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	p, _, err := client.Accounts.PnL(ctx, s.account)
	if err != nil {
		return accountError(s.account, err)
	}
	out := c.conn.out()
	if out.JSON() {
		out.Event(p, "")
		return nil
	}
	open, _, err := client.Positions.Open(ctx, s.account)
	if err != nil {
		return accountError(s.account, err)
	}
	// CSV is one table: the lots; the account's totals are in --json.
	if out.Format != console.CSV {
		out.Table([]string{"ACCOUNT VALUE", "DAY P&L", "DAY REALIZED", "DAY UNREALIZED", "TOTAL UNREALIZED", "EXPOSURE", "CASH", "LEVERAGE USED", "SHARES TRADED"},
			[][]string{{console.Money(p.AccountValue), console.Money(p.DayPnl), console.Money(p.DayRealized), console.Money(p.DayUnrealized), console.Money(p.TotalUnrealized),
				console.Money(p.Exposure), console.Money(p.AvailableCash), p.UsedLeverage.String() + " of " + p.AllowedLeverage.String(), console.Int(p.SharesTraded)}}, nil)
	}
	if len(p.Lots) == 0 && out.Format != console.CSV {
		out.Event(nil, "\nno lots today")
		return nil
	}
	var rows [][]string
	for _, l := range p.Lots {
		side, shares := "", ""
		if pos, ok := l.OpenPosition(open); ok {
			side, shares = string(pos.Side), console.Int(pos.Shares)
		} else if l.Closed() {
			side = "closed"
		}
		rows = append(rows, []string{string(l.PositionID), l.Symbol, side, shares, console.Money(l.Exposure), console.Money(l.DayRealizedPnl),
			console.Money(l.DayUnrealizedPnL), console.Money(l.RealizedPnl), console.Money(l.UnrealizedPnL), l.DayPctPnLMove.String()})
	}
	if out.Format != console.CSV {
		fmt.Fprintln(out.W)
	}
	out.Table([]string{"POSITION ID", "SYMBOL", "SIDE", "SHARES", "EXPOSURE", "DAY REALIZED", "DAY UNREALIZED", "REALIZED", "UNREALIZED", "DAY % MOVE"}, rows, nil)
	return nil
}

// positionsCommand prints open positions, or with --closed the closed-lot
// lifecycle rows, or with --historical DATE the lots held at that date's end.
type positionsCommand struct {
	conn       connFlags
	closed     bool
	historical string
}

func (c *positionsCommand) synopsis() string {
	return "print open positions [--closed | --historical DATE]"
}

func (c *positionsCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.BoolVar(&c.closed, "closed", false, "closed positions (their realized P&L)")
	fs.StringVar(&c.historical, "historical", "", "positions held at the end of DATE (YYYY-MM-DD)")
}

func (c *positionsCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	if c.closed && c.historical != "" {
		return usagef("--closed and --historical: choose one")
	}
	var date time.Time
	if c.historical != "" {
		var err error
		if date, err = pastDate("historical", c.historical, time.Now()); err != nil {
			return err
		}
	}
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	out := c.conn.out()
	var rows [][]string
	var objs []any
	switch {
	case c.closed:
		ps, _, err := client.Positions.Closed(ctx, s.account)
		if err != nil {
			return accountError(s.account, err)
		}
		for _, p := range ps {
			rows = append(rows, []string{string(p.PositionID), p.Symbol, console.Int(p.SharesIn), console.Int(p.SharesOut), console.PriceShown(p.PriceOpen),
				console.PriceShown(p.PriceClose), console.Money(p.Realized), tradeDay(p.OpenedDate), tradeDay(p.ClosedDate)})
			objs = append(objs, p)
		}
		out.Table([]string{"POSITION ID", "SYMBOL", "SHARES IN", "SHARES OUT", "PRICE OPEN", "PRICE CLOSE", "REALIZED", "OPENED", "CLOSED"}, rows, objs)
	case c.historical != "":
		ps, _, err := client.Positions.Historical(ctx, s.account, date)
		if err != nil {
			return accountError(s.account, err)
		}
		for _, p := range ps {
			rows = append(rows, []string{tradeDay(p.Date), string(p.PositionID), p.Symbol, console.Int(p.Quantity), console.PriceShown(p.AverageCost),
				console.PriceShown(p.ClosingPrice), console.Money(p.MarketValue), console.Money(p.UnrealizedPnL)})
			objs = append(objs, p)
		}
		out.Table([]string{"DATE", "POSITION ID", "SYMBOL", "QUANTITY", "AVG COST", "CLOSING PRICE", "MARKET VALUE", "UNREALIZED"}, rows, objs)
	default:
		ps, _, err := client.Positions.Open(ctx, s.account)
		if err != nil {
			return accountError(s.account, err)
		}
		for _, p := range ps {
			rows = append(rows, []string{string(p.PositionID), p.Symbol, string(p.Side), console.Int(p.Shares), console.PriceShown(p.PriceAvg),
				console.PriceShown(p.PriceClose), console.Money(p.Unrealized()), tradeDay(p.CreatedDate), p.DayOvernight})
			objs = append(objs, p)
		}
		out.Table([]string{"POSITION ID", "SYMBOL", "SIDE", "SHARES", "AVG PRICE", "LAST", "UNREALIZED", "OPENED", "HELD"}, rows, objs)
	}
	return nil
}

// orderHeader and orderCells are an order's table row, shared by orders and
// watch orders.
var orderHeader = []string{"START", "CLIENT ORDER ID", "SYMBOL", "SIDE", "OPEN/CLOSE", "TYPE", "TIF", "QTY", "LIMIT", "STATUS", "EXECUTED", "AVG PRICE", "ROUTE", "TEXT"}

func orderCells(o brokerclient.Order) []string {
	text := ""
	if o.Text != nil {
		text = *o.Text
	}
	return []string{clockTime(o.StartTime), o.ClientOrderID, o.Symbol, string(o.Side), string(o.OpenClose),
		string(o.OrderType), string(o.TimeInForce), console.Int(o.OrderQuantity), priceOrBlank(o.LimitPrice), string(o.OrderStatus),
		console.Int(o.Executed), priceOrBlank(o.PriceAvg), string(o.Route), text}
}

// ordersCommand prints today's order book, or with --history DATE the fills
// since DATE: the one-week archive for a recent DATE, the paginated
// one-year history for an older one (spec "Orders").
type ordersCommand struct {
	conn    connFlags
	history string
}

func (c *ordersCommand) synopsis() string {
	return "print today's orders, or the fills since --history DATE; 'orders cancel' cancels one locator placed"
}

func (c *ordersCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.StringVar(&c.history, "history", "", "fills since DATE (YYYY-MM-DD): the archive within a week, the paginated history up to a year back")
}

// cancel cancels a working order locator placed, through its order
// workflow: the cancel is recorded before it is sent, and the order ends
// with the broker's answer.
func (c *ordersCommand) cancel(ctx context.Context, args []string) error {
	if len(args) != 1 || strings.ContainsAny(args[0], "/?#% \t") {
		return usagef("want 'orders cancel CLIENT_ORDER_ID'")
	}
	out := c.conn.out()
	sess, err := c.conn.open(ctx, "orders cancel", nil, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.close()
	o, err := sess.CancelOrder(ctx, account.CancelOrderRequest{ClientOrderID: args[0]})
	if account.KindOf(err) == account.KindNotOpen {
		return usagef("%v (only orders locator placed and still working can be cancelled here); nothing was sent", err)
	}
	if err != nil {
		return err
	}
	out.Event(map[string]any{"clientOrderId": o.LookupID(), "symbol": o.Symbol, "state": o.State, "orderStatus": o.OrderStatus, "executed": o.Executed},
		fmt.Sprintf("order %s %s: %s (%s), %d executed", o.LookupID(), o.Symbol, o.State, o.OrderStatus, o.Executed))
	if o.State != states.Canceled {
		return &exitError{code: exitBroker, msg: fmt.Sprintf("order %s ended %s, not canceled", o.LookupID(), o.State)}
	}
	return nil
}

// archiveDays is how far back the fill archive reaches (spec: "up to one
// week"); an older start date uses the paginated history.
const archiveDays = 7

// historyDays is how far back the paginated history reaches (spec: "up to
// one year").
const historyDays = 365

func (c *ordersCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "cancel" {
		return c.cancel(ctx, args[1:])
	}
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	var since time.Time
	ago := 0 // days from since to today
	if c.history != "" {
		var err error
		if since, err = pastDate("history", c.history, time.Now()); err != nil {
			return err
		}
		today := ledger.TradeDate(time.Now())
		if ago = int(today.Sub(since).Hours() / 24); ago > historyDays {
			return usagef("--history %s: the broker keeps one year of order history; pick a date since %s",
				c.history, today.AddDate(0, 0, -historyDays).Format(time.DateOnly))
		}
	}
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	out := c.conn.out()
	if c.history == "" {
		book, _, err := client.Orders.Book(ctx, s.account)
		if err != nil {
			return accountError(s.account, err)
		}
		var rows [][]string
		var objs []any
		for _, o := range book {
			rows = append(rows, orderCells(o))
			objs = append(objs, o)
		}
		out.Table(orderHeader, rows, objs)
		return nil
	}
	var fills []brokerclient.Fill
	if ago <= archiveDays {
		if fills, _, err = client.Orders.Fills(ctx, s.account, since); err != nil {
			return accountError(s.account, err)
		}
	} else {
		for f, err := range client.Orders.History(ctx, s.account, since, &brokerclient.HistoryOptions{Days: ago + 1}) {
			if err != nil {
				return accountError(s.account, err)
			}
			fills = append(fills, f)
		}
	}
	var rows [][]string
	var objs []any
	for _, f := range fills {
		rows = append(rows, []string{tradeDay(f.TradeDate), string(f.TradeID), f.Symbol, string(f.Side), console.Int(f.Qty), console.PriceShown(f.Price),
			console.Money(f.GrossProceeds), console.Money(f.Commission), console.Money(f.TotalFees), console.Money(f.NetProceeds)})
		objs = append(objs, f)
	}
	out.Table([]string{"TRADE DATE", "TRADE ID", "SYMBOL", "SIDE", "QTY", "PRICE", "GROSS", "COMMISSION", "FEES", "NET"}, rows, objs)
	return nil
}

// routesCommand prints the routes the account may send orders to (spec
// "Route record": the live set varies by subscription, so always ask).
type routesCommand struct{ conn connFlags }

func (c *routesCommand) synopsis() string { return "print the order routes available to the account" }

func (c *routesCommand) flags(fs *pflag.FlagSet) { c.conn.register(fs) }

func (c *routesCommand) run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	client, s, err := c.conn.readClient()
	if err != nil {
		return err
	}
	routes, _, err := client.Orders.Routes(ctx, s.account)
	if err != nil {
		return accountError(s.account, err)
	}
	var rows [][]string
	var objs []any
	for _, r := range routes {
		rows = append(rows, []string{r.RouteName, joinNames(r.SecurityTypes), joinNames(r.OrderTypes), joinNames(r.TimesInForce)})
		objs = append(objs, r)
	}
	c.conn.out().Table([]string{"ROUTE", "SECURITY TYPES", "ORDER TYPES", "TIMES IN FORCE"}, rows, objs)
	return nil
}

// pastDate parses a YYYY-MM-DD flag value that may not lie after today's
// trade date (Eastern).
func pastDate(flag, v string, now time.Time) (time.Time, error) {
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, usagef("--%s %q: want a date as YYYY-MM-DD", flag, v)
	}
	if today := ledger.TradeDate(now); d.After(today) {
		return time.Time{}, usagef("--%s %s is after today (%s)", flag, v, today.Format(time.DateOnly))
	}
	return d, nil
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

// clockTime shows a broker instant as local wall-clock time.
func clockTime(t brokerclient.Time) string {
	if t.IsZero() {
		return ""
	}
	if t.NoZone || t.DateOnly {
		return t.Time.Format(time.DateTime)
	}
	return t.Time.Local().Format(time.TimeOnly)
}

// priceOrBlank shows a price as given, or nothing for zero (no limit, no
// fill yet).
func priceOrBlank(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return console.PriceShown(d)
}

func joinNames[T ~string](list []T) string {
	names := make([]string, len(list))
	for i, v := range list {
		names[i] = string(v)
	}
	return strings.Join(names, ",")
}
