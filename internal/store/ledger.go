package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// CashEntry is one cash-ledger row as stored. The broker's rows carry no id,
// so Key is derived by the caller (the ledger package) from the row's content
// and its occurrence among identical rows of the same day; the store only
// guarantees that one Key is stored once.
type CashEntry struct {
	// Key is the dedupe key: unique across the table.
	Key string
	// Account is the account the row belongs to (uppercase).
	Account string
	// EntryDate is the row's calendar date, as midnight UTC.
	EntryDate time.Time
	// CashType is the free-form category as received; unknown labels are
	// kept as they came, never dropped or mapped.
	CashType string
	// Currency is the currency name, for example USD.
	Currency string
	// Deposit is the amount added.
	Deposit decimal.Decimal
	// Withdraw is the amount removed.
	Withdraw decimal.Decimal
	// Note is the human-readable description.
	Note string
	// Occurrence is the row's index among identical rows of its day (0 for
	// the first), the part of Key that keeps genuinely identical rows apart.
	Occurrence int
	// Seq orders rows in the order they were first stored; set on reads.
	Seq int64
	// SyncedAt is when the row was first stored; set on reads.
	SyncedAt time.Time
}

// cashBatch is the rows per INSERT statement (10 parameters each, well
// under SQLite's limit of 32766).
const cashBatch = 500

const cashColumns = `seq, dedupe_key, account, entry_date, cash_type, currency, deposit, withdraw, note, occurrence, synced_at`

// InsertCashEntries stores the entries whose Key is not stored yet, all in
// one transaction, and returns how many were new. Inserting the same rows
// again inserts nothing, which is what makes a ledger sync idempotent.
func (s *Store) InsertCashEntries(ctx context.Context, entries []CashEntry) (int, error) {
	for i, e := range entries {
		if e.Key == "" || e.Account == "" || e.EntryDate.IsZero() {
			return 0, fmt.Errorf("store: cash entry %d: a key, an account and an entry date are required", i)
		}
	}
	inserted := 0
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		// Many rows per statement: a year of ledger is thousands of rows,
		// and one statement per row costs more than the inserts.
		for len(entries) > 0 {
			n := min(len(entries), cashBatch)
			batch := entries[:n]
			entries = entries[n:]
			args := make([]any, 0, n*10)
			for _, e := range batch {
				args = append(args, e.Key, e.Account, formatDate(e.EntryDate), e.CashType, e.Currency,
					e.Deposit.String(), e.Withdraw.String(), e.Note, e.Occurrence, formatTime(tx.now))
			}
			q := `INSERT INTO cash_entries (dedupe_key, account, entry_date, cash_type, currency, deposit, withdraw, note, occurrence, synced_at) VALUES ` +
				strings.TrimSuffix(strings.Repeat(`(?,?,?,?,?,?,?,?,?,?),`, n), ",") + ` ON CONFLICT (dedupe_key) DO NOTHING`
			res, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return fmt.Errorf("store: insert cash entries: %w", err)
			}
			added, err := res.RowsAffected()
			if err != nil {
				return err
			}
			inserted += int(added)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return inserted, nil
}

// CashEntries returns the account's stored ledger rows dated on or after
// from and before to (calendar dates; a zero from or to leaves that end
// open), oldest date first and, within a day, in the order first stored.
func (s *Store) CashEntries(ctx context.Context, account string, from, to time.Time) ([]CashEntry, error) {
	if account == "" {
		return nil, errors.New("store: cash entries: an account is required")
	}
	q := `SELECT ` + cashColumns + ` FROM cash_entries WHERE account = ?`
	args := []any{account}
	if !from.IsZero() {
		q, args = q+` AND entry_date >= ?`, append(args, formatDate(from))
	}
	if !to.IsZero() {
		q, args = q+` AND entry_date < ?`, append(args, formatDate(to))
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY entry_date, seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CashEntry
	for rows.Next() {
		var e CashEntry
		var date, deposit, withdraw, synced string
		if err := rows.Scan(&e.Seq, &e.Key, &e.Account, &date, &e.CashType, &e.Currency, &deposit, &withdraw, &e.Note, &e.Occurrence, &synced); err != nil {
			return nil, err
		}
		if e.EntryDate, err = time.Parse(time.DateOnly, date); err != nil {
			return nil, fmt.Errorf("store: cash entry %s date: %w", e.Key, err)
		}
		if e.Deposit, err = decimal.NewFromString(deposit); err != nil {
			return nil, fmt.Errorf("store: cash entry %s deposit: %w", e.Key, err)
		}
		if e.Withdraw, err = decimal.NewFromString(withdraw); err != nil {
			return nil, fmt.Errorf("store: cash entry %s withdraw: %w", e.Key, err)
		}
		if e.SyncedAt, err = parseTime(synced); err != nil {
			return nil, fmt.Errorf("store: cash entry %s: %w", e.Key, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// formatDate stores a calendar date as sortable YYYY-MM-DD text, read in the
// time's own location (callers pass midnight UTC).
func formatDate(t time.Time) string { return t.Format(time.DateOnly) }
