package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/states"
)

// ErrNotFound is returned for an unknown workflow.
var ErrNotFound = errors.New("store: workflow not found")

// ErrConflict is returned when a compare-and-set finds the workflow in
// another state than expected: someone else moved it first.
var ErrConflict = errors.New("store: workflow state changed concurrently")

// Policy is the cost policy a locate request carries.
type Policy struct {
	// MaxPrice is the highest price per share to accept; zero means no cap.
	MaxPrice decimal.Decimal `json:"maxPrice"`
	// MaxCost is the highest total (price × shares) to accept; zero means no cap.
	MaxCost decimal.Decimal `json:"maxCost"`
	// AutoAccept accepts an offer within policy without asking.
	AutoAccept bool `json:"autoAccept"`
	// AllowSingleUse lets the engine take the SingleUse side of a Reg SHO pair,
	// which cannot be credited back once used.
	AllowSingleUse bool `json:"allowSingleUse"`
}

// Leg is the last history row seen for one leg of a quote (id or id.SU).
type Leg struct {
	Status int             `json:"status"`
	Price  decimal.Decimal `json:"price"`
	Type   int             `json:"type"`
	Shares int64           `json:"shares"`
	Text   string          `json:"text,omitempty"`
	Error  int             `json:"error,omitempty"`
}

// Workflow is one locate request or credit-back.
type Workflow struct {
	ID         string
	Kind       states.Kind
	Account    string
	Symbol     string
	Requested  int64 // shares the caller asked for
	Quantity   int64 // shares quoted or sold; 0 when nothing is sent
	QuoteReqID string
	State      states.State
	Policy     Policy
	LocateType string          // credit-back type string, or the filled leg's type name
	AcceptedID string          // the leg accepted (QuoteReqID or QuoteReqID.SU)
	Price      decimal.Decimal // price per share of the offer taken
	Legs       map[string]Leg
	OfferedAt  time.Time
	ExpiresAt  time.Time // end of the 30-second window, from when the offer was seen
	SentAt     time.Time
	Reason     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Version    int64
}

// Terminal reports whether the workflow has ended.
func (w *Workflow) Terminal() bool { return states.Terminal(w.State) }

// Transition is one row of the append-only log.
type Transition struct {
	Seq        int64
	WorkflowID string
	From, To   states.State
	Event      states.Event
	Reason     string
	RawRow     string
	At         time.Time
}

const workflowColumns = `id, kind, account, symbol, requested, quantity, quote_req_id, state, policy, locate_type, accepted_id, price, legs, offered_at, expires_at, sent_at, reason, created_at, updated_at, version`

// Create inserts a new workflow in its initial state with its creation logged.
// The QuoteReqID must be set: it is the write-ahead intent.
func (s *Store) Create(ctx context.Context, w *Workflow) error {
	if w.ID == "" || w.QuoteReqID == "" || w.Kind == "" {
		return errors.New("store: a workflow needs an id, a kind and a quoteReqID")
	}
	if w.State == "" {
		w.State = states.Requested
	}
	return s.inTx(ctx, func(tx *Tx) error {
		w.CreatedAt, w.UpdatedAt, w.Version = tx.now, tx.now, 1
		policy, legs, err := encodeJSON(w)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO workflows (`+workflowColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			w.ID, string(w.Kind), w.Account, w.Symbol, w.Requested, w.Quantity, w.QuoteReqID, string(w.State), policy,
			w.LocateType, w.AcceptedID, priceText(w.Price), legs, formatTime(w.OfferedAt), formatTime(w.ExpiresAt),
			formatTime(w.SentAt), w.Reason, formatTime(w.CreatedAt), formatTime(w.UpdatedAt), w.Version)
		if err != nil {
			return fmt.Errorf("store: create %s: %w", w.ID, err)
		}
		return insertTransition(ctx, tx, w.ID, "", w.State, "create", w.Reason, "")
	})
}

// Change is one compare-and-set update: the workflow must still be at From
// (and at Version, when set) for it to apply.
type Change struct {
	From   states.State
	To     states.State
	Event  states.Event
	Reason string
	RawRow []byte
	// Version, when non-zero, must match too: guards field updates that keep
	// the state (a new leg row, the sent-at stamp).
	Version int64
	// Apply edits the other fields of the workflow being saved.
	Apply func(w *Workflow)
}

// Apply loads the workflow, checks the compare-and-set condition, applies the
// change and logs it, in one immediate transaction. It returns the saved
// workflow, or ErrConflict when the workflow was no longer at c.From.
func (s *Store) Apply(ctx context.Context, id string, c Change) (*Workflow, error) {
	var out *Workflow
	err := s.inTx(ctx, func(tx *Tx) error {
		w, err := getWorkflow(ctx, tx, `id = ?`, id)
		if err != nil {
			return err
		}
		if w.State != c.From || (c.Version != 0 && w.Version != c.Version) {
			return fmt.Errorf("%w: %s is %s (version %d), expected %s", ErrConflict, id, w.State, w.Version, c.From)
		}
		if c.Apply != nil {
			c.Apply(w)
		}
		w.State = c.To
		if c.Reason != "" && c.To != c.From {
			w.Reason = c.Reason
		}
		w.UpdatedAt = tx.now
		w.Version++
		policy, legs, err := encodeJSON(w)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE workflows SET state=?, quantity=?, policy=?, locate_type=?, accepted_id=?, price=?, legs=?, offered_at=?, expires_at=?, sent_at=?, reason=?, updated_at=?, version=?
			WHERE id = ? AND state = ? AND version = ?`,
			string(w.State), w.Quantity, policy, w.LocateType, w.AcceptedID, priceText(w.Price), legs,
			formatTime(w.OfferedAt), formatTime(w.ExpiresAt), formatTime(w.SentAt), w.Reason, formatTime(w.UpdatedAt), w.Version,
			id, string(c.From), w.Version-1)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: %s", ErrConflict, id)
		}
		if c.To != c.From || c.Event != "" {
			if err := insertTransition(ctx, tx, id, c.From, c.To, c.Event, c.Reason, string(c.RawRow)); err != nil {
				return err
			}
		}
		out = w
		return nil
	})
	return out, err
}

// Get returns one workflow.
func (s *Store) Get(ctx context.Context, id string) (*Workflow, error) {
	return getWorkflow(ctx, s.db, `id = ?`, id)
}

// ByQuoteReqID returns the workflow that sent quoteReqID (with or without
// the .SU suffix of a Reg SHO shadow row).
func (s *Store) ByQuoteReqID(ctx context.Context, quoteReqID string) (*Workflow, error) {
	return getWorkflow(ctx, s.db, `quote_req_id = ?`, strings.TrimSuffix(quoteReqID, ".SU"))
}

// Filter selects workflows for List.
type Filter struct {
	Account string
	Kind    states.Kind
	Symbol  string
	// Open keeps only workflows that have not reached a terminal state.
	Open bool
	// Since keeps workflows created at or after it.
	Since time.Time
	// Limit caps the rows (newest first when set); 0 means all, oldest first.
	Limit int
}

// List returns workflows matching f, oldest first (newest first with Limit).
func (s *Store) List(ctx context.Context, f Filter) ([]*Workflow, error) {
	var where []string
	var args []any
	if f.Account != "" {
		where, args = append(where, "account = ?"), append(args, f.Account)
	}
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, string(f.Kind))
	}
	if f.Symbol != "" {
		where, args = append(where, "symbol = ?"), append(args, f.Symbol)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, formatTime(f.Since))
	}
	if f.Open {
		var terminal []string
		for _, kind := range states.Kinds() {
			for _, st := range states.All(kind) {
				if states.Terminal(st) {
					terminal = append(terminal, "'"+string(st)+"'")
				}
			}
		}
		where = append(where, "state NOT IN ("+strings.Join(terminal, ",")+")")
	}
	q := `SELECT ` + workflowColumns + ` FROM workflows`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT %d", f.Limit)
	} else {
		q += " ORDER BY created_at, id"
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Workflow
	for rows.Next() {
		w, err := scanWorkflow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// Transitions returns a workflow's log, oldest first.
func (s *Store) Transitions(ctx context.Context, id string) ([]Transition, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, workflow_id, from_state, to_state, event, reason, raw_row, at FROM transitions WHERE workflow_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Transition
	for rows.Next() {
		var t Transition
		var from, to, ev, at string
		if err := rows.Scan(&t.Seq, &t.WorkflowID, &from, &to, &ev, &t.Reason, &t.RawRow, &at); err != nil {
			return nil, err
		}
		t.From, t.To, t.Event = states.State(from), states.State(to), states.Event(ev)
		if t.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// SaveInventory records what the broker reported as the account's locate
// inventory (the rows as received, JSON).
func (s *Store) SaveInventory(ctx context.Context, account string, rows []byte) error {
	return s.inTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO inventory_snapshots (account, taken_at, rows) VALUES (?, ?, ?)`, account, formatTime(tx.now), string(rows))
		return err
	})
}

// LatestInventory returns the newest snapshot of the account's inventory and
// when it was taken; ErrNotFound when none was saved.
func (s *Store) LatestInventory(ctx context.Context, account string) ([]byte, time.Time, error) {
	var rows, at string
	err := s.db.QueryRowContext(ctx, `SELECT rows, taken_at FROM inventory_snapshots WHERE account = ? ORDER BY seq DESC LIMIT 1`, account).Scan(&rows, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, ErrNotFound
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	t, err := parseTime(at)
	return []byte(rows), t, err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type scanner interface{ Scan(dest ...any) error }

func getWorkflow(ctx context.Context, q querier, where string, arg any) (*Workflow, error) {
	w, err := scanWorkflow(q.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, arg)
	}
	return w, err
}

func scanWorkflow(sc scanner) (*Workflow, error) {
	var w Workflow
	var kind, state, policy, price, legs, offered, expires, sent, created, updated string
	err := sc.Scan(&w.ID, &kind, &w.Account, &w.Symbol, &w.Requested, &w.Quantity, &w.QuoteReqID, &state, &policy,
		&w.LocateType, &w.AcceptedID, &price, &legs, &offered, &expires, &sent, &w.Reason, &created, &updated, &w.Version)
	if err != nil {
		return nil, err
	}
	w.Kind, w.State = states.Kind(kind), states.State(state)
	if err := json.Unmarshal([]byte(policy), &w.Policy); err != nil {
		return nil, fmt.Errorf("store: %s policy: %w", w.ID, err)
	}
	if err := json.Unmarshal([]byte(legs), &w.Legs); err != nil {
		return nil, fmt.Errorf("store: %s legs: %w", w.ID, err)
	}
	if price != "" {
		if w.Price, err = decimal.NewFromString(price); err != nil {
			return nil, fmt.Errorf("store: %s price: %w", w.ID, err)
		}
	}
	for _, p := range []struct {
		s string
		t *time.Time
	}{{offered, &w.OfferedAt}, {expires, &w.ExpiresAt}, {sent, &w.SentAt}, {created, &w.CreatedAt}, {updated, &w.UpdatedAt}} {
		if *p.t, err = parseTime(p.s); err != nil {
			return nil, fmt.Errorf("store: %s time: %w", w.ID, err)
		}
	}
	return &w, nil
}

func encodeJSON(w *Workflow) (policy, legs string, err error) {
	p, err := json.Marshal(w.Policy)
	if err != nil {
		return "", "", err
	}
	if w.Legs == nil {
		w.Legs = map[string]Leg{}
	}
	l, err := json.Marshal(w.Legs)
	return string(p), string(l), err
}

func priceText(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

func insertTransition(ctx context.Context, tx *Tx, id string, from, to states.State, ev states.Event, reason, raw string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO transitions (workflow_id, from_state, to_state, event, reason, raw_row, at) VALUES (?,?,?,?,?,?,?)`,
		id, string(from), string(to), string(ev), reason, raw, formatTime(tx.now))
	return err
}
