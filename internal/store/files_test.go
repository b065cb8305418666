package store_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
)

// In a folder open to every user (0755) and under the common
// umask 022, the database, its WAL and its shared memory were created
// 0644, and another user read workflow records from the WAL. Now every
// file of the database is 0600, and one left 0644 by an older version is
// made private when opened. Not parallel: it sets the process's umask.
func TestDatabaseFilesPrivate(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o022))
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "locator.db")
	clk := clock.NewFake(time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC))
	check := func(when string) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s is %v, want -rw-------", when, filepath.Base(p), fi.Mode().Perm())
			}
		}
	}

	s, err := store.Open(t.Context(), path, clk)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(t.Context(), newLocate("wf-1")); err != nil {
		t.Fatal(err)
	}
	check("created")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := store.Open(t.Context(), path, clk)
	if err != nil {
		t.Fatal(err)
	}
	check("reopened after an older version left them 0644")
	s2.Close()
	s.Close()
}

// CI (TestRunKeepsItsScheduleAcrossAStepDown): a daemon and a reader that
// opened a new database file at the same moment failed "migrations
// table: database is locked (SQLITE_BUSY)", about 1 time in 20, at once
// and whatever busy_timeout said: SQLite answers a second connection that
// asks for WAL while the first converts the file that way. Three openers
// of each of 100 new files all open them.
func TestOpenersOfANewFileTogether(t *testing.T) {
	t.Parallel()
	for round := range 100 {
		path := filepath.Join(t.TempDir(), "locator.db")
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				st, err := store.Open(t.Context(), path, clock.Real{})
				if err == nil {
					err = st.Close()
				}
				errs <- err
			}()
		}
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
