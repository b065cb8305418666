// Order records: what the broker answers about orders (Order, its
// rejection, Fill, Route) and how loosely typed fields decode.

package brokerclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
)

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
