package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ForgetMigration deletes the record of the latest migration applied, as
// a database an older locator migrated would lack it.
func ForgetMigration(ctx context.Context, s *Store) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`)
	return err
}

// LatestInventory returns the newest snapshot of the account's inventory
// and when it was taken; ErrNotFound when none was saved. Only tests read
// the snapshots back.
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
