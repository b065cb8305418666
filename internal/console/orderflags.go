package console

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/workflow"
)

// The inputs of locates and orders as the command line gives them: each
// read and checked before anything is recorded or sent.

// ParseSymbolQty reads and checks one SYMBOL QTY pair (the domain's rules:
// nothing is recorded or sent for a bad one).
func ParseSymbolQty(args []string) (string, int64, error) {
	if len(args) != 2 {
		return "", 0, Usagef("want SYMBOL QTY, got %d argument(s)", len(args))
	}
	symbol, err := brokercode.Symbol(args[0])
	if err != nil {
		return "", 0, err
	}
	qty, err := workflow.ParseQuantity(args[1])
	return symbol, qty, err
}

// ParsePolicy reads the cost-policy flags; --yes or a cap lets the policy
// decide alone, otherwise a person at the terminal is asked.
func ParsePolicy(maxPrice, maxCost string, allowSingleUse, yes bool) (workflow.Policy, error) {
	p := workflow.Policy{AllowSingleUse: allowSingleUse, AutoAccept: yes}
	var err error
	if p.MaxPrice, err = workflow.ParsePrice("--max-price", maxPrice); err != nil {
		return p, err
	}
	if p.MaxCost, err = workflow.ParseCost("--max-cost", maxCost); err != nil {
		return p, err
	}
	p.AutoAccept = p.AutoAccept || p.Capped()
	return p, nil
}

// OrderFlags are an order's type, time in force, prices and route, as
// short and cover take them.
type OrderFlags struct {
	Type, TIF   string
	Limit, Stop string
	Route       string
	// The fat-finger guard (workflow.Guard).
	MaxDistance, MaxNotional, RefPrice string
	Force                              bool
}

// Register declares the flags on fs; what is the order's side in their help
// (sell, buy).
func (f *OrderFlags) Register(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.Type, "type", "limit", "order type: market, limit, stop or stop-limit")
	fs.StringVar(&f.TIF, "tif", "day", "time in force: day, day-plus, gtc, gtc-plus (extended hours: limit orders only), ioc or fok (on routes that take them)")
	fs.StringVar(&f.Limit, "limit-price", "", "limit price of the "+what+" (limit and stop-limit; up to 4 decimals, whole cents from $1.00)")
	fs.StringVar(&f.Stop, "stop-price", "", "stop price of the "+what+" (stop and stop-limit)")
	fs.StringVar(&f.Route, "route", "", "order route (see 'locator routes'); live accounts default to SMART")
	fs.StringVar(&f.MaxDistance, "max-distance", "10", "fat-finger guard: refuse a limit or stop price further than this percentage from the symbol's reference price (its position's price, its last fill today, its last close)")
	fs.StringVar(&f.RefPrice, "ref-price", "", "fat-finger guard: the symbol's market price as you know it, the reference when the broker shows none")
	fs.StringVar(&f.MaxNotional, "max-notional", "", "fat-finger guard: refuse an order whose shares × price is over this many dollars")
	fs.BoolVar(&f.Force, "force", false, "send the order past the fat-finger guard")
}

// Guard reads the fat-finger guard's flags.
func (f *OrderFlags) Guard() (workflow.Guard, error) {
	g := workflow.Guard{Force: f.Force}
	var err error
	if g.MaxDistance, err = workflow.ParseDistance("--max-distance", f.MaxDistance); err != nil {
		return g, err
	}
	if f.MaxNotional != "" {
		if g.MaxNotional, err = workflow.ParseCost("--max-notional", f.MaxNotional); err != nil {
			return g, err
		}
	}
	if f.RefPrice != "" {
		if g.RefPrice, err = workflow.ParsePrice("--ref-price", f.RefPrice); err != nil {
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

// Parse reads the flags; the account's owner checks the combination
// (engine's order rules) before anything is sent.
func (f *OrderFlags) Parse() (typ brokerclient.OrderType, tif brokerclient.TimeInForce, limit, stop decimal.Decimal, err error) {
	typ, ok := orderTypes[strings.ToLower(f.Type)]
	if !ok {
		return typ, tif, limit, stop, Usagef("--type %q: want market, limit, stop or stop-limit", f.Type)
	}
	if tif, ok = timesInForce[strings.ToLower(f.TIF)]; !ok {
		return typ, tif, limit, stop, Usagef("--tif %q: want day, day-plus, gtc, gtc-plus, ioc or fok", f.TIF)
	}
	if (typ == brokerclient.OrderTypeLimit || typ == brokerclient.OrderTypeStopLimit) && f.Limit == "" {
		return typ, tif, limit, stop, Usagef("--limit-price is required: the order is a %s order", typ)
	}
	if (typ == brokerclient.OrderTypeStop || typ == brokerclient.OrderTypeStopLimit) && f.Stop == "" {
		return typ, tif, limit, stop, Usagef("--stop-price is required: the order is a %s order", typ)
	}
	if f.Limit != "" {
		if limit, err = workflow.ParsePrice("--limit-price", f.Limit); err != nil {
			return typ, tif, limit, stop, err
		}
	}
	if f.Stop != "" {
		stop, err = workflow.ParsePrice("--stop-price", f.Stop)
	}
	return typ, tif, limit, stop, err
}

// ParseCount reads a whole number of shares, refusing what does not parse.
func ParseCount(field, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, brokercode.Invalid(field, "%q: want a whole number of shares from 1 to %d", s, workflow.MaxOrderQuantity)
	}
	return n, nil
}
