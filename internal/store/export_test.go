package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
)

// ForgetMigration deletes the record of the latest migration applied, as
// a database an older locator migrated would lack it.
func ForgetMigration(ctx context.Context, s *Store) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`)
	return err
}

// LatestInventory returns the newest snapshot of the account's inventory
// and when it was taken; ErrNotFound when none was saved. Only tests read
// a snapshot's time back (the engine's start has the rows, Recoveries).
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

// HoldFenced opens a fenced transaction on s and, once its fence is
// checked, signals held and waits for release before committing: a process
// stopped in the middle of a write, its transaction open on the server.
// Unlike inTx it sets no bound of its own (a stopped process runs no
// timers). It returns the transaction's end.
func HoldFenced(s *Store, held chan<- struct{}, release <-chan struct{}) error {
	ctx := context.Background()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer sqlTx.Rollback()
	if err := s.fence.check(ctx, &Tx{tx: sqlTx, c: s.db}); err != nil {
		return err
	}
	close(held)
	<-release
	if _, err := sqlTx.ExecContext(ctx, `SELECT 1`); err != nil {
		return err
	}
	return sqlTx.Commit()
}

// QueryRow scans the one row query returns on s's database.
func QueryRow(ctx context.Context, s *Store, query string, dest ...any) error {
	return s.db.QueryRowContext(ctx, query).Scan(dest...)
}

// UndoRowMACs takes s back to the schema before migration row_macs (its
// columns and tables dropped, its record and those of the migrations after
// it forgotten), keeping every row, so
// that the next Open applies it to rows an older locator wrote.
func UndoRowMACs(ctx context.Context, s *Store) error {
	// The migrations after it first (the orders' executed_at), then its own.
	for _, q := range []string{`ALTER TABLE orders DROP COLUMN executed_at`, `DELETE FROM schema_migrations WHERE name LIKE '%order_executed_at%'`,
		`ALTER TABLE workflows DROP COLUMN mac`, `ALTER TABLE orders DROP COLUMN mac`,
		`DROP TABLE row_macs_pending`, `DROP TABLE refused_rows`} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	// Its migration is forgotten, whichever came after it.
	_, err := s.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE name LIKE '%_row_macs.up.sql'`)
	return err
}

// HoldForTake opens a transaction on s that locks the lease rows of
// account and of its key pair key ("" none) as a change of owner does
// (lockLeases), signals held, and rolls back once release is closed: a
// take of the key pair in flight.
func HoldForTake(s *Store, account, key string, held chan<- struct{}, release <-chan struct{}) error {
	ctx := context.Background()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer sqlTx.Rollback()
	if err := lockLeases(ctx, &Tx{tx: sqlTx, c: s.db}, []string{key}, account); err != nil {
		return err
	}
	close(held)
	<-release
	return nil
}

// HoldKeyPair holds key's key-pair lock (lockKeyPairs) in a transaction
// on s until a session of the database waits for a lock, then reads the
// database's time and gives the lock up: a take of the key pair in flight
// that another take waits behind. It returns the time read.
func HoldKeyPair(ctx context.Context, s *Store, key string) (time.Time, error) {
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return time.Time{}, err
	}
	defer sqlTx.Rollback()
	tx := &Tx{tx: sqlTx, c: s.db}
	if err := lockKeyPairs(ctx, tx, key); err != nil {
		return time.Time{}, err
	}
	for {
		var waiting int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks WHERE NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			return time.Time{}, err
		}
		if waiting > 0 {
			break
		}
		if err := clock.Sleep(ctx, clock.Real{}, 5*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
	return s.leaseNow(ctx, tx)
}

// OnRenewRead has f called by each statement of s's RenewLeases once it
// has read the time, before it writes.
func OnRenewRead(s *Store, f func()) { s.renewRead = f }

// Unchanged says whether each of held is still held as it was and live,
// as a standby's look reads it in one row (see leaseWaits.look).
func (s *Store) Unchanged(ctx context.Context, held ...locator.Lease) (bool, error) {
	waits := make([]*leaseWait, len(held))
	for i, l := range held {
		waits[i] = &leaseWait{held: l}
	}
	_, same, err := s.unchanged(ctx, waits)
	return same, err
}
