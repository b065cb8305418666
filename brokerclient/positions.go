package brokerclient

import (
	"context"
	"encoding/json"
	"net/url"
	"reflect"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
)

// PositionSide is the side of an open position.
type PositionSide string

// Sides of an open position, as the reference spells them.
const (
	PositionLong  PositionSide = "Long"
	PositionShort PositionSide = "Short"
)

// Position is an open position (spec: Resources, "Position records", with
// the reference's fields). It carries no P&L: Unrealized computes it from
// the prices, and the P&L endpoint's rows join on PositionID.
type Position struct {
	AccountID   string `json:"accountId"`
	CreatedDate Time   `json:"createdDate"`
	// DayOvernight tells a position opened today from one carried over.
	DayOvernight string `json:"dayOvernight"`
	// PositionID is the lot id the P&L rows join on.
	PositionID ID              `json:"positionId"`
	PriceAvg   decimal.Decimal `json:"priceAvg"`
	PriceClose decimal.Decimal `json:"priceClose"`
	PriceOpen  decimal.Decimal `json:"priceOpen"`
	// PriceStrike and PutCall describe options.
	PriceStrike  decimal.Decimal `json:"priceStrike"`
	PutCall      string          `json:"putCall"`
	RootSymbol   string          `json:"rootSymbol"`
	SecurityType SecurityType    `json:"securityType"`
	Shares       int64           `json:"shares"`
	Side         PositionSide    `json:"side"`
	Symbol       string          `json:"symbol"`
	// TradedSymbol is the symbol as traded (options).
	TradedSymbol string `json:"tradedSymbol"`
	UpdatedDate  Time   `json:"updatedDate"`
}

// IsShort reports whether the position is short: side Short, or negative
// shares when the side is missing.
func (p Position) IsShort() bool {
	if p.Side != "" {
		return p.Side == PositionShort
	}
	return p.Shares < 0
}

// Unrealized is the open P&L the reference describes: (priceClose −
// priceAvg) × shares for a long, the reverse for a short. Option contract
// multipliers are not applied.
func (p Position) Unrealized() decimal.Decimal {
	shares := decimal.NewFromInt(p.Shares).Abs()
	diff := p.PriceClose.Sub(p.PriceAvg)
	if p.IsShort() {
		diff = diff.Neg()
	}
	return diff.Mul(shares)
}

// ClosedPosition is a closed-position lifecycle row (under
// closedPositions). Fields the spec does not name are kept in Extra.
type ClosedPosition struct {
	// PositionID arrives as a JSON number that may exceed 2^53; the digits
	// are kept exactly.
	PositionID   ID           `json:"positionId"`
	AccountID    string       `json:"accountId,omitempty"`
	Symbol       string       `json:"symbol"`
	SecurityType SecurityType `json:"securityType,omitempty"`
	// SharesIn and SharesOut are the shares that opened and closed the position.
	SharesIn  int64 `json:"sharesIn"`
	SharesOut int64 `json:"sharesOut"`
	// PriceOpen and PriceClose are blended prices.
	PriceOpen  decimal.Decimal `json:"priceOpen"`
	PriceClose decimal.Decimal `json:"priceClose"`
	Realized   decimal.Decimal `json:"realized"`
	OpenedDate Time            `json:"openedDate"`
	ClosedDate Time            `json:"closedDate"`
	// Extra holds keys the spec does not name, as received.
	Extra map[string]json.RawMessage `json:"-"`
}

type closedPositionWire ClosedPosition

// UnmarshalJSON decodes the row and keeps unnamed keys in Extra.
func (p *ClosedPosition) UnmarshalJSON(b []byte) error {
	var w closedPositionWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	w.Extra = extraKeys(raw, reflect.TypeFor[closedPositionWire]())
	*p = ClosedPosition(w)
	return nil
}

// MarshalJSON writes the row with its Extra keys.
func (p ClosedPosition) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(closedPositionWire(p), p.Extra)
}

// HistoricalPosition is one lot held at the end of a past trade date (under
// historicalPositions): trade-date quantity, market value, average cost,
// closing price and unrealized P&L. The spec names the contents but not the
// keys; these are the simulator's spellings, and any other key is kept in
// Extra so a differently named field is never lost.
type HistoricalPosition struct {
	PositionID   ID           `json:"positionId"`
	AccountID    string       `json:"accountId,omitempty"`
	Symbol       string       `json:"symbol"`
	SecurityType SecurityType `json:"securityType,omitempty"`
	// Date is the trade date the row describes (date-only).
	Date Time `json:"date"`
	// Quantity is the trade-date quantity, negative for a short.
	Quantity      int64           `json:"quantity"`
	MarketValue   decimal.Decimal `json:"marketValue"`
	AverageCost   decimal.Decimal `json:"averageCost"`
	ClosingPrice  decimal.Decimal `json:"closingPrice"`
	UnrealizedPnL decimal.Decimal `json:"unrealizedPnL"`
	// Extra holds keys not named above, as received.
	Extra map[string]json.RawMessage `json:"-"`
}

type historicalPositionWire HistoricalPosition

// UnmarshalJSON decodes the row and keeps unnamed keys in Extra.
func (p *HistoricalPosition) UnmarshalJSON(b []byte) error {
	var w historicalPositionWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	w.Extra = extraKeys(raw, reflect.TypeFor[historicalPositionWire]())
	*p = HistoricalPosition(w)
	return nil
}

// MarshalJSON writes the row with its Extra keys.
func (p HistoricalPosition) MarshalJSON() ([]byte, error) {
	return marshalWithExtra(historicalPositionWire(p), p.Extra)
}

// Open returns the open positions. The reference documents a bare array;
// an object wrapping an array is accepted too.
//
// Spec: GET /v1/api/accounts/{accountId}/positions.
func (s *PositionsService) Open(ctx context.Context, accountID string) ([]Position, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	return getList[Position](ctx, s.client, call{
		path: base + "/positions", route: routePositions, op: "get positions",
	}, "positions")
}

// Closed returns the closed-position lifecycle rows.
//
// Spec: GET /v1/api/accounts/{accountId}/positions/closed.
func (s *PositionsService) Closed(ctx context.Context, accountID string) ([]ClosedPosition, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	return getList[ClosedPosition](ctx, s.client, call{
		path: base + "/positions/closed", route: routePositionsClosed, op: "get closed positions",
	}, "closedPositions")
}

// Historical returns the lots held on date (a calendar date, read in date's
// own location).
//
// Spec: GET /v1/api/accounts/{accountId}/positions/historical?date=YYYY-MM-DD.
func (s *PositionsService) Historical(ctx context.Context, accountID string, date time.Time) ([]HistoricalPosition, *Response, error) {
	base, err := accountBase(accountID)
	if err != nil {
		return nil, nil, err
	}
	if date.IsZero() {
		return nil, nil, brokercode.Invalid("date", "required")
	}
	return getList[HistoricalPosition](ctx, s.client, call{
		path:  base + "/positions/historical",
		query: url.Values{"date": {date.Format(time.DateOnly)}},
		route: routePositionsHistoric, op: "get historical positions",
	}, "historicalPositions")
}
