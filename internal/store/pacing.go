package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// LastRequest is when an owner last sent a request on the key pair named
// key (a hash: see brokerclient.Client.PacingKey); zero when none was
// recorded.
func (s *Store) LastRequest(ctx context.Context, key string) (time.Time, error) {
	var at string
	err := s.db.QueryRowContext(ctx, `SELECT last_request FROM pacing WHERE key = ?`, key).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return parseTime(at)
}

// SetLastRequest records when an owner last sent a request on key's key
// pair; an earlier time than the one recorded is ignored (another owner of
// an account on the same key pair sent later). Only an owner writes it,
// under its term: s must be fenced (Fenced), and once another term has
// begun the write fails with ErrLeaseLost and the row is left as it was
// (the next owner paces from its own start).
func (s *Store) SetLastRequest(ctx context.Context, key string, at time.Time) error {
	if s.fence == nil {
		return errors.New("store: the pacing row is written only by an owner, under its term (Fenced)")
	}
	return s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO pacing (key, last_request) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET last_request = excluded.last_request WHERE excluded.last_request > pacing.last_request`,
			key, formatTime(at))
		return err
	})
}
