package store_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/locatorhq/locator/internal/store"
)

// TestOpenReaderNeverCreatesNorMigrates proves a reader changes nothing:
// OpenReader refuses a SQLite file that is not there (and leaves none
// behind), refuses a database some migrations of this build have not
// reached (rather than migrating it), and opens one an owner migrated.
func TestOpenReaderNeverCreatesNorMigrates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "locator.db")
	if _, err := store.OpenReader(ctx, path, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenReader of no file: %v, want fs.ErrNotExist", err)
	}
	if _, err := store.OpenReader(ctx, path, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenReader created %s: %v", path, err)
	}

	owner := mustOpen(t, path, nil) // migrates
	if _, err := owner.Leases(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := store.OpenReader(ctx, path, nil)
	if err != nil {
		t.Fatalf("OpenReader of a migrated database: %v", err)
	}
	if _, err := r.Leases(ctx); err != nil {
		t.Fatalf("read through the reader: %v", err)
	}
	r.Close()

	// One migration undone: the reader refuses and does not apply it.
	if err := store.ForgetMigration(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenReader(ctx, path, nil); !errors.Is(err, store.ErrSchemaBehind) {
		t.Fatalf("OpenReader of a database behind: %v, want ErrSchemaBehind", err)
	}
	if _, err := store.OpenReader(ctx, path, nil); !errors.Is(err, store.ErrSchemaBehind) {
		t.Fatalf("the first OpenReader migrated the database: %v", err)
	}
}
