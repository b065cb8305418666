package store

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/locatorhq/locator"
)

// StandBy records (or renews) sb standing by for its account, for ttl from
// now by the database's clock, with why it cannot serve it (see
// StandByAll, whose statement it is).
func (s *Store) StandBy(ctx context.Context, sb locator.Standby, ttl time.Duration) error {
	return s.StandByAll(ctx, []locator.Standby{sb}, ttl)
}

// StandByAll records (or renews) each of sbs standing by for its account,
// for ttl from now by the database's clock, and why it cannot serve it
// (NotServed, Retry; empty: it is about to own it), in one transaction
// (a statement per thousand records): a daemon announces at once every
// account it is about to own.
func (s *Store) StandByAll(ctx context.Context, sbs []locator.Standby, ttl time.Duration) error {
	if len(sbs) == 0 {
		return nil
	}
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		for batch := range slices.Chunk(sbs, renewBatch) {
			if err := standByBatch(ctx, tx, batch, now, ttl); err != nil {
				return err
			}
		}
		return nil
	})
}

// standByBatch is one statement of StandByAll: renewBatch records at
// most, ten parameters each (Postgres takes 65,535 parameters a
// statement).
func standByBatch(ctx context.Context, tx *Tx, sbs []locator.Standby, now time.Time, ttl time.Duration) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO standbys (account, process, pid, host, since, expires, not_served, not_served_since, retry_at, pair_rank) VALUES `)
	var args []any
	for i, sb := range sbs {
		if i > 0 {
			q.WriteString(`, `)
		}
		q.WriteString(`(?,?,?,?,?,?,?,?,?,?)`)
		args = append(args, sb.Account, sb.Process, sb.PID, sb.Host, formatTime(now), formatTime(now.Add(ttl)),
			sb.NotServed, formatTime(sb.NotServedSince), formatTime(sb.Retry), sb.Rank)
	}
	q.WriteString(` ON CONFLICT (account, process) DO UPDATE SET expires = excluded.expires, not_served = excluded.not_served,
		not_served_since = excluded.not_served_since, retry_at = excluded.retry_at, pair_rank = excluded.pair_rank`)
	_, err := tx.ExecContext(ctx, q.String(), args...)
	return err
}

// RenewStandbys extends by ttl, from now by the database's clock, the
// records sbs name (each by its account and process), in one statement
// (the records are one parameter, a JSON array): a daemon standing by for
// thousands of accounts renews its records without writing them again,
// whatever process id each of its accounts' records carries. A record sbs
// does not name is left to lapse.
func (s *Store) RenewStandbys(ctx context.Context, sbs []locator.Standby, ttl time.Duration) error {
	return s.byStandbyKeys(ctx, sbs, func(ctx context.Context, tx *Tx, list string) error {
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE standbys SET expires = ? WHERE `+tx.c.inJSONKeys(standbyKey), formatTime(now.Add(ttl)), list)
		return err
	})
}

// LeaveStandby takes the records sbs name (each by its account and
// process) off, in one statement: a daemon closing, or owning what it
// announced, takes its records of many accounts off at once, whatever
// process id each carries.
func (s *Store) LeaveStandby(ctx context.Context, sbs ...locator.Standby) error {
	return s.byStandbyKeys(ctx, sbs, func(ctx context.Context, tx *Tx, list string) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM standbys WHERE `+tx.c.inJSONKeys(standbyKey), list)
		return err
	})
}

// byStandbyKeys runs f in a transaction, with the keys of sbs as one
// parameter (standbyKeys); nothing when sbs is empty.
func (s *Store) byStandbyKeys(ctx context.Context, sbs []locator.Standby, f func(ctx context.Context, tx *Tx, list string) error) error {
	if len(sbs) == 0 {
		return nil
	}
	list, err := standbyKeys(sbs)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error { return f(ctx, tx, list) })
}

// standbyKey is SQL for a standby record's key, as standbyKeys writes it.
const standbyKey = "(process || ' ' || account)"

// standbyKeys is the keys of sbs, one parameter (a JSON array).
func standbyKeys(sbs []locator.Standby) (string, error) {
	keys := make([]string, len(sbs))
	for i, sb := range sbs {
		keys[i] = sb.Process + " " + sb.Account
	}
	list, err := json.Marshal(keys)
	return string(list), err
}

// Standbys lists the live standbys of accounts (none named: of every
// account), by account, oldest first, in one statement: a daemon opening
// a key pair's accounts reads their records at once.
func (s *Store) Standbys(ctx context.Context, accounts ...string) ([]locator.Standby, error) {
	q := `SELECT account, process, pid, host, since, expires, not_served, not_served_since, retry_at, pair_rank FROM standbys
		WHERE expires > ` + s.db.leaseNowSQL()
	var args []any
	if len(accounts) > 0 {
		list, err := json.Marshal(accounts)
		if err != nil {
			return nil, err
		}
		q, args = q+` AND `+s.db.inJSON("account"), append(args, string(list))
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY account, since`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []locator.Standby
	for rows.Next() {
		var sb locator.Standby
		var since, exp, nsSince, retry string
		if err := rows.Scan(&sb.Account, &sb.Process, &sb.PID, &sb.Host, &since, &exp, &sb.NotServed, &nsSince, &retry, &sb.Rank); err != nil {
			return nil, err
		}
		if sb.NotServedSince, err = parseTime(nsSince); err != nil {
			return nil, err
		}
		if sb.Retry, err = parseTime(retry); err != nil {
			return nil, err
		}
		if sb.Since, err = parseTime(since); err != nil {
			return nil, err
		}
		if sb.Expires, err = parseTime(exp); err != nil {
			return nil, err
		}
		out = append(out, sb)
	}
	return out, rows.Err()
}
