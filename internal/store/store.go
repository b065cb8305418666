// Package store persists locator's workflows: the write-ahead intent
// recorded before anything is sent, every state change with the history row
// behind it, inventory snapshots, orders, the cash ledger, job runs and each
// account's owner. A state change and its log row commit in one
// transaction, guarded by compare-and-set on the previous state, so two
// processes (or a crash and a restart) cannot both move a workflow.
//
// It runs on two databases with one set of queries: an embedded SQLite
// file (the default: nothing to set up, one machine) or Postgres, named by
// a postgres:// URL (a desk whose accounts must survive a host). What
// differs is kept to the connection (conn): each database has its own
// migrations, queries are written with ? and bound as $1, $2, ... on
// Postgres, and lease times come from the database's clock there. Times
// are the same sortable UTC text on both.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	"modernc.org/sqlite"               // driver "sqlite", pure Go
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/locatorhq/locator/clock"
)

//go:embed migrations/sqlite/*.up.sql migrations/postgres/*.up.sql
var migrations embed.FS

// Store is the database.
type Store struct {
	db    *conn
	clock clock.Clock
	// fence, when set, is the owner's term every transaction checks first
	// (see Fenced).
	fence *Fence
	// renewRead, when set (tests), is called by each statement of
	// RenewLeases once it has read the time, before it writes: a
	// heartbeat descheduled there on a loaded machine.
	renewRead func()
}

// IsPostgres reports whether dsn names a Postgres database (a postgres://
// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the database dsn names and applies pending migrations: a
// Postgres URL (see IsPostgres), or else the path of a SQLite file,
// created if needed. The SQLite file and its -wal and -shm files are this
// user's alone (0600), whatever the umask or the folder's mode; a database
// file open to other users that cannot be made private is ErrNotPrivate. A
// nil clock is the wall clock.
func Open(ctx context.Context, dsn string, clk clock.Clock) (*Store, error) {
	return open(ctx, dsn, clk, openSQLite, (*Store).migrate)
}

// ErrSchemaBehind is returned by OpenReader for a database whose schema
// lacks migrations this build knows: only a process that writes (an
// owner) migrates a database.
var ErrSchemaBehind = errors.New("store: the database's schema is older than this locator's")

// OpenReader opens the database dsn names for a process that only reads
// it (status, jobs, audit, plan): it never creates it (a SQLite file that
// is not there is an error wrapping fs.ErrNotExist) and never migrates it
// (ErrSchemaBehind when a migration is missing), so a reader changes
// nothing an owner relies on. A nil clock is the wall clock.
func OpenReader(ctx context.Context, dsn string, clk clock.Clock) (*Store, error) {
	existing := func(path string) (*conn, error) {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("store: no database at %s: %w", path, fs.ErrNotExist)
		}
		return openSQLite(path)
	}
	return open(ctx, dsn, clk, existing, (*Store).current)
}

// open connects to dsn (Postgres, or SQLite through sqlite) and readies
// the schema with ready (migrate for an owner, current for a reader); on
// an error nothing is left open. A nil clock is the wall clock.
func open(ctx context.Context, dsn string, clk clock.Clock, sqlite func(string) (*conn, error), ready func(*Store, context.Context) error) (*Store, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	if KeywordDSN(dsn) {
		return nil, ErrKeywordDSN
	}
	var c *conn
	var err error
	if IsPostgres(dsn) {
		c, err = openPostgres(dsn)
	} else {
		c, err = sqlite(dsn)
	}
	if err != nil {
		return nil, err
	}
	s := &Store{db: c, clock: clk}
	if err := ready(s, ctx); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// current checks that every migration of this build is applied.
func (s *Store) current(ctx context.Context) error {
	want, err := fs.Glob(migrations, "migrations/"+s.db.dialect+"/*.up.sql")
	if err != nil {
		return err
	}
	var applied int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("%w (%v): run a command that owns the account (locate, serve) with this locator first", ErrSchemaBehind, err)
	}
	if applied < len(want) {
		return fmt.Errorf("%w (%d of %d migrations applied): run a command that owns the account (locate, serve) with this locator first", ErrSchemaBehind, applied, len(want))
	}
	return nil
}

func openSQLite(path string) (*conn, error) {
	if path == "" || path == ":memory:" {
		// :memory: gives each pooled connection its own database.
		return nil, errors.New("store: a file path is required")
	}
	if err := makePrivate(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	// busy_timeout: wait for another process's write lock instead of
	// failing.
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
	if err := walMode(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return &conn{DB: db, beat: db, dialect: "sqlite"}, nil
}

// walOpenWait bounds how long an opener retries the switch to WAL while
// another process makes the same switch (busy_timeout's 5 s).
const walOpenWait = 5 * time.Second

// walMode puts the database in WAL mode: readers do not block the writer,
// and a crash mid-write leaves the last committed transaction intact. The
// mode is the file's, kept across connections, so it is set once here and
// not in each connection's pragmas. SQLite answers SQLITE_BUSY at once,
// without waiting out busy_timeout, to a connection that asks for WAL while
// another converts the new file (a daemon and a status command started
// together on a fresh database failed 1 time in 20 that way), so a busy
// answer is tried again, for as long as busy_timeout would have waited.
func walMode(db *sql.DB) error {
	deadline := time.Now().Add(walOpenWait)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		var mode string
		err := db.QueryRow(`PRAGMA journal_mode=WAL`).Scan(&mode)
		var se *sqlite.Error
		switch {
		case err == nil && mode == "wal":
			return nil
		case err == nil:
			return fmt.Errorf("journal mode %q where WAL was asked for", mode)
		case !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline):
			return fmt.Errorf("WAL mode: %w", err)
		}
		time.Sleep(wait)
	}
}

// postgresTimeout bounds a Postgres transaction: a database that stops
// answering must not hold an owner's engine for longer than its lease
// could last. (A transaction cut short is rolled back whole.)
const postgresTimeout = 5 * time.Second

// idleInTx is the Postgres setting, sent at connection start, that bounds
// how long a session may sit idle inside a transaction (in milliseconds),
// to idleInTxBound.
const idleInTx = "idle_in_transaction_session_timeout"

// idleInTxBound is shorter than a lease lasts (service.LeaseTTL, 3 s), so
// that a stopped owner's write in flight (see openPostgres) is ended
// before its lease lapses, and never holds the takeover up past it: at
// postgresTimeout (5 s), a desk's owner stopped in one of its engines'
// writes moved 1,000 accounts in 5.09 s rather than 3. A process that
// runs sits idle in its transactions for milliseconds; one starved of
// CPU that long has lost its trust in its leases anyway.
const idleInTxBound = 2 * time.Second

func openPostgres(dsn string) (*conn, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url's error quotes the URL, password and all.
		return nil, errors.New("store: the Postgres URL does not parse")
	}
	q := u.Query()
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", "3")
	}
	// A process stopped in the middle of a transaction (SIGSTOP, a frozen
	// VM) cannot enforce postgresTimeout itself, and a fenced write holds a
	// share lock on its lease row: the server ends such a session, so the
	// paused owner's lock never stands in the way of a takeover.
	if q.Get(idleInTx) == "" {
		q.Set(idleInTx, strconv.FormatInt(idleInTxBound.Milliseconds(), 10))
	}
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, fmt.Errorf("store: open Postgres at %s: %w", Redact(dsn), err)
	}
	// As many kept idle as may be open (database/sql keeps 2 by
	// default): a daemon's engines come in bursts of 8, and a connection
	// closed after each burst is made again at the next (a connection's
	// start-up is a round of authentication on the server).
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	beat, err := sql.Open("pgx", u.String())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open Postgres at %s: %w", Redact(dsn), err)
	}
	beat.SetMaxOpenConns(1)
	return &conn{DB: db, beat: beat, dialect: "postgres", dsn: u.String()}, nil
}

// Redact is dsn as it may be shown: a Postgres URL without its password, a
// path as it is, nothing of a keyword string (see KeywordDSN).
func Redact(dsn string) string {
	if KeywordDSN(dsn) {
		return "(a libpq keyword string, not shown)"
	}
	if !IsPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(a URL that does not parse)"
	}
	q := u.Query()
	for k := range q {
		if SecretParam(k) {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// SecretParam reports whether a Postgres URL's parameter k carries a
// secret (password, sslpassword, in any spelling): refused on the command
// line (config.Settings.CheckDB), hidden by Redact.
func SecretParam(k string) bool {
	k = strings.ToLower(k)
	return k == "password" || k == "sslpassword"
}

// ErrKeywordDSN refuses libpq's keyword form of a connection string.
var ErrKeywordDSN = errors.New("store: the database is given as libpq keywords (host=... dbname=...), which locator does not take: give a postgres:// URL, with the password in PGPASSWORD or ~/.pgpass")

// libpqKeys are the keywords of libpq's keyword/value connection strings
// that a SQLite file name would not hold as a word of its own.
var libpqKeys = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "sslmode": true, "sslpassword": true, "connect_timeout": true, "application_name": true,
	"service": true, "options": true, "target_session_attrs": true,
}

// KeywordDSN reports whether dsn is libpq's keyword/value form
// ("host=db dbname=locator password=..."): never a file name, refused by
// Open with ErrKeywordDSN, never shown by Redact.
func KeywordDSN(dsn string) bool {
	if IsPostgres(dsn) {
		return false
	}
	for _, f := range strings.Fields(dsn) {
		if k, _, ok := strings.Cut(f, "="); ok && libpqKeys[strings.ToLower(k)] {
			return true
		}
	}
	return false
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Postgres reports whether the store is on Postgres.
func (s *Store) Postgres() bool { return s.db.dialect == "postgres" }

// migrate applies the embedded NNNN_name.up.sql files of the database's
// dialect not yet recorded in schema_migrations, each in its own
// transaction. On Postgres each holds a transaction-scoped advisory lock,
// so processes starting together migrate one after the other.
func (s *Store) migrate(ctx context.Context) error {
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		if err := s.lockMigrations(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	dir := "migrations/" + s.db.dialect
	names, err := fs.Glob(migrations, dir+"/*.up.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, dir+"/")
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: name must start with a number", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		err = s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
			if err := s.lockMigrations(ctx, tx); err != nil {
				return err
			}
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

// lockMigrations serializes migrations across processes on Postgres (an
// immediate transaction does it on SQLite).
func (s *Store) lockMigrations(ctx context.Context, tx *Tx) error {
	if !s.Postgres() {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('locator schema migrations'))`)
	return err
}

// conn is the database handle and its dialect. Queries are written with ?
// placeholders; on Postgres they are bound as $1, $2, ...
type conn struct {
	*sql.DB
	// beat is the lease heartbeat's own pool (renewTx): on Postgres one
	// connection besides DB's, so that a renewal never waits for a
	// connection behind the engines' transactions (a daemon of many
	// accounts shares DB's few); on SQLite, whose one connection orders
	// every transaction, DB itself.
	beat    *sql.DB
	dialect string // "sqlite" or "postgres": also the migrations' folder
	dsn     string // Postgres: the URL, for the LISTEN connection
	notices notices
	waits   leaseWaits
}

// Close leaves the processes' sessions (see Attend), stops the lease
// listener and closes the database.
func (c *conn) Close() error {
	leave(c)
	c.notices.close()
	if c.beat != c.DB {
		c.beat.Close()
	}
	return c.DB.Close()
}

// bind rewrites q's ? placeholders (outside quoted literals) for the
// dialect.
func (c *conn) bind(q string) string {
	if c.dialect != "postgres" || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n, quoted := 0, false
	for i := 0; i < len(q); i++ {
		switch ch := q[i]; {
		case ch == '\'':
			quoted = !quoted
			b.WriteByte(ch)
		case ch == '?' && !quoted:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// inJSON is SQL saying that column is one of the strings of a JSON array
// bound to its one placeholder: a list of any length as one parameter.
//
// On Postgres the list is made an array first (= ANY of an ARRAY(...)
// run once), which the planner meets with the column's index whatever
// it knows of the table: as IN (SELECT ...), a set of a hundred rows by
// its guess, it hash-joined a scan of the whole table, and on a table
// never analyzed (the leases of a fleet starting) it did so every time,
// 165 ms a take at 10,000 leases where the index takes 0.1 ms.
func (c *conn) inJSON(column string) string {
	if c.dialect == "postgres" {
		return column + ` = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))`
	}
	return column + ` IN (SELECT value FROM json_each(?))`
}

// inJSONKeys is inJSON for a key computed from a row's columns, which no
// index serves: every row is read, and each looked up once in the list,
// which Postgres hashes for an IN (SELECT ...) (as = ANY of an array,
// each row was compared with every element: a standby's look at 7,500
// leases took 2.2 s).
func (c *conn) inJSONKeys(key string) string {
	if c.dialect == "postgres" {
		return key + ` IN (SELECT jsonb_array_elements_text(?::jsonb))`
	}
	return c.inJSON(key)
}

// forUpdate is the clause that locks the rows a SELECT reads until the
// transaction ends, as an update of other columns than their key would
// (Postgres), skipping those another transaction holds with skipLocked;
// on SQLite, whose immediate transactions exclude every other writer,
// none.
func (c *conn) forUpdate(skipLocked bool) string {
	switch {
	case c.dialect != "postgres":
		return ""
	case skipLocked:
		return ` FOR NO KEY UPDATE SKIP LOCKED`
	}
	return ` FOR NO KEY UPDATE`
}

func (c *conn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.DB.ExecContext(ctx, c.bind(q), args...)
}

func (c *conn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.DB.QueryContext(ctx, c.bind(q), args...)
}

func (c *conn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.DB.QueryRowContext(ctx, c.bind(q), args...)
}

// Tx is a transaction that carries one "now", so every row it writes has the
// same timestamp.
type Tx struct {
	tx  *sql.Tx
	c   *conn
	now time.Time
}

func (t *Tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.c.bind(q), args...)
}

func (t *Tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.c.bind(q), args...)
}

func (t *Tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.c.bind(q), args...)
}

// inTx runs fn in a transaction (immediate on SQLite), committing when it
// returns nil. fn's statements run under the context it is handed (the
// transaction's, not the caller's: see below). A fenced store (see Fenced)
// first checks that its term is still current, and fails with
// ErrLeaseLost when it is not.
func (s *Store) inTx(ctx context.Context, fn func(context.Context, *Tx) error) error {
	return s.inTxOn(ctx, s.db.DB, fn)
}

// renewTx is inTx on the lease heartbeat's own connection (conn.beat).
func (s *Store) renewTx(ctx context.Context, fn func(context.Context, *Tx) error) error {
	return s.inTxOn(ctx, s.db.beat, fn)
}

// inTxOn is inTx on db, one of the store's pools.
func (s *Store) inTxOn(ctx context.Context, db *sql.DB, fn func(context.Context, *Tx) error) error {
	// Commit even when ctx is cancelled mid-way: a decision is applied
	// whole, late rather than never. Postgres may stop answering, so its
	// transactions have a bound of their own.
	ctx = context.WithoutCancel(ctx)
	if s.Postgres() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, postgresTimeout)
		defer cancel()
	}
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	tx := &Tx{tx: sqlTx, c: s.db, now: s.clock.Now().UTC()}
	if s.fence != nil {
		err = s.fence.check(ctx, tx)
	}
	if err == nil {
		err = fn(ctx, tx)
	}
	if err != nil {
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
