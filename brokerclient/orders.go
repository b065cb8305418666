package brokerclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
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

// RouteName is an order row's route. Rows rejected during validation may
// carry a placeholder instead of a name (spec: Order rejection rule 4); any
// value that is not a string decodes as "".
type RouteName string

// UnmarshalJSON accepts a string and reads anything else as no route.
func (r *RouteName) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*r = RouteName(s)
		return nil
	}
	*r = ""
	return nil
}

// LooseString is a field whose type the spec does not show: a string is
// kept as is, null as "", and any other JSON value as its literal text
// (numbers keep their exact digits).
type LooseString string

// UnmarshalJSON accepts any JSON value.
func (s *LooseString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var v string
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = ""
	case json.Unmarshal(b, &v) == nil:
		*s = LooseString(v)
	default:
		*s = LooseString(b)
	}
	return nil
}

// Order is an order record (spec: Resources, "Order record", with the
// reference's fields). Identification is by ClientOrderID only; read
// OrderStatus after every 200 and use the ClientOrderID from the response,
// which the service may have rewritten (R118).
type Order struct {
	AccountID        string `json:"accountId"`
	CanceledQuantity int64  `json:"canceledQuantity"`
	ClientOrderID    string `json:"clientOrderId"`
	// Executed is the quantity filled so far.
	Executed     int64           `json:"executed"`
	LastPrice    decimal.Decimal `json:"lastPrice"`
	LastQuantity int64           `json:"lastQuantity"`
	// LastUpdated is the time of the last state change.
	LastUpdated    Time            `json:"lastUpdated"`
	LeavesQuantity int64           `json:"leavesQuantity"`
	LegCount       int             `json:"legCount"`
	Legs           []OrderLeg      `json:"legs,omitempty"`
	LimitPrice     decimal.Decimal `json:"limitPrice"`
	// MaintenanceRequirement and MarginRequirement are always 0 on order rows.
	MaintenanceRequirement decimal.Decimal        `json:"maintenanceRequirement"`
	MarginRequirement      decimal.Decimal        `json:"marginRequirement"`
	MaxDisplayQuantity     int64                  `json:"maxDisplayQuantity"`
	OpenClose              OpenClose              `json:"openClose"`
	OrderQuantity          int64                  `json:"orderQuantity"`
	OrderStatus            brokercode.OrderStatus `json:"orderStatus"`
	OrderType              OrderType              `json:"orderType"`
	PegDifference          decimal.Decimal        `json:"pegDifference"`
	// PegOffsetType is reported by the reference without a type.
	PegOffsetType LooseString     `json:"pegOffsetType"`
	PriceAvg      decimal.Decimal `json:"priceAvg"`
	// PriceStop is the stop price (stopPrice on placement).
	PriceStop    decimal.Decimal `json:"priceStop"`
	Route        RouteName       `json:"route"`
	SecurityType SecurityType    `json:"securityType"`
	Side         Side            `json:"side"`
	// StartTime is the submission time.
	StartTime   Time            `json:"startTime"`
	StrikePrice decimal.Decimal `json:"strikePrice"`
	Symbol      string          `json:"symbol"`
	// Text is the rejection reason: nil when the service sent null, which
	// differs from an empty string.
	Text         *string     `json:"text"`
	TimeInForce  TimeInForce `json:"timeInForce"`
	TradedSymbol string      `json:"tradedSymbol"`
}

// OrderLeg is one leg of a multi-leg order row.
type OrderLeg struct {
	AvgPx  decimal.Decimal `json:"avgPx"`
	CxlQty int64           `json:"cxlQty"`
	Index  int             `json:"index"`
	LastPx decimal.Decimal `json:"lastPx"`
	// LastQty is lastQuantity's name on legs.
	LastQty int64  `json:"lastQty"`
	LvsQty  int64  `json:"lvsQty"`
	Qty     int64  `json:"qty"`
	Side    Side   `json:"side"`
	Symbol  string `json:"symbol"`
}

// IsTerminal reports whether the order is Filled, Canceled, Expired or
// Rejected.
func (o *Order) IsTerminal() bool { return o.OrderStatus.Terminal() }

// ErrOrderRejected matches every *OrderRejection.
var ErrOrderRejected = errors.New("order rejected")

// OrderRejection is the reason of a business rejection (HTTP 200, orderStatus
// Rejected), parsed from text (spec: Errors, "Order rejection codes"). It is
// an error, so callers can return it.
type OrderRejection struct {
	// ClientOrderID is the id the service reports, possibly rewritten.
	ClientOrderID string
	// Code is the R-code at the start of Text ("R114", "R06"); "" when the
	// text carries none (broker rejections, null text).
	Code string
	// Text is the raw text: nil when the service sent null (a risk check
	// with no surfaced code, or R118 with an explicit route).
	Text *string
	// BrokerRejected is set when the text begins "Rejected: Broker
	// Rejected" (the venue declined).
	BrokerRejected bool
}

func (r *OrderRejection) Error() string {
	reason := "no reason given"
	if r.Text != nil && *r.Text != "" {
		reason = *r.Text
	}
	return fmt.Sprintf("brokerclient: order %s rejected: %s", r.ClientOrderID, reason)
}

// Is reports ErrOrderRejected.
func (r *OrderRejection) Is(target error) bool { return target == ErrOrderRejected }

// rejectionCodeRE is the spec's pattern: R followed by digits, at the start.
var rejectionCodeRE = regexp.MustCompile(`^R[0-9]+`)

// Rejection returns the rejection reason, or nil unless the order is
// Rejected. Read it before anything else: never cancel a Rejected order,
// since the cancel overwrites text with R130 (spec: rejection rule 3).
func (o *Order) Rejection() *OrderRejection {
	if o == nil || o.OrderStatus != brokercode.OrderStatusRejected {
		return nil
	}
	r := &OrderRejection{ClientOrderID: o.ClientOrderID}
	if o.Text != nil {
		t := *o.Text
		r.Text = &t
		trimmed := strings.TrimLeft(t, " \t")
		r.Code = rejectionCodeRE.FindString(trimmed)
		r.BrokerRejected = strings.HasPrefix(trimmed, "Rejected: Broker Rejected")
	}
	return r
}

// Fill is one execution row of the order archive or of the paginated
// trading history (spec: Resources, "Fill row", with the reference's
// fields). Rows carry no clientOrderId and no orderStatus. ExecTime may be
// a bare local time (ExecTime.NoZone): sort by TradeDate instead.
type Fill struct {
	AccountID string `json:"accountId"`
	// Canceled is the reference's cancel flag of the row.
	Canceled      bool            `json:"canceled"`
	Commission    decimal.Decimal `json:"commission"`
	Currency      string          `json:"currency"`
	EntryDate     Time            `json:"entryDate"`
	ExecTime      Time            `json:"execTime"`
	GrossProceeds decimal.Decimal `json:"grossProceeds"`
	// MLegID ties the legs of a multi-leg execution together.
	MLegID       ID              `json:"mLegId"`
	NetProceeds  decimal.Decimal `json:"netProceeds"`
	Notes        string          `json:"notes"`
	Price        decimal.Decimal `json:"price"`
	Qty          int64           `json:"qty"`
	SecurityType SecurityType    `json:"securityType"`
	SettleDate   Time            `json:"settleDate"`
	Side         Side            `json:"side"`
	SpreadType   string          `json:"spreadType"`
	Symbol       string          `json:"symbol"`
	TotalFees    decimal.Decimal `json:"totalFees"`
	TradeDate    Time            `json:"tradeDate"`
	// TradeID arrives as a JSON number, possibly above 2^53; the digits are
	// kept exactly.
	TradeID ID `json:"tradeId"`
}

// Route is one row of the routes endpoint (spec: Resources, "Route record";
// the reference names the time-in-force list timesInForce).
type Route struct {
	RouteName string `json:"routeName"`
	// SecurityTypes spells multi-leg MLEG.
	SecurityTypes []SecurityType `json:"securityTypes"`
	// OrderTypes may list more than the four placeable types.
	OrderTypes    []OrderType   `json:"orderTypes"`
	TimesInForce  []TimeInForce `json:"timesInForce"`
	UseDisplayQty bool          `json:"useDisplayQty"`
}

// Allows reports whether the route lists the security type (Mleg matching
// MLEG), the order type and the time in force. An empty argument is not
// checked.
func (r Route) Allows(st SecurityType, ot OrderType, tif TimeInForce) bool {
	return listsFold(r.SecurityTypes, st) && listsFold(r.OrderTypes, ot) && listsFold(r.TimesInForce, tif)
}

// listsFold reports whether v is empty or in list, ignoring case.
func listsFold[T ~string](list []T, v T) bool {
	if v == "" {
		return true
	}
	for _, x := range list {
		if strings.EqualFold(string(x), string(v)) {
			return true
		}
	}
	return false
}

// HistoryOptions selects the paginated trading history.
type HistoryOptions struct {
	// Symbol filters to one symbol; empty means all.
	Symbol string
	// Days is the window length from the start date (numberOfDays; default
	// 30). Windows longer than the service's 365 days are read as
	// consecutive windows of at most 365 days.
	Days int
	// Limit is the page size (default and maximum 100).
	Limit int
}

// accountBase is /v1/api/accounts/{accountId}, the prefix of the order,
// position and P&L endpoints, after checking the id.
func accountBase(accountID string) (string, error) {
	seg, err := accountSegment(accountID)
	if err != nil {
		return "", err
	}
	return "/v1/api/accounts/" + seg, nil
}

// checkOrderID checks a clientOrderId going into a path.
func checkOrderID(id string) error {
	switch {
	case id == "":
		return brokercode.Invalid("clientOrderId", "must not be empty")
	case id == "." || id == "..":
		return brokercode.Invalid("clientOrderId", "%q is not an order id", id)
	case len(id) > maxClientOrderID+64: // rewritten ids (R118) carry a suffix
		return brokercode.Invalid("clientOrderId", "too long (%d characters)", len(id))
	case strings.ContainsAny(id, "/\r\n"):
		return brokercode.Invalid("clientOrderId", "%q must not contain '/' or line breaks", id)
	}
	return nil
}

// Place sends an order. It is never retried except after a 429 (which the
// service answers without processing): when the answer is lost the error is
// an *OutcomeUnknownError carrying the client order id, to settle with
// ResolveOrder, never by sending again. A 200 may still be a rejection:
// check Order.Rejection. A schema failure is a 400 *ErrorResponse with Lines.
//
// Spec: POST /v1/api/accounts/{accountId}/order.
func (s *OrdersService) Place(ctx context.Context, accountID string, req OrderRequest) (*Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if req.ClientOrderID == "" {
		req.ClientOrderID = uuid.NewString()
	}
	if err := req.Validate(); err != nil {
		return nil, nil, err
	}
	var out Order
	resp, err := s.client.do(ctx, call{
		method: "POST", path: base + "/order", body: req,
		route: routeOrderPlace, retry: retryNever, clientID: req.ClientOrderID, op: "place order",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// Get returns one of today's orders by client order id. A just-placed order
// may answer 404 until it is registered; a rejected order may stay 404 and
// exist only in the book (see ResolveOrder).
//
// Spec: GET /v1/api/accounts/{accountId}/order/{clientOrderId}.
func (s *OrdersService) Get(ctx context.Context, accountID, clientOrderID string) (*Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOrderID(clientOrderID); err != nil {
		return nil, nil, err
	}
	var out Order
	resp, err := s.client.do(ctx, call{
		method: "GET", path: base + "/order/" + pathEscape(clientOrderID),
		route: routeOrderGet, op: "get order",
	}, &out)
	if err != nil {
		return nil, resp, err
	}
	return &out, resp, nil
}

// Book returns today's order book: every order of the session in any state,
// plus still-working multi-day orders. The reference documents a bare array;
// an object with an array inside is accepted too.
//
// Spec: GET /v1/api/accounts/{accountId}/orders.
func (s *OrdersService) Book(ctx context.Context, accountID string) ([]Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	var raw json.RawMessage
	resp, err := s.client.do(ctx, call{
		method: "GET", path: base + "/orders", route: routeOrdersBook, op: "get order book",
	}, &raw)
	if err != nil {
		return nil, resp, err
	}
	orders, err := decodeArrayOrEnvelope[Order]("get order book", raw, "orders")
	return orders, resp, err
}

// Fills returns up to one week of executions from startDate (the archive;
// paper answers an empty list). startDate is read as a calendar date in its
// own location.
//
// Spec: GET /v1/api/accounts/{accountId}/orders/start-date/{date}.
func (s *OrdersService) Fills(ctx context.Context, accountID string, startDate time.Time) ([]Fill, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if startDate.IsZero() {
		return nil, nil, brokercode.Invalid("startDate", "required")
	}
	var raw json.RawMessage
	resp, err := s.client.do(ctx, call{
		method: "GET", path: base + "/orders/start-date/" + startDate.Format(time.DateOnly),
		route: routeOrdersArchive, op: "get fills",
	}, &raw)
	if err != nil {
		return nil, resp, err
	}
	fills, err := decodeArrayOrEnvelope[Fill]("get fills", raw, "orders")
	return fills, resp, err
}

// historyPage is the paginated history envelope.
type historyPage struct {
	Pagination struct {
		CurrentLimit  int   `json:"currentLimit"`
		CurrentOffset int   `json:"currentOffset"`
		TotalRecords  int64 `json:"totalRecords"`
	} `json:"pagination"`
	TradingHistory []Fill `json:"tradingHistory"`
}

// History iterates over the trading history from start, up to one year back
// on live accounts, page by page: offset rises by the page limit while
// offset + rows < totalRecords. A window longer than 365 days is read as
// consecutive windows of at most 365 days. The first error is yielded with a
// zero Fill and ends the sequence; stopping the loop early stops the reads.
//
// Spec: GET /v1/api/accounts/{accountId}/orders-with-pagination/start-date/{date}.
func (s *OrdersService) History(ctx context.Context, accountID string, start time.Time, opts *HistoryOptions) iter.Seq2[Fill, error] {
	return func(yield func(Fill, error) bool) {
		fail := func(err error) { yield(Fill{}, err) }
		base, err := accountBase(accountID)
		if err != nil {
			fail(err)
			return
		}
		var o HistoryOptions
		if opts != nil {
			o = *opts
		}
		switch {
		case start.IsZero():
			fail(brokercode.Invalid("start", "required"))
			return
		case o.Days < 0:
			fail(brokercode.Invalid("numberOfDays", "must not be negative, got %d", o.Days))
			return
		case o.Limit < 0 || o.Limit > maxHistoryLimit:
			fail(brokercode.Invalid("limit", "must be 1 to %d, got %d", maxHistoryLimit, o.Limit))
			return
		}
		if o.Symbol != "" {
			if err := checkOrderSymbol("symbol", o.Symbol); err != nil {
				fail(err)
				return
			}
		}
		if o.Days == 0 {
			o.Days = defaultHistDays
		}
		if o.Limit == 0 {
			o.Limit = maxHistoryLimit
		}
		for day := 0; day < o.Days; day += maxHistoryDays {
			window := min(o.Days-day, maxHistoryDays)
			from := start.AddDate(0, 0, day)
			path := base + "/orders-with-pagination/start-date/" + from.Format(time.DateOnly)
			for offset := 0; ; {
				q := url.Values{}
				q.Set("numberOfDays", strconv.Itoa(window))
				q.Set("offset", strconv.Itoa(offset))
				q.Set("limit", strconv.Itoa(o.Limit))
				if o.Symbol != "" {
					q.Set("symbol", o.Symbol)
				}
				var page historyPage
				if _, err := s.client.do(ctx, call{
					method: "GET", path: path, query: q,
					route: routeOrdersPaginated, op: "get trading history",
				}, &page); err != nil {
					fail(err)
					return
				}
				for _, f := range page.TradingHistory {
					if !yield(f, nil) {
						return
					}
				}
				rows := len(page.TradingHistory)
				if rows == 0 || int64(offset+rows) >= page.Pagination.TotalRecords {
					break
				}
				step := o.Limit
				if page.Pagination.CurrentLimit > 0 && page.Pagination.CurrentLimit < step {
					step = page.Pagination.CurrentLimit // the service clamped the limit
				}
				offset += step
			}
		}
	}
}

// Cancel cancels a working order and returns it. Cancelling is safe to
// repeat, so transport errors and 5xx are retried; if a retry meets the 404
// of an order the first attempt already cancelled, the order is read back
// and returned. A Rejected order answers 200 with text overwritten by R130
// (read its reason first); Filled, Canceled and Expired orders answer 404
// (ErrNotFound), as does an order not yet registered.
//
// Spec: DELETE /v1/api/accounts/{accountId}/orders/{clientOrderId}.
func (s *OrdersService) Cancel(ctx context.Context, accountID, clientOrderID string) (*Order, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOrderID(clientOrderID); err != nil {
		return nil, nil, err
	}
	var out Order
	resp, err := s.client.do(ctx, call{
		method: "DELETE", path: base + "/orders/" + pathEscape(clientOrderID),
		route: routeOrderCancel, retry: retryRead, op: "cancel order",
	}, &out)
	if err != nil {
		if resp != nil && resp.Attempts > 1 && errors.Is(err, ErrNotFound) {
			if o, _, gerr := s.Get(ctx, accountID, clientOrderID); gerr == nil && o.OrderStatus == brokercode.OrderStatusCanceled {
				return o, resp, nil
			}
		}
		return nil, resp, err
	}
	return &out, resp, nil
}

// CancelAll asks the service to cancel every open order of the account, or
// only those on symbol when it is not empty, and returns the service's
// message. The answer confirms acceptance only, even when nothing was open:
// read the book to see the outcome. Like a single cancel it is safe to
// repeat, so transport errors and 5xx are retried.
//
// Spec: DELETE /v1/api/accounts/orders (form body account; query symbol).
func (s *OrdersService) CancelAll(ctx context.Context, accountID, symbol string) (string, *Response, error) {
	if _, err := accountSegment(accountID); err != nil {
		return "", nil, err
	}
	var q url.Values
	if symbol != "" {
		if err := checkOrderSymbol("symbol", symbol); err != nil {
			return "", nil, err
		}
		q = url.Values{"symbol": {symbol}}
	}
	var out struct {
		Message string `json:"message"`
	}
	resp, err := s.client.do(ctx, call{
		method: "DELETE", path: "/v1/api/accounts/orders", query: q,
		body:  formBody(url.Values{"account": {accountID}}),
		route: routeOrdersCancelAll, retry: retryRead, op: "cancel all orders",
	}, &out)
	if err != nil {
		return "", resp, err
	}
	return out.Message, resp, nil
}

// Routes returns the routes available to the account. The live set varies
// by subscription: always query it rather than assuming names.
//
// Spec: GET /v1/api/accounts/{accountId}/routes.
func (s *OrdersService) Routes(ctx context.Context, accountID string) ([]Route, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	var raw json.RawMessage
	resp, err := s.client.do(ctx, call{
		method: "GET", path: base + "/routes", route: routeRoutes, op: "get routes",
	}, &raw)
	if err != nil {
		return nil, resp, err
	}
	routes, err := decodeArrayOrEnvelope[Route]("get routes", raw, "routes")
	return routes, resp, err
}

// EasyToBorrow reports whether symbol is on the platform-wide easy-to-borrow
// list (exact, case-sensitive; typos answer false; always true on paper).
// The symbol must pass brokercode.ValidateSymbol: an empty one, a lone dot or
// one holding '/' would reach the router's 404 instead of the check.
//
// Spec: GET /v1/api/accounts/{accountId}/is-easy-to-borrow/symbol/{symbol}.
func (s *OrdersService) EasyToBorrow(ctx context.Context, accountID, symbol string) (bool, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return false, nil, err
	}
	if err := brokercode.ValidateSymbol(symbol); err != nil {
		return false, nil, err
	}
	var out struct {
		IsEasyToBorrow bool `json:"isEasyToBorrow"`
	}
	resp, err := s.client.do(ctx, call{
		method: "GET", path: base + "/is-easy-to-borrow/symbol/" + pathEscape(symbol),
		route: routeEasyToBorrow, op: "is easy to borrow",
	}, &out)
	if err != nil {
		return false, resp, err
	}
	return out.IsEasyToBorrow, resp, nil
}

// ErrNeverRegistered matches an *UnregisteredOrderError.
var ErrNeverRegistered = errors.New("order never registered")

// UnregisteredOrderError is ResolveOrder's answer when the order is neither
// readable by id nor in today's book: the placement never registered. It is
// safe to place again, under a NEW client order id (ids are consumed, R114).
type UnregisteredOrderError struct {
	AccountID     string
	ClientOrderID string
}

func (e *UnregisteredOrderError) Error() string {
	return fmt.Sprintf("brokerclient: order %s on %s was never registered (place again under a new id)", e.ClientOrderID, e.AccountID)
}

// Is reports ErrNeverRegistered and ErrNotFound.
func (e *UnregisteredOrderError) Is(target error) bool {
	return target == ErrNeverRegistered || target == ErrNotFound
}

// ResolveOrder settles an *OutcomeUnknownError from Place. It reads the
// order by id, retrying the "404 until registered" for about two seconds of
// clock time, 500 ms apart; then it scans today's book for the id or for the
// id the service rewrote on an R118 rejection (clientOrderId + "INVALID" +
// a timestamp), since a rejected order may exist only in the book. It
// returns the order, or an *UnregisteredOrderError (errors.Is
// ErrNeverRegistered) when the placement never registered.
//
// Spec: GET .../order/{clientOrderId}, then GET .../orders.
func (s *OrdersService) ResolveOrder(ctx context.Context, accountID, clientOrderID string) (*Order, *Response, error) {
	if _, err := accountBase(accountID); err != nil {
		return nil, nil, err
	}
	if err := checkOrderID(clientOrderID); err != nil {
		return nil, nil, err
	}
	clk := s.client.clock
	deadline := clk.Now().Add(resolveGetWindow)
	for {
		o, resp, err := s.Get(ctx, accountID, clientOrderID)
		if err == nil {
			return o, resp, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, resp, err
		}
		if !clk.Now().Before(deadline) {
			break
		}
		if err := clock.Sleep(ctx, clk, resolveGetSpacing); err != nil {
			return nil, resp, err
		}
	}
	book, resp, err := s.Book(ctx, accountID)
	if err != nil {
		return nil, resp, err
	}
	var rewritten *Order
	for i := range book {
		switch id := book[i].ClientOrderID; {
		case id == clientOrderID:
			return &book[i], resp, nil
		case rewritten == nil && strings.HasPrefix(id, clientOrderID+"INVALID"):
			rewritten = &book[i]
		}
	}
	if rewritten != nil {
		return rewritten, resp, nil
	}
	return nil, resp, &UnregisteredOrderError{AccountID: accountID, ClientOrderID: clientOrderID}
}

// Spec "Orders": how far back the fill archive reaches ("up to one week")
// and the paginated history ("up to one year").
const (
	archiveDays = 7
	historyDays = 365
)

// FillsSince returns the fills from since (a trade date) to today: the
// one-week archive for a recent date, the paginated one-year history for
// an older one. A date more than a year back is refused (nothing sent).
func (s *OrdersService) FillsSince(ctx context.Context, accountID string, since, today time.Time) ([]Fill, error) {
	ago := int(today.Sub(since).Hours() / 24)
	if ago > historyDays {
		return nil, brokercode.Invalid("since", "%s: the broker keeps one year of order history; pick a date since %s",
			since.Format(time.DateOnly), today.AddDate(0, 0, -historyDays).Format(time.DateOnly))
	}
	if ago <= archiveDays {
		fills, _, err := s.Fills(ctx, accountID, since)
		return fills, err
	}
	var fills []Fill
	for f, err := range s.History(ctx, accountID, since, &HistoryOptions{Days: ago + 1}) {
		if err != nil {
			return nil, err
		}
		fills = append(fills, f)
	}
	return fills, nil
}
