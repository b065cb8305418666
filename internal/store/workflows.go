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

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// ErrNotFound is returned for an unknown workflow.
var ErrNotFound = errors.New("no such workflow")

// ErrConflict is returned when a compare-and-set finds the workflow in
// another state than expected: someone else moved it first.
var ErrConflict = errors.New("store: workflow state changed concurrently")

const workflowColumns = `id, kind, account, symbol, requested, quantity, quote_req_id, state, policy, locate_type, accepted_id, price, legs, offered_at, expires_at, sent_at, reason, created_at, updated_at, version, asker, cause, lost_quote_req_id, resends, mac`

// Create inserts a new workflow in its initial state with its creation logged.
// The QuoteReqID must be set: it is the write-ahead intent.
func (s *Store) Create(ctx context.Context, w *workflow.Workflow) error {
	if w.ID == "" || w.QuoteReqID == "" || w.Kind == "" {
		return errors.New("store: a workflow needs an id, a kind and a quoteReqID")
	}
	if w.State == "" {
		w.State = states.Initial(w.Kind)
	}
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		w.CreatedAt, w.UpdatedAt, w.Version = tx.now, tx.now, 1
		policy, legs, err := encodeJSON(w)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO workflows (`+workflowColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			w.ID, string(w.Kind), w.Account, w.Symbol, w.Requested, w.Quantity, w.QuoteReqID, string(w.State), policy,
			w.LocateType, w.AcceptedID, priceText(w.Price), legs, formatTime(w.OfferedAt), formatTime(w.ExpiresAt),
			formatTime(w.SentAt), w.Reason, formatTime(w.CreatedAt), formatTime(w.UpdatedAt), w.Version, w.Asker, string(w.Cause), w.LostQuoteReqID, w.Resends, w.MAC)
		if err != nil {
			return fmt.Errorf("store: create %s: %w", w.ID, err)
		}
		return insertTransition(ctx, tx, w.ID, "", w.State, "create", w.Reason, "")
	})
}

// Commit saves next, the record a step made of prev, with compare-and-set
// on prev's state and version, and logs tr (when the step made a
// transition), in one immediate transaction. It returns the saved record, or
// ErrConflict when the workflow had moved on (another process moved it).
func (s *Store) Commit(ctx context.Context, prev, next *workflow.Workflow, tr *workflow.Transition) (*workflow.Workflow, error) {
	out := *next
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		return commitTx(ctx, tx, prev, &out, tr)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Step is one workflow's step for CommitAll and CommitBatch.
type Step struct {
	Prev, Next *workflow.Workflow
	Transition *workflow.Transition
}

// CommitAll commits the steps of several workflows in one transaction (one
// fsync for all of them): all are saved or none. Each keeps its own
// compare-and-set; the saved records come back in order.
func (s *Store) CommitAll(ctx context.Context, steps []Step) ([]*workflow.Workflow, error) {
	saved, _, err := s.CommitBatch(ctx, steps, nil)
	return saved, err
}

// CommitBatch is CommitAll for the steps of workflows and orders together:
// one transaction, all saved or none, each with its own compare-and-set
// and transition log; the saved records come back in order, by kind.
func (s *Store) CommitBatch(ctx context.Context, steps []Step, orders []OrderStep) ([]*workflow.Workflow, []*workflow.Order, error) {
	out, outOrders := make([]*workflow.Workflow, len(steps)), make([]*workflow.Order, len(orders))
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		for i, st := range steps {
			n := *st.Next
			if err := commitTx(ctx, tx, st.Prev, &n, st.Transition); err != nil {
				return err
			}
			out[i] = &n
		}
		for i, st := range orders {
			o := *st.Next
			if err := commitOrderTx(ctx, tx, st.Prev, &o, st.Transition); err != nil {
				return err
			}
			outOrders[i] = &o
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, outOrders, nil
}

func commitTx(ctx context.Context, tx *Tx, prev, w *workflow.Workflow, tr *workflow.Transition) error {
	w.UpdatedAt = tx.now
	w.Version = prev.Version + 1
	policy, legs, err := encodeJSON(w)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE workflows SET state=?, quantity=?, quote_req_id=?, lost_quote_req_id=?, resends=?, policy=?, locate_type=?, accepted_id=?, price=?, legs=?, offered_at=?, expires_at=?, sent_at=?, reason=?, cause=?, updated_at=?, version=?
		WHERE id = ? AND state = ? AND version = ?`,
		string(w.State), w.Quantity, w.QuoteReqID, w.LostQuoteReqID, w.Resends, policy, w.LocateType, w.AcceptedID, priceText(w.Price), legs,
		formatTime(w.OfferedAt), formatTime(w.ExpiresAt), formatTime(w.SentAt), w.Reason, string(w.Cause), formatTime(w.UpdatedAt), w.Version,
		w.ID, string(prev.State), prev.Version)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s is no longer %s (version %d)", ErrConflict, w.ID, prev.State, prev.Version)
	}
	if tr != nil {
		return insertTransition(ctx, tx, w.ID, tr.From, tr.To, tr.Event, tr.Reason, string(tr.Raw))
	}
	return nil
}

// Get returns one workflow.
func (s *Store) Get(ctx context.Context, id string) (*workflow.Workflow, error) {
	return getWorkflow(ctx, s.db, `id = ?`, id)
}

// ByQuoteReqID returns the workflow that sent quoteReqID (with or without
// the .SU suffix of a Reg SHO shadow row), as its quote or as the one it
// sent again in place of.
func (s *Store) ByQuoteReqID(ctx context.Context, quoteReqID string) (*workflow.Workflow, error) {
	id := strings.TrimSuffix(quoteReqID, ".SU")
	if id == "" {
		return nil, fmt.Errorf("%w: an empty quoteReqID", ErrNotFound)
	}
	return getWorkflow(ctx, s.db, `quote_req_id = ? OR lost_quote_req_id = ?`, id, id)
}

// AmbiguousError: an id prefix names several workflows.
type AmbiguousError struct {
	Prefix string
	IDs    []string // the first few it names
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("store: %q names several workflows (%s): give more of the id", e.Prefix, strings.Join(e.IDs, ", "))
}

// Find returns account's workflow that ref names (any account's when
// account is empty, as `locator status` reads the whole database): its id,
// its quoteReqID (either leg of a Reg SHO pair), or a unique prefix of its
// id (as people copy them from a listing). A workflow of another account
// is never found, however ref names it: the accounts of a fleet share one
// database. ErrNotFound when none; an *AmbiguousError when a prefix names
// several.
func (s *Store) Find(ctx context.Context, account, ref string) (*workflow.Workflow, error) {
	for _, exact := range []func(context.Context, string) (*workflow.Workflow, error){s.Get, s.ByQuoteReqID} {
		w, err := exact(ctx, ref)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if err == nil && (account == "" || w.Account == account) {
			return w, nil
		}
	}
	// LIKE's wildcards in ref are literal: escaped.
	pattern := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(ref) + "%"
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM workflows WHERE (? = '' OR account = ?) AND id LIKE ? ESCAPE '\' ORDER BY id LIMIT 4`, account, account, pattern)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch len(ids) {
	case 0:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, ref)
	case 1:
		return s.Get(ctx, ids[0])
	}
	return nil, &AmbiguousError{Prefix: ref, IDs: ids}
}

// Filter selects workflows for List.
type Filter struct {
	Account string
	// AnyCase matches Account whatever its case: broker ids are
	// case-insensitive, and a workflow is stored under the spelling its
	// caller used.
	AnyCase bool
	Kind    states.Kind
	Symbol  string
	// Open keeps only workflows that have not reached a terminal state.
	Open bool
	// Since keeps workflows created at or after it.
	Since time.Time
	// UpdatedSince keeps workflows last updated at or after it: every
	// workflow that did anything since then (a quote sent, say), however
	// long ago it was created.
	UpdatedSince time.Time
	// Limit caps the rows (newest first when set); 0 means all, oldest first.
	Limit int
}

// terminalStates lists, for SQL, the states in which a workflow has ended.
var terminalStates = func() string {
	var terminal []string
	for _, kind := range states.Kinds() {
		for _, st := range states.All(kind) {
			if states.Terminal(st) {
				terminal = append(terminal, "'"+string(st)+"'")
			}
		}
	}
	return strings.Join(terminal, ",")
}()

// List returns workflows matching f, oldest first (newest first with Limit).
func (s *Store) List(ctx context.Context, f Filter) ([]*workflow.Workflow, error) {
	var where []string
	var args []any
	switch {
	case f.Account == "":
	case !f.AnyCase:
		where, args = append(where, "account = ?"), append(args, f.Account)
	case s.db.dialect == "postgres": // by the index workflows_account_fold
		where, args = append(where, "lower(account) = lower(?)"), append(args, f.Account)
	default:
		where, args = append(where, "account = ? COLLATE NOCASE"), append(args, f.Account)
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
	if !f.UpdatedSince.IsZero() {
		where, args = append(where, "updated_at >= ?"), append(args, formatTime(f.UpdatedSince))
	}
	if f.Open {
		where = append(where, "state NOT IN ("+terminalStates+")")
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
	var out []*workflow.Workflow
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
func (s *Store) Transitions(ctx context.Context, id string) ([]locator.Transition, error) {
	return s.transitions(ctx, `SELECT seq, workflow_id, from_state, to_state, event, reason, raw_row, at FROM transitions WHERE workflow_id = ? ORDER BY seq`, id)
}

// transitions runs a log query selecting locator.Transition's fields in
// order.
func (s *Store) transitions(ctx context.Context, query, id string) ([]locator.Transition, error) {
	rows, err := s.db.QueryContext(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []locator.Transition
	for rows.Next() {
		var t locator.Transition
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
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO inventory_snapshots (account, taken_at, rows) VALUES (?, ?, ?)`, account, formatTime(tx.now), string(rows))
		return err
	})
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type scanner interface{ Scan(dest ...any) error }

func getWorkflow(ctx context.Context, q querier, where string, args ...any) (*workflow.Workflow, error) {
	w, err := scanWorkflow(q.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, args[0])
	}
	return w, err
}

func scanWorkflow(sc scanner) (*workflow.Workflow, error) {
	var w workflow.Workflow
	var kind, state, policy, price, legs, offered, expires, sent, created, updated string
	err := sc.Scan(&w.ID, &kind, &w.Account, &w.Symbol, &w.Requested, &w.Quantity, &w.QuoteReqID, &state, &policy,
		&w.LocateType, &w.AcceptedID, &price, &legs, &offered, &expires, &sent, &w.Reason, &created, &updated, &w.Version, &w.Asker, &w.Cause, &w.LostQuoteReqID, &w.Resends, &w.MAC)
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

func encodeJSON(w *workflow.Workflow) (policy, legs string, err error) {
	p, err := json.Marshal(w.Policy)
	if err != nil {
		return "", "", err
	}
	if w.Legs == nil {
		w.Legs = map[string]workflow.Leg{}
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
