package store

import "context"

// ForgetMigration deletes the record of the latest migration applied, as
// a database an older locator migrated would lack it.
func ForgetMigration(ctx context.Context, s *Store) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`)
	return err
}
