package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Lease says which live process owns an account: it alone drives the
// account's workflows, and others hand it their requests at Endpoint.
type Lease struct {
	Account  string
	Owner    string // random id of the owning run
	PID      int
	Host     string
	Endpoint string
	Since    time.Time
	// Heartbeat is the last renewal; Expires is when the lease lapses
	// without another.
	Heartbeat time.Time
	Expires   time.Time
}

// ErrLeaseHeld is matched by a LeaseHeldError.
var ErrLeaseHeld = errors.New("store: account owned by another live process")

// ErrLeaseLost is returned when renewing a lease this run no longer holds.
var ErrLeaseLost = errors.New("store: lease lost")

// LeaseHeldError names the live owner of an account.
type LeaseHeldError struct{ Holder Lease }

func (e *LeaseHeldError) Error() string { return e.Holder.String() }

// String names the owner, for a person: "account A is owned by pid P on H
// since T".
func (l Lease) String() string {
	return fmt.Sprintf("account %s is owned by pid %d on %s since %s", l.Account, l.PID, l.Host, l.Since.Local().Format(time.DateTime))
}

// Is makes errors.Is(err, ErrLeaseHeld) true.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// AcquireLease takes the account for l.Owner for ttl when nobody holds it,
// its lease has lapsed, or l.Owner holds it already; otherwise it returns a
// *LeaseHeldError naming the holder. It runs in one immediate transaction,
// so two processes racing for it cannot both win.
func (s *Store) AcquireLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	err := s.inTx(ctx, func(tx *Tx) error {
		cur, err := getLease(ctx, tx, l.Account)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case cur.Owner != l.Owner && cur.Expires.After(tx.now):
			return &LeaseHeldError{Holder: *cur}
		case cur.Owner == l.Owner:
			l.Since = cur.Since
		}
		if l.Since.IsZero() || (cur != nil && cur.Owner != l.Owner) {
			l.Since = tx.now
		}
		l.Heartbeat, l.Expires = tx.now, tx.now.Add(ttl)
		return putLease(ctx, tx, l)
	})
	return l, err
}

// TakeOverLease takes the account from dead, an owner found gone before
// its lease lapsed, or takes it as new when that owner released it
// meanwhile. It fails with a *LeaseHeldError when the lease has moved on
// to another owner.
func (s *Store) TakeOverLease(ctx context.Context, l Lease, dead string, ttl time.Duration) (Lease, error) {
	err := s.inTx(ctx, func(tx *Tx) error {
		cur, err := getLease(ctx, tx, l.Account)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case cur.Owner != dead:
			return &LeaseHeldError{Holder: *cur}
		}
		l.Since, l.Heartbeat, l.Expires = tx.now, tx.now, tx.now.Add(ttl)
		return putLease(ctx, tx, l)
	})
	return l, err
}

// putLease writes l as the account's lease, whoever held it.
func putLease(ctx context.Context, tx *Tx, l Lease) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO leases (account, owner, pid, host, endpoint, since, heartbeat, expires) VALUES (?,?,?,?,?,?,?,?)
		ON CONFLICT (account) DO UPDATE SET owner=excluded.owner, pid=excluded.pid, host=excluded.host, endpoint=excluded.endpoint,
		since=excluded.since, heartbeat=excluded.heartbeat, expires=excluded.expires`,
		l.Account, l.Owner, l.PID, l.Host, l.Endpoint, formatTime(l.Since), formatTime(l.Heartbeat), formatTime(l.Expires))
	return err
}

// RenewLease extends owner's lease of account by ttl; ErrLeaseLost when
// another process has taken it (this one stalled past its expiry).
func (s *Store) RenewLease(ctx context.Context, account, owner string, ttl time.Duration) error {
	return s.inTx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE leases SET heartbeat = ?, expires = ? WHERE account = ? AND owner = ?`,
			formatTime(tx.now), formatTime(tx.now.Add(ttl)), account, owner)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: %s", ErrLeaseLost, account)
		}
		return nil
	})
}

// ReleaseLease gives the account up, if owner still holds it.
func (s *Store) ReleaseLease(ctx context.Context, account, owner string) error {
	return s.inTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE account = ? AND owner = ?`, account, owner)
		return err
	})
}

// LiveLease returns the account's lease while it has not lapsed;
// ErrNotFound when nobody owns the account.
func (s *Store) LiveLease(ctx context.Context, account string) (*Lease, error) {
	l, err := getLease(ctx, s.db, account)
	if err != nil {
		return nil, err
	}
	if !l.Expires.After(s.clock.Now()) {
		return nil, fmt.Errorf("%w: the lease of %s lapsed", ErrNotFound, account)
	}
	return l, nil
}

// Leases lists every account's lease, live or lapsed.
func (s *Store) Leases(ctx context.Context) ([]Lease, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT account, owner, pid, host, endpoint, since, heartbeat, expires FROM leases ORDER BY account`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Lease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *l)
	}
	return out, rows.Err()
}

func getLease(ctx context.Context, q querier, account string) (*Lease, error) {
	l, err := scanLease(q.QueryRowContext(ctx, `SELECT account, owner, pid, host, endpoint, since, heartbeat, expires FROM leases WHERE account = ?`, account))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no lease of %s", ErrNotFound, account)
	}
	return l, err
}

func scanLease(sc scanner) (*Lease, error) {
	var l Lease
	var since, beat, exp string
	if err := sc.Scan(&l.Account, &l.Owner, &l.PID, &l.Host, &l.Endpoint, &since, &beat, &exp); err != nil {
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
