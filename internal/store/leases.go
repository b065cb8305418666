package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locatorhq/locator"
)

// ErrLeaseHeld is matched by a LeaseHeldError.
var ErrLeaseHeld = errors.New("store: account owned by another live process")

// ErrLeaseLost is returned when renewing a lease, or writing under a term,
// that this run no longer holds.
var ErrLeaseLost = errors.New("store: lease lost")

// LeaseHeldError names the live owner of an account.
type LeaseHeldError struct{ Holder locator.Lease }

func (e *LeaseHeldError) Error() string { return e.Holder.String() }

// Is makes errors.Is(err, ErrLeaseHeld) true.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// ErrKeyPairHeld is matched by a KeyPairHeldError.
var ErrKeyPairHeld = errors.New("store: the account's key pair is owned by another live process")

// KeyPairHeldError refuses an account whose key pair another live process
// draws on, owning Holder (another account of that key pair). The broker
// counts every request of a key pair against one set of buckets, whatever
// the account, and two processes pacing the same key pair each on its own
// would overrun them: so one process owns all of a key pair's accounts,
// and shares one pacer between them.
type KeyPairHeldError struct {
	Account string
	Holder  locator.Lease
}

func (e *KeyPairHeldError) Error() string {
	return fmt.Sprintf("account %s shares its key pair with account %s, which pid %d on %s owns: the broker's rate limits are per key pair, so one process owns all of a key pair's accounts",
		e.Account, e.Holder.Account, e.Holder.PID, e.Holder.Host)
}

// Is makes errors.Is(err, ErrKeyPairHeld) true.
func (e *KeyPairHeldError) Is(target error) bool { return target == ErrKeyPairHeld }

// LeaseChannel is the Postgres notification channel a released lease is
// announced on (the payload is the account), so that standbys take over at
// once rather than at their next poll.
const LeaseChannel = "locator_leases"

// AcquireLease takes the account for l.Owner for ttl when nobody holds it,
// its lease has lapsed, or l.Owner holds it already (keeping its term);
// otherwise it returns a *LeaseHeldError naming the holder. A new owner
// starts the next term. Two processes racing for it cannot both win: the
// write is a compare-and-set on the owner and term read. On Postgres
// l.Process holds its session first (see Attend).
func (s *Store) AcquireLease(ctx context.Context, l locator.Lease, ttl time.Duration) (locator.Lease, error) {
	if _, err := s.Attend(ctx, l.Process); err != nil {
		return l, err
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		if err := lockKeyPairs(ctx, tx, l.PacingKey); err != nil {
			return err
		}
		if err := lockLeases(ctx, tx, []string{l.PacingKey}, l.Account); err != nil {
			return err
		}
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		cur, err := getLease(ctx, tx, l.Account)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case cur.Owner != l.Owner && cur.Expires.After(now):
			return &LeaseHeldError{Holder: *cur}
		}
		if err := s.checkKeyPair(ctx, tx, l, "", now); err != nil {
			return err
		}
		return s.putLease(ctx, tx, &l, cur, now, ttl)
	})
	return l, err
}

// TakeOverLease takes the account from dead, an owner found gone before
// its lease lapsed, or takes it as new when that owner released it
// meanwhile. It fails with a *LeaseHeldError when the lease has moved on
// to another owner. The dead owner's process is gone too: the leases it
// still holds on the key pair do not keep l from it.
func (s *Store) TakeOverLease(ctx context.Context, l locator.Lease, dead string, ttl time.Duration) (locator.Lease, error) {
	if _, err := s.Attend(ctx, l.Process); err != nil {
		return l, err
	}
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		if err := lockKeyPairs(ctx, tx, l.PacingKey); err != nil {
			return err
		}
		if err := lockLeases(ctx, tx, []string{l.PacingKey}, l.Account); err != nil {
			return err
		}
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		cur, err := getLease(ctx, tx, l.Account)
		deadProcess := ""
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case cur.Owner != dead && cur.Owner != l.Owner && cur.Expires.After(now):
			return &LeaseHeldError{Holder: *cur}
		case cur.Owner == dead:
			deadProcess = cur.Process
		}
		if err := s.checkKeyPair(ctx, tx, l, deadProcess, now); err != nil {
			return err
		}
		return s.putLease(ctx, tx, &l, cur, now, ttl)
	})
	return l, err
}

// TakeOnLease takes on, for ttl from now, for the owner about to serve
// it, the lease of l.Account that l.Owner of l.Process holds live: one a
// fleet took with the others of its key pair (AcquireLeases) before the
// account's owner opened. It writes the serving owner's endpoint,
// address, pin, pid and host, and returns the lease; ErrLeaseLost when
// l.Owner no longer holds it live (it lapsed, or moved on). One
// statement: the take made every check a take makes (a live lease of
// this process keeps every other process off its key pair), and
// AcquireLease would make them again, in a transaction, for each of a
// desk's thousands of accounts as they open; its times are the
// database's as it writes them (leaseNowSQL), not read first in a round
// trip of their own.
func (s *Store) TakeOnLease(ctx context.Context, l locator.Lease, ttl time.Duration) (locator.Lease, error) {
	expires, ttlArg := s.db.leaseAfterSQL(ttl)
	got, err := scanLease(s.db.QueryRowContext(ctx, `UPDATE leases SET pid = ?, host = ?, endpoint = ?, address = ?, pin = ?, heartbeat = `+s.db.leaseNowSQL()+`, expires = `+expires+`
		WHERE account = ? AND owner = ? AND process = ? AND expires > `+s.db.leaseNowSQL()+` RETURNING `+leaseColumns,
		l.PID, l.Host, l.Endpoint, l.Address, l.Pin, ttlArg, l.Account, l.Owner, l.Process))
	if errors.Is(err, sql.ErrNoRows) {
		return l, fmt.Errorf("%w: %s is not %s's live lease any more", ErrLeaseLost, l.Account, l.Owner)
	}
	if err != nil {
		return l, err
	}
	return *got, nil
}

// putLease writes l as the account's lease in place of cur (nil: none),
// from now for ttl: the same term when cur is l.Owner's, the next one
// otherwise. The write is conditional on cur, so a process that read the
// same cur and wrote first wins, and this one gets a *LeaseHeldError.
func (s *Store) putLease(ctx context.Context, tx *Tx, l *locator.Lease, cur *locator.Lease, now time.Time, ttl time.Duration) error {
	l.Term, l.Since = 1, now
	if cur != nil {
		l.Term = cur.Term + 1
		if cur.Owner == l.Owner {
			l.Term, l.Since = cur.Term, cur.Since
		}
	}
	l.Heartbeat, l.Expires = now, now.Add(ttl)
	var res sql.Result
	var err error
	if cur == nil {
		res, err = tx.ExecContext(ctx, `INSERT INTO leases (account, owner, pid, host, endpoint, address, pin, pacing_key, process, term, since, heartbeat, expires)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (account) DO NOTHING`,
			l.Account, l.Owner, l.PID, l.Host, l.Endpoint, l.Address, l.Pin, l.PacingKey, l.Process, l.Term, formatTime(l.Since), formatTime(l.Heartbeat), formatTime(l.Expires))
	} else {
		res, err = tx.ExecContext(ctx, `UPDATE leases SET owner = ?, pid = ?, host = ?, endpoint = ?, address = ?, pin = ?, pacing_key = ?, process = ?, term = ?, since = ?, heartbeat = ?, expires = ?
			WHERE account = ? AND owner = ? AND term = ?`,
			l.Owner, l.PID, l.Host, l.Endpoint, l.Address, l.Pin, l.PacingKey, l.Process, l.Term, formatTime(l.Since), formatTime(l.Heartbeat), formatTime(l.Expires),
			l.Account, cur.Owner, cur.Term)
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	won, err := getLease(ctx, tx, l.Account)
	if err != nil {
		return err
	}
	return &LeaseHeldError{Holder: *won}
}

// RenewLease extends owner's lease of account, in term, by ttl from the
// database's now; ErrLeaseLost when another process has taken it, or
// another account of its key pair (this one stalled past its expiry).
func (s *Store) RenewLease(ctx context.Context, account, owner string, term int64, ttl time.Duration) error {
	return s.renewTx(ctx, func(ctx context.Context, tx *Tx) error {
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		q := `UPDATE leases SET heartbeat = ?, expires = ? WHERE account = ? AND owner = ? AND term = ?`
		args := []any{formatTime(now), formatTime(now.Add(ttl)), account, owner, term}
		// While the lease lives no other process can own an account of its
		// key pair: one statement renews it (times are sortable text),
		// judged live when it writes (leaseNowSQL).
		res, err := tx.ExecContext(ctx, q+` AND expires > `+tx.c.leaseNowSQL(), args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		// Lapsed, or no longer this term's: once it has lapsed, another
		// process may own an account of its key pair.
		cur, err := getLease(ctx, tx, account)
		switch {
		case errors.Is(err, ErrNotFound) || (err == nil && (cur.Owner != owner || cur.Term != term)):
			return fmt.Errorf("%w: %s, term %d", ErrLeaseLost, account, term)
		case err != nil:
			return err
		}
		if err := s.checkKeyPair(ctx, tx, *cur, "", now); err != nil {
			return fmt.Errorf("%w: %s, term %d: %v", ErrLeaseLost, account, term, err)
		}
		_, err = tx.ExecContext(ctx, q, args...)
		return err
	})
}

// ReleaseLease gives the account up, if owner still holds it in term: the
// lease lapses now and has no endpoint (its row stays, so the next term is
// one more), and on Postgres the standbys are told on LeaseChannel.
func (s *Store) ReleaseLease(ctx context.Context, account, owner string, term int64) error {
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE leases SET expires = ?, endpoint = '', address = '' WHERE account = ? AND owner = ? AND term = ?`,
			formatTime(now), account, owner, term); err != nil {
			return err
		}
		if s.Postgres() {
			_, err = tx.ExecContext(ctx, `SELECT pg_notify(?, ?)`, LeaseChannel, account)
		}
		return err
	})
}

// LiveLease returns the account's lease while it has not lapsed;
// ErrNotFound when nobody owns the account.
func (s *Store) LiveLease(ctx context.Context, account string) (*locator.Lease, error) {
	l, err := getLease(ctx, s.db, account)
	if err != nil {
		return nil, err
	}
	now, err := s.leaseNow(ctx, s.db)
	if err != nil {
		return nil, err
	}
	if !l.Expires.After(now) {
		return nil, fmt.Errorf("%w: the lease of %s lapsed", ErrNotFound, account)
	}
	return l, nil
}

// LiveLeasesByPID counts the live leases by their owner's process id, in
// one row each: what a fleet's watcher polls while thousands of accounts
// move (Leases would ship every row each time).
func (s *Store) LiveLeasesByPID(ctx context.Context) (map[int]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT pid, COUNT(*) FROM leases WHERE endpoint != '' AND expires > `+s.db.leaseNowSQL()+` GROUP BY pid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]int{}
	for rows.Next() {
		var pid, n int
		if err := rows.Scan(&pid, &n); err != nil {
			return nil, err
		}
		out[pid] = n
	}
	return out, rows.Err()
}

// Leases lists every account's lease, live or lapsed (its owner died
// without releasing it), but not those released.
func (s *Store) Leases(ctx context.Context) ([]locator.Lease, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+leaseColumns+` FROM leases WHERE endpoint != '' ORDER BY account`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []locator.Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *l)
	}
	return out, rows.Err()
}

// LeaseNow is the time by the clock leases are kept on (see leaseNow).
func (s *Store) LeaseNow(ctx context.Context) (time.Time, error) { return s.leaseNow(ctx, s.db) }

// leaseNow is the time by the database's clock on Postgres, which every
// host that shares the database agrees on; on SQLite, one machine's
// database, the machine's. Ownership is kept in real time whatever clock
// the store's records are written on (tests and the demo run the broker's
// world on virtual time; a process stalls in real time). On SQLite it is
// cut to the millisecond, the grain of SQLite's own now (leaseNowSQL): a
// lease that lapses now, written to the nanosecond, read as live for the
// rest of its millisecond to a statement judging it by SQLite's now, and
// a lapsed owner renewed it (TestKeyPairOneProcess, 6 runs in 30).
func (s *Store) leaseNow(ctx context.Context, q querier) (time.Time, error) {
	if !s.Postgres() {
		return time.Now().UTC().Truncate(time.Millisecond), nil
	}
	var now time.Time
	if err := q.QueryRowContext(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, err
	}
	return now.UTC(), nil
}

// leaseNowSQL is SQL for the time by the clock leases are kept on (see
// leaseNow), as formatTime writes it, read as the statement reads each
// row: a condition on a lease's times, judged at the moment its row is
// written rather than at a time read before, cannot be stale however long
// the process was held up in between.
func (c *conn) leaseNowSQL() string {
	if c.dialect == "postgres" {
		return `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"000Z"')`
	}
	return `(strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000000Z')`
}

// leaseAfterSQL is leaseNowSQL d later: the SQL, with one parameter, and
// that parameter's value.
func (c *conn) leaseAfterSQL(d time.Duration) (string, any) {
	if c.dialect == "postgres" {
		return `to_char((clock_timestamp() + make_interval(secs => ?)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"000Z"')`, d.Seconds()
	}
	return `(strftime('%Y-%m-%dT%H:%M:%f', 'now', ?) || '000000Z')`, fmt.Sprintf("%+.3f seconds", d.Seconds())
}

// Fence is one owner's term of an account. A store fenced by it (Fenced)
// commits a transaction only while that term is current: an owner that
// stalled past its lease, and was replaced, cannot write one more row.
type Fence struct {
	Account string
	Owner   string
	Term    int64
}

// Fenced is s with every transaction fenced by f. It shares s's database.
func (s *Store) Fenced(f Fence) *Store {
	c := *s
	c.fence = &f
	return &c
}

// check fails with ErrLeaseLost unless f's term is current. On Postgres it
// holds a key-share lock on the lease row until the transaction ends, so
// a takeover (which locks the row for update first: lockLeases) waits for
// the fenced write to commit and is never interleaved with it, while a
// renewal (an update of the row's times alone) does not wait for it; on
// SQLite the immediate transaction already excludes every other writer.
func (f *Fence) check(ctx context.Context, tx *Tx) error {
	q := `SELECT term FROM leases WHERE account = ? AND owner = ?`
	if tx.c.dialect == "postgres" {
		q += ` FOR KEY SHARE`
	}
	var term int64
	err := tx.QueryRowContext(ctx, q, f.Account, f.Owner).Scan(&term)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && term != f.Term) {
		return fmt.Errorf("%w: %s's term %d is over; nothing was written", ErrLeaseLost, f.Account, f.Term)
	}
	return err
}

// checkKeyPair refuses l with a *KeyPairHeldError while another process
// than l's (and than deadProcess, one found gone) holds a live lease of
// another account of l's key pair, unless that process's session ended
// (see Session: it died, and its leases go to whoever takes them). On
// Postgres, checks of one key pair are serialized by a lock held to the
// end of the transaction (SQLite's immediate transactions are already),
// so two processes taking two accounts of one key pair at once cannot
// both pass it.
func (s *Store) checkKeyPair(ctx context.Context, tx *Tx, l locator.Lease, deadProcess string, now time.Time) error {
	if l.PacingKey == "" {
		return nil
	}
	if err := lockKeyPairs(ctx, tx, l.PacingKey); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+leaseColumns+` FROM leases WHERE pacing_key = ? AND account != ? ORDER BY account`, l.PacingKey, l.Account)
	if err != nil {
		return err
	}
	defer rows.Close()
	var held []*locator.Lease
	for rows.Next() {
		o, err := scanLease(rows)
		if err != nil {
			return err
		}
		if o.Expires.After(now) && o.Process != l.Process && (deadProcess == "" || o.Process != deadProcess) {
			held = append(held, o)
		}
	}
	if err := rows.Err(); err != nil || len(held) == 0 {
		return err
	}
	rows.Close() // before tx's next query
	byAccount := make(map[string]*locator.Lease, len(held))
	for _, o := range held {
		byAccount[o.Account] = o
	}
	gone, err := endedIn(ctx, tx, byAccount)
	if err != nil {
		return err
	}
	for _, o := range held {
		if !gone[o.Process] {
			return &KeyPairHeldError{Account: l.Account, Holder: *o}
		}
	}
	return nil
}

// lockKeyPairs takes, on Postgres, the lock that serializes the checks of
// a key pair (see checkKeyPair) until tx ends, for each key pair of keys
// in order ("" has none), in one statement: a takeover's pass of 128 key
// pairs took 128 round trips under its transaction, one a lock. It is
// taken before any lease row's lock (lockLeases), always in that order,
// so two takes never wait on each other; taken twice in one transaction,
// it is held once.
func lockKeyPairs(ctx context.Context, tx *Tx, keys ...string) error {
	if tx.c.dialect != "postgres" {
		return nil
	}
	list, err := keyList(keys)
	if err != nil || list == "" {
		return err
	}
	// A volatile function of the select list is evaluated after the sort:
	// the locks are taken in the order of keys.
	_, err = tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('locator key pair ' || k, 0))
		FROM jsonb_array_elements_text(?::jsonb) WITH ORDINALITY AS a(k, n) ORDER BY n`, list)
	return err
}

// keyList is keys, less "" (no key pair), as one JSON parameter; "" when
// none is left.
func keyList(keys []string) (string, error) {
	keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == "" })
	if len(keys) == 0 {
		return "", nil
	}
	list, err := json.Marshal(keys)
	return string(list), err
}

// lockLeases locks, on Postgres, until tx ends, the lease rows of
// accounts for update: what changes a lease's owner takes them so, and so
// waits for every fenced write of the term it ends (see Fence.check). It
// then locks the other lease rows of keys, the key pairs taken, as an
// update of their times would (a fenced write of an account that keeps
// its owner does not hold the take up): a renewal skips a row another
// transaction holds, so no lease of a key pair is renewed while a take of
// it reads them. Otherwise a renewal of a lease about to lapse, committed
// after the take read it lapsed, would leave two processes owning the key
// pair. A renewal or a release, which change only the term's own times,
// need not take this.
func lockLeases(ctx context.Context, tx *Tx, keys []string, accounts ...any) error {
	if tx.c.dialect != "postgres" || len(accounts) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT account FROM leases WHERE account IN (`+marks(len(accounts))+`) ORDER BY account FOR UPDATE`, accounts...); err != nil {
		return err
	}
	list, err := keyList(keys)
	if err != nil || list == "" {
		return err
	}
	_, err = tx.ExecContext(ctx, `SELECT account FROM leases WHERE `+tx.c.inJSON("pacing_key")+` ORDER BY account`+tx.c.forUpdate(false), list)
	return err
}

const leaseColumns = `account, owner, pid, host, endpoint, address, pin, pacing_key, process, term, since, heartbeat, expires`

func getLease(ctx context.Context, q querier, account string) (*locator.Lease, error) {
	l, err := scanLease(q.QueryRowContext(ctx, `SELECT `+leaseColumns+` FROM leases WHERE account = ?`, account))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no lease of %s", ErrNotFound, account)
	}
	return l, err
}

func scanLease(sc scanner) (*locator.Lease, error) {
	var l locator.Lease
	var since, beat, exp string
	if err := sc.Scan(&l.Account, &l.Owner, &l.PID, &l.Host, &l.Endpoint, &l.Address, &l.Pin, &l.PacingKey, &l.Process, &l.Term, &since, &beat, &exp); err != nil {
		return nil, err
	}
	var err error
	for _, p := range []struct {
		s string
		t *time.Time
	}{{since, &l.Since}, {beat, &l.Heartbeat}, {exp, &l.Expires}} {
		if *p.t, err = parseTime(p.s); err != nil {
			return nil, err
		}
	}
	return &l, nil
}

// marks is n placeholders, comma-separated.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }
