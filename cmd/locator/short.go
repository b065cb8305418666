package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/workflow"
)

// shortCommand is the locate-then-short helper: flags, the prompts and the
// report around the account's Short, which ensures the locate, checks sizing, and
// places one Sell/Open order under a write-ahead clientOrderId.
type shortCommand struct {
	conn           connFlags
	order          orderFlags
	maxPrice       string
	maxCost        string
	allowSingleUse bool
	yes            bool
}

func (c *shortCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	c.order.register(fs, "sell")
	// --limit was this flag's first name; elsewhere (status, jobs) it
	// counts rows, so the price got its own name and the old one stays.
	fs.StringVar(&c.order.limit, "limit", "", "limit price of the sell")
	fs.MarkDeprecated("limit", "use --limit-price")
	fs.StringVar(&c.maxPrice, "max-price", "", "highest locate price per share to accept")
	fs.StringVar(&c.maxCost, "max-cost", "", "highest total locate cost to accept")
	fs.BoolVar(&c.allowSingleUse, "allow-single-use", false, "allow the SingleUse side of a Reg SHO pair when it is cheaper")
	fs.BoolVarP(&c.yes, "yes", "y", false, "take a locate offer within policy and place the order without asking")
}

// orderFlags are an order's type, time in force, prices and route, as
// short and cover take them.
type orderFlags struct {
	typ, tif    string
	limit, stop string
	route       string
	// The fat-finger guard (workflow.Guard).
	maxDistance, maxNotional string
	force                    bool
}

func (f *orderFlags) register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.typ, "type", "limit", "order type: market, limit, stop or stop-limit")
	fs.StringVar(&f.tif, "tif", "day", "time in force: day, day-plus, gtc, gtc-plus (extended hours: limit orders only), ioc or fok (on routes that take them)")
	fs.StringVar(&f.limit, "limit-price", "", "limit price of the "+what+" (limit and stop-limit; up to 4 decimals, whole cents from $1.00)")
	fs.StringVar(&f.stop, "stop-price", "", "stop price of the "+what+" (stop and stop-limit)")
	fs.StringVar(&f.route, "route", "", "order route (see 'locator routes'); live accounts default to SMART")
	fs.StringVar(&f.maxDistance, "max-distance", "10", "fat-finger guard: refuse a limit or stop price further than this percentage from the symbol's last fill today")
	fs.StringVar(&f.maxNotional, "max-notional", "", "fat-finger guard: refuse an order whose shares × price is over this many dollars")
	fs.BoolVar(&f.force, "force", false, "send the order past the fat-finger guard")
}

// guard reads the fat-finger guard's flags.
func (f *orderFlags) guard() (workflow.Guard, error) {
	g := workflow.Guard{Force: f.force}
	pct, err := decimal.NewFromString(f.maxDistance)
	if err != nil || !pct.IsPositive() || pct.GreaterThan(decimal.NewFromInt(1000)) {
		return g, console.Usagef("--max-distance %q: want a percentage above 0 (10 is 10%%)", f.maxDistance)
	}
	g.MaxDistance = pct.Shift(-2)
	if f.maxNotional != "" {
		if g.MaxNotional, err = workflow.ParseCost("--max-notional", f.maxNotional); err != nil {
			return g, err
		}
	}
	return g, nil
}

// orderTypes and timesInForce map the flags' words to the spec's names.
var (
	orderTypes = map[string]brokerclient.OrderType{"market": brokerclient.OrderTypeMarket, "limit": brokerclient.OrderTypeLimit,
		"stop": brokerclient.OrderTypeStop, "stop-limit": brokerclient.OrderTypeStopLimit}
	timesInForce = map[string]brokerclient.TimeInForce{"day": brokerclient.TimeInForceDay, "day-plus": brokerclient.TimeInForceDayPlus,
		"gtc": brokerclient.TimeInForceGoodTillCancel, "gtc-plus": brokerclient.TimeInForceGTCPlus,
		"ioc": brokerclient.TimeInForceIOC, "fok": brokerclient.TimeInForceFOK}
)

// parse reads the flags; the account's owner checks the combination
// (engine's order rules) before anything is sent.
func (f *orderFlags) parse() (typ brokerclient.OrderType, tif brokerclient.TimeInForce, limit, stop decimal.Decimal, err error) {
	typ, ok := orderTypes[strings.ToLower(f.typ)]
	if !ok {
		return typ, tif, limit, stop, console.Usagef("--type %q: want market, limit, stop or stop-limit", f.typ)
	}
	if tif, ok = timesInForce[strings.ToLower(f.tif)]; !ok {
		return typ, tif, limit, stop, console.Usagef("--tif %q: want day, day-plus, gtc, gtc-plus, ioc or fok", f.tif)
	}
	if (typ == brokerclient.OrderTypeLimit || typ == brokerclient.OrderTypeStopLimit) && f.limit == "" {
		return typ, tif, limit, stop, console.Usagef("--limit-price is required: the order is a %s order", typ)
	}
	if (typ == brokerclient.OrderTypeStop || typ == brokerclient.OrderTypeStopLimit) && f.stop == "" {
		return typ, tif, limit, stop, console.Usagef("--stop-price is required: the order is a %s order", typ)
	}
	if f.limit != "" {
		if limit, err = workflow.ParsePrice("--limit-price", f.limit); err != nil {
			return typ, tif, limit, stop, err
		}
	}
	if f.stop != "" {
		stop, err = workflow.ParsePrice("--stop-price", f.stop)
	}
	return typ, tif, limit, stop, err
}

// parse reads the command line into the request (the account API checks
// it before anything is sent).
func (c *shortCommand) parse(args []string) (account.ShortRequest, error) {
	var r account.ShortRequest
	if len(args) != 2 {
		return r, console.Usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	var err error
	if r.Symbol, err = brokercode.Symbol(args[0]); err != nil {
		return r, err
	}
	qty, err := parseCount("quantity", args[1])
	if err != nil {
		return r, err
	}
	r.Quantity = qty
	typ, tif, limit, stop, err := c.order.parse()
	if err != nil {
		return r, err
	}
	r.OrderType, r.TimeInForce, r.Limit, r.Stop = string(typ), string(tif), limit, stop
	r.Route = c.order.route
	if r.Guard, err = c.order.guard(); err != nil {
		return r, err
	}
	r.Policy, err = parsePolicy(c.maxPrice, c.maxCost, c.allowSingleUse, c.yes)
	return r, err
}

// parseCount reads a whole number of shares, refusing what does not parse.
func parseCount(field, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, brokercode.Invalid(field, "%q: want a whole number of shares from 1 to %d", s, workflow.MaxOrderQuantity)
	}
	return n, nil
}

func (c *shortCommand) run(ctx context.Context, args []string) error {
	req, err := c.parse(args)
	if err != nil {
		return err
	}
	m := c.conn.m
	// A person at the terminal confirms the order and answers an offer
	// the policy leaves open; without one, --yes must let the policy
	// decide both.
	var ask func(context.Context, account.Question) bool
	if m.interactive(c.conn.format) {
		ask = m.asker(ctx)
	}
	req.Ask, req.Confirm = ask != nil && !req.Policy.AutoAccept, !c.yes
	if req.Confirm && ask == nil {
		return console.Usagef("the order needs a confirmation and nobody can give one here (no terminal, or not -o table): pass --yes; nothing was sent")
	}
	m.warnClosed()
	sess, err := c.conn.open(ctx, "short", ask, service.RoleCommand)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := account.ShortShowing(ctx, sess, req, console.Progress(console.Printer{W: m.Stderr}, m.display()))
	if res != nil && res.Locate != nil {
		fmt.Fprintf(m.Stderr, "locate %s %s: %s\n", res.Locate.Symbol, res.Locate.ID, account.OutcomeOf(res.Locate).Words)
	}
	if err != nil {
		if res != nil && (res.Locate != nil || res.Order != nil) {
			console.Short(c.conn.out(), sess.settings.Account, req, res)
		}
		return err
	}
	console.Short(c.conn.out(), sess.settings.Account, req, res)
	return console.Ended(account.ShortOutcome(res))
}
