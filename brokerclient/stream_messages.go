package brokerclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// StreamMessage is one decoded stream message: *SystemMessage,
// *PnLSnapshotMessage, *PnLAggregatesMessage, *PnLPositionMessage,
// *SubscriptionError, *SubscribedMessage, *OrderUpdate, *PositionUpdate,
// or *UnknownMessage for anything else (the streams are beta; the spec asks
// clients to tolerate schema updates).
type StreamMessage interface{ streamMessage() }

// SystemStatus is the status of a system message (spec: "System messages").
type SystemStatus string

// System message statuses.
const (
	// StatusPendingAuth: the server awaits {key, secret}.
	StatusPendingAuth SystemStatus = "PENDING_AUTH"
	// StatusConnected: authenticated; subscribe now.
	StatusConnected SystemStatus = "CONNECTED"
	// StatusFailedAuth: authentication failed; the client should close.
	StatusFailedAuth SystemStatus = "FAILED_AUTH"
	// StatusTerminated: a subscribe was rejected (an empty account); the
	// connection stays open.
	StatusTerminated SystemStatus = "TERMINATED"
	// StatusInvalidData: a payload did not parse; existing subscriptions
	// keep delivering.
	StatusInvalidData SystemStatus = "INVALID_DATA"
)

// SystemMessage is a message with `@system: true`.
type SystemMessage struct {
	TS      time.Time
	Status  SystemStatus
	Message string
}

// PnLSnapshot is the P&L stream's `pnlReturn`: account aggregates and one
// entry per position. The stream's model of an account is one of these,
// kept up to date by merging partial updates.
type PnLSnapshot struct {
	PnLTotals
	Positions []PnLPosition `json:"positions"`
}

// PnLPosition is one position of a P&L snapshot.
type PnLPosition struct {
	PositionID ID      `json:"positionId"`
	Symbol     string  `json:"symbol"`
	PnLCalc    PnLCalc `json:"pnlCalc"`
}

// PnLAggregates is a partial `aggCalcs` update: only changed fields are
// set; nil means unchanged.
type PnLAggregates struct {
	AccountValue    *decimal.Decimal `json:"accountValue,omitempty"`
	AvailableCash   *decimal.Decimal `json:"availableCash,omitempty"`
	OptionCashUsed  *decimal.Decimal `json:"optionCashUsed,omitempty"`
	UsedLeverage    *decimal.Decimal `json:"usedLeverage,omitempty"`
	AllowedLeverage *decimal.Decimal `json:"allowedLeverage,omitempty"`
	SharesTraded    *int64           `json:"sharesTraded,omitempty"`
	Exposure        *decimal.Decimal `json:"exposure,omitempty"`
	DayUnrealized   *decimal.Decimal `json:"dayUnrealized,omitempty"`
	DayRealized     *decimal.Decimal `json:"dayRealized,omitempty"`
	DayPnl          *decimal.Decimal `json:"dayPnl,omitempty"`
	TotalUnrealized *decimal.Decimal `json:"totalUnrealized,omitempty"`
	EquityRatio     *decimal.Decimal `json:"equityRatio,omitempty"`
}

// PnLCalcUpdate is a partial `pnlCalc`: only changed fields are set.
type PnLCalcUpdate struct {
	UnrealizedPnL    *decimal.Decimal `json:"unrealizedPnL,omitempty"`
	DayUnrealizedPnL *decimal.Decimal `json:"dayUnrealizedPnL,omitempty"`
	PctPnLMove       *decimal.Decimal `json:"pctPnLMove,omitempty"`
	DayPctPnLMove    *decimal.Decimal `json:"dayPctPnLMove,omitempty"`
	Exposure         *decimal.Decimal `json:"exposure,omitempty"`
	RealizedPnl      *decimal.Decimal `json:"realizedPnl,omitempty"`
	DayRealizedPnl   *decimal.Decimal `json:"dayRealizedPnl,omitempty"`
}

// PnLSnapshotMessage is the `init` message, once per subscribe.
type PnLSnapshotMessage struct {
	TS       time.Time
	Account  string // "" when the service did not say
	Snapshot PnLSnapshot
}

// PnLAggregatesMessage is an `update` of target `aggCalcs`.
type PnLAggregatesMessage struct {
	TS      time.Time
	Account string
	Changes PnLAggregates
}

// PnLPositionMessage is an `update` of target `position`: one position
// whose price changed.
type PnLPositionMessage struct {
	TS         time.Time
	Account    string
	PositionID ID
	Symbol     string
	Changes    PnLCalcUpdate
}

// SubscriptionError is the `action: error` data message, for example
// "account not found" for an unknown, foreign or numeric account.
type SubscriptionError struct {
	TS      time.Time
	Account string
	Message string
}

// SubscribedMessage acknowledges a portfolio subscribe. The spec does not
// show the portfolio payloads; this is the simulator's documented shape.
type SubscribedMessage struct {
	TS      time.Time
	Account string
	Topics  []string
}

// OrderUpdate is a portfolio Order update: the order record as of a change,
// with the stream's UserOrderID (`<accountId>:<clientOrderId>`).
type OrderUpdate struct {
	TS          time.Time
	Account     string
	UserOrderID string
	Order       Order
}

// PositionUpdate is a portfolio position event; ID is the position id
// (`id` on the stream, positionId in REST).
type PositionUpdate struct {
	TS       time.Time
	Account  string
	ID       ID
	Position Position
}

// UnknownMessage is a message of a shape this client does not know.
type UnknownMessage struct {
	Raw json.RawMessage
}

func (*SystemMessage) streamMessage()        {}
func (*PnLSnapshotMessage) streamMessage()   {}
func (*PnLAggregatesMessage) streamMessage() {}
func (*PnLPositionMessage) streamMessage()   {}
func (*SubscriptionError) streamMessage()    {}
func (*SubscribedMessage) streamMessage()    {}
func (*OrderUpdate) streamMessage()          {}
func (*PositionUpdate) streamMessage()       {}
func (*UnknownMessage) streamMessage()       {}

// StreamDecodeError is a stream message that is not JSON, or whose content
// does not match its action and target.
type StreamDecodeError struct {
	Err error
	Raw string // at most 512 bytes of the message
}

func (e *StreamDecodeError) Error() string {
	return fmt.Sprintf("brokerclient: stream message: %v", e.Err)
}

// Unwrap returns the JSON error.
func (e *StreamDecodeError) Unwrap() error { return e.Err }

// epochMillis is a `ts`: epoch milliseconds, possibly fractional.
type epochMillis time.Time

func (t *epochMillis) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("ts: %w", err)
	}
	// A float, not a decimal: rescaling 1e-999999999 to an integer would
	// take minutes.
	ms, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.Abs(ms) > 1e15 {
		return fmt.Errorf("ts: %q is not epoch milliseconds", n)
	}
	*t = epochMillis(time.UnixMilli(int64(ms)).UTC())
	return nil
}

// envelope holds every top-level key the two streams use.
type envelope struct {
	System    bool            `json:"@system"`
	TS        epochMillis     `json:"ts"`
	Status    string          `json:"status"`
	Message   LooseString     `json:"message"`
	Account   LooseString     `json:"account"`
	Action    string          `json:"action"`
	Target    string          `json:"target"`
	Topics    []string        `json:"topics"`
	PnLReturn json.RawMessage `json:"pnlReturn"`
	AggCalcs  json.RawMessage `json:"aggCalcs"`
	Position  json.RawMessage `json:"position"`
	Order     json.RawMessage `json:"order"`
}

// DecodeStreamMessage decodes one message of either stream by its
// `@system`, `action` and `target`; its strings are CleanText.
func DecodeStreamMessage(data []byte) (StreamMessage, error) {
	m, err := decodeStreamMessage(data)
	cleanDecoded(m)
	return m, err
}

func decodeStreamMessage(data []byte) (StreamMessage, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, &StreamDecodeError{Err: err, Raw: truncate(data)}
	}
	ts, acct := time.Time(env.TS), string(env.Account)
	content := func(raw json.RawMessage, v any) error {
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			return &StreamDecodeError{Err: fmt.Errorf("%s %s without its content", env.Action, env.Target), Raw: truncate(data)}
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return &StreamDecodeError{Err: fmt.Errorf("%s %s: %w", env.Action, env.Target, err), Raw: truncate(data)}
		}
		return nil
	}
	switch {
	case env.System:
		return &SystemMessage{TS: ts, Status: SystemStatus(env.Status), Message: string(env.Message)}, nil
	case env.Action == "init" && env.Target == "pnlReturn":
		m := &PnLSnapshotMessage{TS: ts, Account: acct}
		return result(m, content(env.PnLReturn, &m.Snapshot))
	case env.Action == "update" && env.Target == "aggCalcs":
		m := &PnLAggregatesMessage{TS: ts, Account: acct}
		return result(m, content(env.AggCalcs, &m.Changes))
	case env.Action == "update" && env.Target == "position":
		var p struct {
			PositionID ID            `json:"positionId"`
			Symbol     string        `json:"symbol"`
			PnLCalc    PnLCalcUpdate `json:"pnlCalc"`
		}
		err := content(env.Position, &p)
		return result(&PnLPositionMessage{TS: ts, Account: acct, PositionID: p.PositionID, Symbol: p.Symbol, Changes: p.PnLCalc}, err)
	case env.Action == "error":
		return &SubscriptionError{TS: ts, Account: acct, Message: string(env.Message)}, nil
	case env.Action == "subscribed":
		return &SubscribedMessage{TS: ts, Account: acct, Topics: env.Topics}, nil
	case env.Action == "update" && env.Target == "Order":
		var o struct {
			Order
			UserOrderID string `json:"userOrderId"`
		}
		err := content(env.Order, &o)
		return result(&OrderUpdate{TS: ts, Account: acct, UserOrderID: o.UserOrderID, Order: o.Order}, err)
	case env.Action == "update" && env.Target == "Position":
		var p struct {
			Position
			ID ID `json:"id"`
		}
		err := content(env.Position, &p)
		return result(&PositionUpdate{TS: ts, Account: acct, ID: p.ID, Position: p.Position}, err)
	}
	return &UnknownMessage{Raw: append(json.RawMessage(nil), data...)}, nil
}

// result drops the message when its content failed to decode.
func result(m StreamMessage, err error) (StreamMessage, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}
