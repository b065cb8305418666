package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// ErrOrderNotFound is returned for an unknown clientOrderId.
var ErrOrderNotFound = errors.New("no such order")

const orderColumns = `client_order_id, broker_order_id, account, symbol, side, open_close, order_type, time_in_force, quantity, limit_price, stop_price, route, locate_workflow_id, state, order_status, executed, price_avg, code, text, reason, created_at, sent_at, updated_at, version, mac, executed_at`

// CreateOrder records the intent to place o, before anything is sent; the
// ClientOrderID must be set. Its state is states.OrderIntent.
func (s *Store) CreateOrder(ctx context.Context, o *workflow.Order) error {
	if o.ClientOrderID == "" || o.Account == "" || o.Symbol == "" {
		return errors.New("store: an order needs a clientOrderId, an account and a symbol")
	}
	o.State = states.OrderIntent
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		o.CreatedAt, o.UpdatedAt, o.Version = tx.now, tx.now, 1
		_, err := tx.ExecContext(ctx, `INSERT INTO orders (`+orderColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, orderArgs(o)...)
		if err != nil {
			return fmt.Errorf("store: create order %s: %w", o.ClientOrderID, err)
		}
		return insertOrderTransition(ctx, tx, o.ClientOrderID, &workflow.Transition{To: o.State, Event: "create", Reason: o.Reason})
	})
}

// CommitOrder saves next, the record a step made of prev, with
// compare-and-set on prev's version, and logs tr (when the step made a
// transition), in one immediate transaction. It returns the saved order, or
// ErrConflict when the order had moved on.
func (s *Store) CommitOrder(ctx context.Context, prev, next *workflow.Order, tr *workflow.Transition) (*workflow.Order, error) {
	o := *next
	if err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error { return commitOrderTx(ctx, tx, prev, &o, tr) }); err != nil {
		return nil, err
	}
	return &o, nil
}

// OrderStep is one order's step for CommitBatch.
type OrderStep struct {
	Prev, Next *workflow.Order
	Transition *workflow.Transition
}

func commitOrderTx(ctx context.Context, tx *Tx, prev, o *workflow.Order, tr *workflow.Transition) error {
	o.ClientOrderID = prev.ClientOrderID // the key never changes
	o.UpdatedAt = tx.now
	o.Version = prev.Version + 1
	args := orderArgs(o)
	res, err := tx.ExecContext(ctx, `UPDATE orders SET `+orderSetList+` WHERE client_order_id = ? AND state = ? AND version = ?`,
		append(args[1:], prev.ClientOrderID, string(prev.State), prev.Version)...)
	if err != nil {
		return fmt.Errorf("store: update order %s: %w", prev.ClientOrderID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: order %s is no longer %s (version %d)", ErrConflict, prev.ClientOrderID, prev.State, prev.Version)
	}
	if tr != nil {
		return insertOrderTransition(ctx, tx, o.ClientOrderID, tr)
	}
	return nil
}

func insertOrderTransition(ctx context.Context, tx *Tx, id string, tr *workflow.Transition) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO order_transitions (client_order_id, from_state, to_state, event, reason, at) VALUES (?,?,?,?,?,?)`,
		id, string(tr.From), string(tr.To), string(tr.Event), tr.Reason, formatTime(tx.now))
	return err
}

// OrderTransitions returns an order's log, oldest first (WorkflowID holds
// its clientOrderId; orders keep no raw rows).
func (s *Store) OrderTransitions(ctx context.Context, clientOrderID string) ([]locator.Transition, error) {
	return s.transitions(ctx, `SELECT seq, client_order_id, from_state, to_state, event, reason, '', at FROM order_transitions WHERE client_order_id = ? ORDER BY seq`, clientOrderID)
}

// openOrderStates lists the order table's non-terminal states for SQL.
var openOrderStates = func() string {
	var open []string
	for _, st := range states.All(states.Order) {
		if !states.Terminal(st) {
			open = append(open, "'"+string(st)+"'")
		}
	}
	return strings.Join(open, ",")
}()

// orderSetList is the UPDATE assignment of every column but the key.
var orderSetList = func() string {
	cols := strings.Split(orderColumns, ", ")[1:]
	for i, c := range cols {
		cols[i] = c + " = ?"
	}
	return strings.Join(cols, ", ")
}()

// GetOrder returns the order placed under clientOrderID.
func (s *Store) GetOrder(ctx context.Context, clientOrderID string) (*workflow.Order, error) {
	return getOrder(ctx, s.db, clientOrderID)
}

// LookUpOrder returns the order a person names by id: the clientOrderId
// locator sent, or the one the broker answered with in its place (the
// order's LookupID, which status lists), the id sent first.
func (s *Store) LookUpOrder(ctx context.Context, id string) (*workflow.Order, error) {
	o, err := scanOrder(s.db.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE client_order_id = ? OR broker_order_id = ?
		ORDER BY CASE WHEN client_order_id = ? THEN 0 ELSE 1 END LIMIT 1`, id, id, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrOrderNotFound, id)
	}
	return o, err
}

// OrderFilter selects orders; zero fields match everything.
type OrderFilter struct {
	Account string
	// Open keeps only orders that have not ended: the ones to follow, and
	// those a crash left in a write-ahead state for a lookup at the broker.
	Open  bool
	Limit int
}

// Orders lists orders, newest first.
func (s *Store) Orders(ctx context.Context, f OrderFilter) ([]*workflow.Order, error) {
	var where []string
	var args []any
	if f.Account != "" {
		where = append(where, "account = ?")
		args = append(args, f.Account)
	}
	if f.Open {
		where = append(where, "state IN ("+openOrderStates+")")
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
	var out []*workflow.Order
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

func orderArgs(o *workflow.Order) []any {
	return []any{
		o.ClientOrderID, o.BrokerOrderID, o.Account, o.Symbol, o.Side, o.OpenClose, o.OrderType, o.TimeInForce,
		o.Quantity, priceText(o.LimitPrice), priceText(o.StopPrice), o.Route, o.LocateWorkflowID, string(o.State), o.OrderStatus, o.Executed,
		priceText(o.PriceAvg), o.Code, o.Text, o.Reason, formatTime(o.CreatedAt), formatTime(o.SentAt),
		formatTime(o.UpdatedAt), o.Version, o.MAC, formatTime(o.ExecutedAt),
	}
}

func getOrder(ctx context.Context, q querier, id string) (*workflow.Order, error) {
	o, err := scanOrder(q.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE client_order_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrOrderNotFound, id)
	}
	return o, err
}

func scanOrder(sc scanner) (*workflow.Order, error) {
	var o workflow.Order
	var state, limit, stop, avg, created, sent, updated, executedAt string
	err := sc.Scan(&o.ClientOrderID, &o.BrokerOrderID, &o.Account, &o.Symbol, &o.Side, &o.OpenClose, &o.OrderType,
		&o.TimeInForce, &o.Quantity, &limit, &stop, &o.Route, &o.LocateWorkflowID, &state, &o.OrderStatus, &o.Executed,
		&avg, &o.Code, &o.Text, &o.Reason, &created, &sent, &updated, &o.Version, &o.MAC, &executedAt)
	if err != nil {
		return nil, err
	}
	o.State = states.State(state)
	for _, p := range []struct {
		s string
		d *decimal.Decimal
	}{{limit, &o.LimitPrice}, {stop, &o.StopPrice}, {avg, &o.PriceAvg}} {
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
	}{{created, &o.CreatedAt}, {sent, &o.SentAt}, {updated, &o.UpdatedAt}, {executedAt, &o.ExecutedAt}} {
		if *p.t, err = parseTime(p.s); err != nil {
			return nil, fmt.Errorf("store: order %s time: %w", o.ClientOrderID, err)
		}
	}
	return &o, nil
}
