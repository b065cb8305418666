// Package store persists locator's workflows in SQLite: the write-ahead
// intent recorded before anything is sent, every state change with the
// history row behind it, and inventory snapshots. A state change and its log
// row commit in one transaction, guarded by compare-and-set on the previous
// state, so two processes (or a crash and a restart) cannot both move a
// workflow.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // driver "sqlite", pure Go

	"github.com/locatorhq/locator/clock"
)

//go:embed migrations/*.up.sql
var migrations embed.FS

// Store is the database.
type Store struct {
	db    *sql.DB
	clock clock.Clock
}

// Open opens (creating if needed) the database at path and applies pending
// migrations. The database and its -wal and -shm files are this user's
// alone (0600), whatever the umask or the folder's mode; a database file
// open to other users that cannot be made private is ErrNotPrivate. A nil
// clock is the wall clock.
func Open(ctx context.Context, path string, clk clock.Clock) (*Store, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	if path == "" || path == ":memory:" {
		// :memory: gives each pooled connection its own database.
		return nil, errors.New("store: a file path is required")
	}
	if err := makePrivate(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	// WAL: readers do not block the writer, and a crash mid-write leaves the
	// last committed transaction intact.
	q.Add("_pragma", "journal_mode(WAL)")
	// busy_timeout: wait for another process's write lock instead of failing.
	q.Add("_pragma", "busy_timeout(5000)")
	// foreign_keys: transitions must point at a workflow.
	q.Add("_pragma", "foreign_keys(1)")
	// synchronous(FULL): a committed transition survives power loss, which is
	// the point of write-ahead intent.
	q.Add("_pragma", "synchronous(FULL)")
	// _txlock=immediate: take the write lock at BEGIN, so read-then-write
	// transactions never fail half-way with "database is locked".
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and this keeps every
	// transaction of this process strictly ordered.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, clock: clk}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// migrate applies the embedded NNNN_name.up.sql files not yet recorded in
// schema_migrations, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.up.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: name must start with a number", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		err = s.inTx(ctx, func(tx *Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, version, base, formatTime(tx.now))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migration %s: %w", base, err)
		}
	}
	return nil
}

// Tx is a transaction that carries one "now", so every row it writes has the
// same timestamp.
type Tx struct {
	*sql.Tx
	now time.Time
}

// inTx runs fn in an immediate transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(*Tx) error) error {
	// Commit even when ctx is cancelled mid-way: a half-applied decision is
	// worse than a late one, and SQLite work is short.
	ctx = context.WithoutCancel(ctx)
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	tx := &Tx{Tx: sqlTx, now: s.clock.Now().UTC()}
	if err := fn(tx); err != nil {
		sqlTx.Rollback()
		return err
	}
	return sqlTx.Commit()
}

// timeLayout stores times as sortable UTC text with nanoseconds.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(timeLayout, s)
}
