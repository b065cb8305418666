package store

import (
	"context"
	"database/sql"
	"errors"
)

// NoteEnvChecked records that the account detail, read with the key pair
// named pacingKey (see brokerclient.Client.PacingKey), allowed writes in
// env: its accountType is env's, and the account is Active
// (brokerclient.Client.GuardWrites). It is a fact about the broker, not a
// step of the owner's, so it is written unfenced; the latest check wins,
// and a check that shows what the row holds writes nothing (every start
// of an owner checks).
func (s *Store) NoteEnvChecked(ctx context.Context, account, pacingKey, env string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO account_checks (account, pacing_key, env) VALUES (?, ?, ?)
		ON CONFLICT (account) DO UPDATE SET pacing_key = excluded.pacing_key, env = excluded.env
		WHERE account_checks.pacing_key != excluded.pacing_key OR account_checks.env != excluded.env`,
		account, pacingKey, env)
	return err
}

// EnvChecked is the environment whose writes the account detail last
// allowed to an owner reading it with the key pair named pacingKey; ""
// when none was recorded, or the last check was made with another key pair.
func (s *Store) EnvChecked(ctx context.Context, account, pacingKey string) (string, error) {
	var env string
	err := s.db.QueryRowContext(ctx, `SELECT env FROM account_checks WHERE account = ? AND pacing_key = ?`, account, pacingKey).Scan(&env)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return env, err
}
