package store

import (
	"context"
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
