// Order placement requests: the enumerations, OrderRequest, its wire form
// and its validation before anything is sent.

package brokerclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
)

// Side is the order side. Trader intent is Side plus OpenClose; there is no
// short or cover side (spec: Orders rule 3).
type Side string

// Order sides (case-sensitive on the wire).
const (
	SideBuy  Side = "Buy"
	SideSell Side = "Sell"
)

// OrderType is the order type. Placement accepts only the four below, even
// when a route advertises more (spec: Orders rule 1).
type OrderType string

// Placeable order types (case-sensitive on the wire).
const (
	OrderTypeMarket    OrderType = "Market"
	OrderTypeLimit     OrderType = "Limit"
	OrderTypeStop      OrderType = "Stop"
	OrderTypeStopLimit OrderType = "StopLimit"
)

// SecurityType is the kind of instrument. Multi-leg is Mleg on placement and
// MLEG in routes and streams.
type SecurityType string

// Placeable security types (case-sensitive on the wire).
const (
	SecurityTypeStock  SecurityType = "Stock"
	SecurityTypeOption SecurityType = "Option"
	SecurityTypeMleg   SecurityType = "Mleg"
)

// TimeInForce is how long an order works. Day_Plus and GTC_Plus are the
// extended-hours values (Limit orders only); IOC and FOK are live only.
type TimeInForce string

// Values of timeInForce seen in the spec (Orders rule 2).
const (
	TimeInForceDay              TimeInForce = "Day"
	TimeInForceDayPlus          TimeInForce = "Day_Plus"
	TimeInForceGoodTillCancel   TimeInForce = "GoodTillCancel"
	TimeInForceGTCPlus          TimeInForce = "GTC_Plus"
	TimeInForceGoodTillCrossing TimeInForce = "GoodTillCrossing"
	TimeInForceIOC              TimeInForce = "IOC"
	TimeInForceFOK              TimeInForce = "FOK"
	TimeInForceAtTheOpening     TimeInForce = "AtTheOpening"
)

// OpenClose says whether an order opens or closes a position.
type OpenClose string

// openClose values; exactly these spellings are accepted.
const (
	OpenCloseOpen  OpenClose = "Open"
	OpenCloseClose OpenClose = "Close"
)

// Placement bounds from the public reference (spec: "Other bounds" and the
// reference notes): quantity range, client id length, price decimals. The
// symbol's are brokercode.ValidateSymbol's.
const (
	maxOrderQuantity  = 1_000_000
	maxClientOrderID  = 375
	maxPriceDecimals  = 4
	resolveGetWindow  = 2 * time.Second
	resolveGetSpacing = 500 * time.Millisecond
	maxHistoryDays    = 365
	maxHistoryLimit   = 100
	defaultHistDays   = 30
)

// OrderRequest is the body of an order placement (spec: Endpoints, Orders,
// POST .../order). Enumerated values are case-sensitive; prices go on the
// wire as JSON numbers with at most four decimals.
type OrderRequest struct {
	// ClientOrderID is the session-scoped deduplication key. Place generates
	// one (a UUID) when it is empty, so a lost answer can be settled with
	// ResolveOrder. Ids are consumed for good, even by rejected or cancelled
	// orders (R114): never reuse one.
	ClientOrderID string
	// Symbol is the uppercase ticker, or an OCC symbol for options.
	Symbol string
	// Side is Buy or Sell.
	Side Side
	// OpenClose is Open or Close; with Side it encodes the trader's intent.
	// Empty leaves it out: the service reads a stock order's intent from the
	// position (a Sell with no long position opens a short).
	OpenClose OpenClose
	// OrderType is Market, Limit, Stop or StopLimit.
	OrderType OrderType
	// SecurityType is Stock, Option or Mleg.
	SecurityType SecurityType
	// TimeInForce is one of the TimeInForce constants.
	TimeInForce TimeInForce
	// OrderQuantity is a whole number of shares or contracts, 1 to 1,000,000.
	OrderQuantity int64
	// LimitPrice is required for Limit and StopLimit.
	LimitPrice *decimal.Decimal
	// StopPrice is required for Stop and StopLimit (zero is sent and
	// rejected by the service with R24).
	StopPrice *decimal.Decimal
	// Route is a route name from Routes; required on live accounts (R54
	// otherwise), auto-assigned on paper when empty.
	Route string
	// Legs are the legs of a multi-leg (Mleg) order, sorted by strike
	// ascending.
	Legs []OrderLegRequest
}

// OrderLegRequest is one leg of a multi-leg placement: an OCC option symbol
// with its side and ratio. The spec does not show the leg structure; these
// are the simulator's fields, named after what order rows report per leg.
type OrderLegRequest struct {
	// Symbol is the leg's OCC option symbol (no padding).
	Symbol string `json:"symbol"`
	// Side is Buy or Sell.
	Side Side `json:"side"`
	// Ratio is the leg's contracts per order quantity; 0 leaves it out (1).
	Ratio int64 `json:"ratio,omitempty"`
}

// orderRequestWire is OrderRequest as sent: prices as JSON numbers.
type orderRequestWire struct {
	ClientOrderID string            `json:"clientOrderId"`
	Symbol        string            `json:"symbol"`
	Side          Side              `json:"side"`
	OpenClose     OpenClose         `json:"openClose,omitempty"`
	OrderType     OrderType         `json:"orderType"`
	SecurityType  SecurityType      `json:"securityType"`
	TimeInForce   TimeInForce       `json:"timeInForce"`
	OrderQuantity int64             `json:"orderQuantity"`
	LimitPrice    *json.Number      `json:"limitPrice,omitempty"`
	StopPrice     *json.Number      `json:"stopPrice,omitempty"`
	Route         string            `json:"route,omitempty"`
	Legs          []OrderLegRequest `json:"legs,omitempty"`
}

// MarshalJSON writes the request with the spec's key spellings and prices as
// JSON numbers (never through float64).
func (r OrderRequest) MarshalJSON() ([]byte, error) {
	num := func(d *decimal.Decimal) *json.Number {
		if d == nil {
			return nil
		}
		n := json.Number(d.String())
		return &n
	}
	return json.Marshal(orderRequestWire{
		ClientOrderID: r.ClientOrderID, Symbol: r.Symbol, Side: r.Side, OpenClose: r.OpenClose,
		OrderType: r.OrderType, SecurityType: r.SecurityType, TimeInForce: r.TimeInForce,
		OrderQuantity: r.OrderQuantity, LimitPrice: num(r.LimitPrice), StopPrice: num(r.StopPrice),
		Route: r.Route, Legs: r.Legs,
	})
}

// Validate checks the request the way the service's schema would, so a bad
// request gets a *brokercode.InputError and is never sent. It does not check what only
// the service knows (routes, quotes, buying power, session hours).
func (r *OrderRequest) Validate() error {
	if err := checkOrderSymbol("symbol", r.Symbol); err != nil {
		return err
	}
	if len(r.ClientOrderID) > maxClientOrderID {
		return brokercode.Invalid("clientOrderId", "at most %d characters, got %d", maxClientOrderID, len(r.ClientOrderID))
	}
	if r.OrderQuantity < 1 || r.OrderQuantity > maxOrderQuantity {
		return brokercode.Invalid("orderQuantity", "must be a whole number from 1 to %d, got %d", maxOrderQuantity, r.OrderQuantity)
	}
	if err := oneOf("side", r.Side, SideBuy, SideSell); err != nil {
		return err
	}
	if err := oneOf("orderType", r.OrderType, OrderTypeMarket, OrderTypeLimit, OrderTypeStop, OrderTypeStopLimit); err != nil {
		return err
	}
	if err := oneOf("securityType", r.SecurityType, SecurityTypeStock, SecurityTypeOption, SecurityTypeMleg); err != nil {
		return err
	}
	if err := oneOf("timeInForce", r.TimeInForce, TimeInForceDay, TimeInForceDayPlus, TimeInForceGoodTillCancel,
		TimeInForceGTCPlus, TimeInForceGoodTillCrossing, TimeInForceIOC, TimeInForceFOK, TimeInForceAtTheOpening); err != nil {
		return err
	}
	if r.OpenClose != "" {
		if err := oneOf("openClose", r.OpenClose, OpenCloseOpen, OpenCloseClose); err != nil {
			return err
		}
	}
	if err := checkPrice("limitPrice", r.LimitPrice); err != nil {
		return err
	}
	if err := checkPrice("stopPrice", r.StopPrice); err != nil {
		return err
	}
	if (r.OrderType == OrderTypeLimit || r.OrderType == OrderTypeStopLimit) && r.LimitPrice == nil {
		return brokercode.Invalid("limitPrice", "required for %s orders", r.OrderType)
	}
	if (r.OrderType == OrderTypeStop || r.OrderType == OrderTypeStopLimit) && r.StopPrice == nil {
		return brokercode.Invalid("stopPrice", "required for %s orders", r.OrderType)
	}
	if strings.ContainsAny(r.Route, "\r\n") {
		return brokercode.Invalid("route", "must be a route name from the routes endpoint")
	}
	if r.SecurityType == SecurityTypeMleg {
		return checkLegs(r.Legs)
	}
	if len(r.Legs) > 0 {
		return brokercode.Invalid("legs", "only multi-leg (Mleg) orders carry legs")
	}
	return nil
}

// checkLegs requires two or more legs with valid symbols and sides, in
// ascending strike order when the symbols are OCC symbols.
func checkLegs(legs []OrderLegRequest) error {
	if len(legs) < 2 {
		return brokercode.Invalid("legs", "a multi-leg order needs at least two legs, got %d", len(legs))
	}
	var prev decimal.Decimal
	for i, l := range legs {
		field := fmt.Sprintf("legs[%d]", i)
		if err := checkOrderSymbol(field+".symbol", l.Symbol); err != nil {
			return err
		}
		if err := oneOf(field+".side", l.Side, SideBuy, SideSell); err != nil {
			return err
		}
		if l.Ratio < 0 {
			return brokercode.Invalid(field+".ratio", "must not be negative")
		}
		if strike, ok := occStrike(l.Symbol); ok {
			if i > 0 && strike.LessThan(prev) {
				return brokercode.Invalid("legs", "legs must be sorted by strike ascending (leg %d strike %s after %s)", i, strike, prev)
			}
			prev = strike
		}
	}
	return nil
}

// occSymbolRE is an OCC option symbol without padding: root, YYMMDD, C or P,
// strike times 1000 in eight digits.
var occSymbolRE = regexp.MustCompile(`^[A-Z0-9.]{1,6}\d{6}[CP](\d{8})$`)

func occStrike(sym string) (decimal.Decimal, bool) {
	m := occSymbolRE.FindStringSubmatch(sym)
	if m == nil {
		return decimal.Decimal{}, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return decimal.Decimal{}, false
	}
	return decimal.New(n, -3), true
}

// checkOrderSymbol applies the one symbol rule (brokercode.ValidateSymbol)
// to an order's symbol or a leg's, naming field in the error.
func checkOrderSymbol(field, sym string) error {
	err := brokercode.ValidateSymbol(sym)
	var ie *brokercode.InputError
	if errors.As(err, &ie) {
		ie.Field = field
	}
	return err
}

// oneOf checks an enumerated value against its exact, case-sensitive set.
func oneOf[T ~string](field string, v T, allowed ...T) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	if v == "" {
		return brokercode.Invalid(field, "required, one of %s", strings.Join(names, ", "))
	}
	for _, a := range allowed {
		if strings.EqualFold(string(v), string(a)) {
			return brokercode.Invalid(field, "%q is case-sensitive: send %q", string(v), string(a))
		}
	}
	return brokercode.Invalid(field, "%q is not one of %s", string(v), strings.Join(names, ", "))
}

// checkPrice allows nil; otherwise the price must be non-negative with at
// most four decimals (venues enforce the tick size themselves).
func checkPrice(field string, p *decimal.Decimal) error {
	if p == nil {
		return nil
	}
	if p.IsNegative() {
		return brokercode.Invalid(field, "must not be negative, got %s", p)
	}
	if !p.Equal(p.Truncate(maxPriceDecimals)) {
		return brokercode.Invalid(field, "at most %d decimal places, got %s", maxPriceDecimals, p)
	}
	return nil
}
