package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/workflow"
)

// AdoptMACs gives the account's open rows written before the rows had MACs
// (migration row_macs) the MAC key makes of them, once: only while the
// migration lists the account as pending, and only when no row of the
// account already carries a MAC key makes (an owner with the key has run
// since, so a row without one was added by someone else). The account
// leaves the pending list either way, in the same transaction, so later
// starts never bless a row. It returns how many rows it blessed.
func (s *Store) AdoptMACs(ctx context.Context, account string, key workflow.RowKey) (int, error) {
	n := 0
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		n = 0
		res, err := tx.ExecContext(ctx, `DELETE FROM row_macs_pending WHERE account = ?`, account)
		if err != nil {
			return err
		}
		if pending, _ := res.RowsAffected(); pending == 0 {
			return nil
		}
		flows, orders, err := accountRows(ctx, tx, account)
		if err != nil {
			return err
		}
		for _, w := range flows {
			if key.VerifyWorkflow(w) {
				return nil
			}
		}
		for _, o := range orders {
			if key.VerifyOrder(o) {
				return nil
			}
		}
		for _, w := range flows {
			if w.MAC != "" || w.Terminal() {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE workflows SET mac = ? WHERE id = ? AND mac = ''`, key.Workflow(w), w.ID); err != nil {
				return err
			}
			n++
		}
		for _, o := range orders {
			if o.MAC != "" || o.Terminal() {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE orders SET mac = ? WHERE client_order_id = ? AND mac = ''`, key.Order(o), o.ClientOrderID); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// accountRows reads every workflow and order of account.
func accountRows(ctx context.Context, tx *Tx, account string) ([]*workflow.Workflow, []*workflow.Order, error) {
	var flows []*workflow.Workflow
	err := scanAll(ctx, tx, `SELECT `+workflowColumns+` FROM workflows WHERE account = ?`, []any{account}, func(sc scanner) error {
		w, err := scanWorkflow(sc)
		flows = append(flows, w)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var orders []*workflow.Order
	err = scanAll(ctx, tx, `SELECT `+orderColumns+` FROM orders WHERE account = ?`, []any{account}, func(sc scanner) error {
		o, err := scanOrder(sc)
		orders = append(orders, o)
		return err
	})
	return flows, orders, err
}

// scanAll runs q with args on db and hands each row to each.
func scanAll(ctx context.Context, db rowsQuerier, q string, args []any, each func(scanner) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// rowsQuerier runs a query of rows: a store's pool (conn) or a transaction.
type rowsQuerier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// SetRefused replaces account's list of refused rows with rows (an owner's
// finding at its start), so that `locator status` shows them.
func (s *Store) SetRefused(ctx context.Context, account string, rows []locator.RefusedRow) error {
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM refused_rows WHERE account = ?`, account); err != nil {
			return err
		}
		for _, r := range rows {
			_, err := tx.ExecContext(ctx, `INSERT INTO refused_rows (account, kind, id, symbol, reason, refused_at) VALUES (?,?,?,?,?,?)
				ON CONFLICT (kind, id) DO UPDATE SET account = excluded.account, symbol = excluded.symbol, reason = excluded.reason, refused_at = excluded.refused_at`,
				account, r.Kind, r.ID, r.Symbol, r.Reason, formatTime(tx.now))
			if err != nil {
				return fmt.Errorf("store: record refused %s %s: %w", r.Kind, r.ID, err)
			}
		}
		return nil
	})
}

// Refused lists the rows the owners refused at their last start, every
// account's, by account then kind and id.
func (s *Store) Refused(ctx context.Context) ([]locator.RefusedRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT account, kind, id, symbol, reason, refused_at FROM refused_rows ORDER BY account, kind, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []locator.RefusedRow
	for rows.Next() {
		var r locator.RefusedRow
		var at string
		if err := rows.Scan(&r.Account, &r.Kind, &r.ID, &r.Symbol, &r.Reason, &at); err != nil {
			return nil, err
		}
		if r.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
