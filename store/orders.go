package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// OrderState is where an order locator placed stands in its own record: the
// write-ahead states before and around the POST, then the broker's outcome.
type OrderState string

// Order states. Intent and Unknown are the ones a crash can leave behind;
// both are settled by looking the clientOrderId up at the broker, never by
// sending again.
const (
	// OrderIntent: persisted, about to be sent (or sent by a process that
	// died before it could record the answer).
	OrderIntent OrderState = "intent"
	// OrderUnknown: sent, and the answer was lost.
	OrderUnknown OrderState = "unknown"
	// OrderPending: the broker has it (PendingNew); its outcome is not known yet.
	OrderPending OrderState = "pending"
	// OrderWorking: New, Accepted or PartiallyFilled; it can still fill.
	OrderWorking OrderState = "working"
	// OrderFilled, OrderCanceled, OrderExpired and OrderRejected are the
	// broker's terminal statuses (spec: "Order statuses").
	OrderFilled   OrderState = "filled"
	OrderCanceled OrderState = "canceled"
	OrderExpired  OrderState = "expired"
	OrderRejected OrderState = "rejected"
	// OrderUnregistered: an unknown outcome settled as never having reached
	// the broker; nothing is working under the id.
	OrderUnregistered OrderState = "unregistered"
	// OrderFailed: the broker refused the request itself (an error answer,
	// not an order record).
	OrderFailed OrderState = "failed"
)

// Final reports whether the state can no longer change.
func (s OrderState) Final() bool {
	switch s {
	case OrderFilled, OrderCanceled, OrderExpired, OrderRejected, OrderUnregistered, OrderFailed:
		return true
	}
	return false
}

// Settled reports whether the broker's answer has been recorded: the order
// is no longer in a write-ahead state that must be looked up.
func (s OrderState) Settled() bool { return s != OrderIntent && s != OrderUnknown }

// ErrOrderNotFound is returned for an unknown clientOrderId.
var ErrOrderNotFound = errors.New("store: order not found")

// Order is one order locator placed, with what it sent and what the broker
// said about it.
type Order struct {
	ClientOrderID string // the id generated and sent
	// BrokerOrderID is the clientOrderId in the broker's answer when it
	// differs from the one sent (the spec's R118 rewrite); empty otherwise.
	BrokerOrderID    string
	Account          string
	Symbol           string
	Side             string // Buy or Sell
	OpenClose        string // Open or Close
	OrderType        string
	TimeInForce      string
	Quantity         int64
	LimitPrice       decimal.Decimal // zero when none was sent
	Route            string          // as sent, or as paper assigned it when none was
	LocateWorkflowID string          // the locate workflow that covers a short
	State            OrderState
	OrderStatus      string // the broker's last orderStatus
	Executed         int64
	PriceAvg         decimal.Decimal
	Code             string // rejection code, as parsed from text
	Text             string // the broker's text
	Reason           string // why the state is what it is, for a person
	CreatedAt        time.Time
	SentAt           time.Time
	UpdatedAt        time.Time
	Version          int64
}

const orderColumns = `client_order_id, broker_order_id, account, symbol, side, open_close, order_type, time_in_force, quantity, limit_price, route, locate_workflow_id, state, order_status, executed, price_avg, code, text, reason, created_at, sent_at, updated_at, version`

// CreateOrder records the intent to place o, before anything is sent; the
// ClientOrderID must be set. Its state is OrderIntent.
func (s *Store) CreateOrder(ctx context.Context, o *Order) error {
	if o.ClientOrderID == "" || o.Account == "" || o.Symbol == "" {
		return errors.New("store: an order needs a clientOrderId, an account and a symbol")
	}
	o.State = OrderIntent
	return s.inTx(ctx, func(tx *Tx) error {
		o.CreatedAt, o.UpdatedAt, o.Version = tx.now, tx.now, 1
		_, err := tx.ExecContext(ctx, `INSERT INTO orders (`+orderColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, orderArgs(o)...)
		if err != nil {
			return fmt.Errorf("store: create order %s: %w", o.ClientOrderID, err)
		}
		return nil
	})
}

// OrderChange is one compare-and-set update of an order: it applies only
// while the order is still at From.
type OrderChange struct {
	From OrderState
	To   OrderState
	// Apply edits the other fields of the order being saved.
	Apply func(o *Order)
}

// UpdateOrder loads the order, checks it is still at c.From, applies the
// change and saves it in one immediate transaction. It returns the saved
// order, or ErrConflict when the order had moved on.
func (s *Store) UpdateOrder(ctx context.Context, clientOrderID string, c OrderChange) (*Order, error) {
	var out *Order
	err := s.inTx(ctx, func(tx *Tx) error {
		o, err := getOrder(ctx, tx, clientOrderID)
		if err != nil {
			return err
		}
		if o.State != c.From {
			return fmt.Errorf("%w: order %s is %s, expected %s", ErrConflict, clientOrderID, o.State, c.From)
		}
		if c.Apply != nil {
			c.Apply(o)
		}
		o.ClientOrderID = clientOrderID // the key never changes
		o.State = c.To
		o.UpdatedAt = tx.now
		o.Version++
		args := orderArgs(o)
		res, err := tx.ExecContext(ctx, `UPDATE orders SET `+orderSetList+` WHERE client_order_id = ? AND version = ?`,
			append(args[1:], clientOrderID, o.Version-1)...)
		if err != nil {
			return fmt.Errorf("store: update order %s: %w", clientOrderID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: order %s changed under the update", ErrConflict, clientOrderID)
		}
		out = o
		return nil
	})
	return out, err
}

// orderSetList is the UPDATE assignment of every column but the key.
var orderSetList = func() string {
	cols := strings.Split(orderColumns, ", ")[1:]
	for i, c := range cols {
		cols[i] = c + " = ?"
	}
	return strings.Join(cols, ", ")
}()

// GetOrder returns the order placed under clientOrderID.
func (s *Store) GetOrder(ctx context.Context, clientOrderID string) (*Order, error) {
	return getOrder(ctx, s.db, clientOrderID)
}

// OrderFilter selects orders; zero fields match everything.
type OrderFilter struct {
	Account string
	// Unsettled keeps only orders in a write-ahead state (intent, unknown):
	// the ones a crash left for a lookup at the broker.
	Unsettled bool
	Limit     int
}

// Orders lists orders, newest first.
func (s *Store) Orders(ctx context.Context, f OrderFilter) ([]*Order, error) {
	var where []string
	var args []any
	if f.Account != "" {
		where = append(where, "account = ?")
		args = append(args, f.Account)
	}
	if f.Unsettled {
		where = append(where, "state IN (?, ?)")
		args = append(args, string(OrderIntent), string(OrderUnknown))
	}
	q := `SELECT ` + orderColumns + ` FROM orders`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, client_order_id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Order
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

func orderArgs(o *Order) []any {
	return []any{
		o.ClientOrderID, o.BrokerOrderID, o.Account, o.Symbol, o.Side, o.OpenClose, o.OrderType, o.TimeInForce,
		o.Quantity, priceText(o.LimitPrice), o.Route, o.LocateWorkflowID, string(o.State), o.OrderStatus, o.Executed,
		priceText(o.PriceAvg), o.Code, o.Text, o.Reason, formatTime(o.CreatedAt), formatTime(o.SentAt),
		formatTime(o.UpdatedAt), o.Version,
	}
}

func getOrder(ctx context.Context, q querier, id string) (*Order, error) {
	o, err := scanOrder(q.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE client_order_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrOrderNotFound, id)
	}
	return o, err
}

func scanOrder(sc scanner) (*Order, error) {
	var o Order
	var state, limit, avg, created, sent, updated string
	err := sc.Scan(&o.ClientOrderID, &o.BrokerOrderID, &o.Account, &o.Symbol, &o.Side, &o.OpenClose, &o.OrderType,
		&o.TimeInForce, &o.Quantity, &limit, &o.Route, &o.LocateWorkflowID, &state, &o.OrderStatus, &o.Executed,
		&avg, &o.Code, &o.Text, &o.Reason, &created, &sent, &updated, &o.Version)
	if err != nil {
		return nil, err
	}
	o.State = OrderState(state)
	for _, p := range []struct {
		s string
		d *decimal.Decimal
	}{{limit, &o.LimitPrice}, {avg, &o.PriceAvg}} {
		if p.s == "" {
			continue
		}
		if *p.d, err = decimal.NewFromString(p.s); err != nil {
			return nil, fmt.Errorf("store: order %s price: %w", o.ClientOrderID, err)
		}
	}
	for _, p := range []struct {
		s string
		t *time.Time
	}{{created, &o.CreatedAt}, {sent, &o.SentAt}, {updated, &o.UpdatedAt}} {
		if *p.t, err = parseTime(p.s); err != nil {
			return nil, fmt.Errorf("store: order %s time: %w", o.ClientOrderID, err)
		}
	}
	return &o, nil
}
