// Package storetest gives tests a fresh database of each kind the store
// runs on, so that one suite runs on both: a SQLite file in the test's
// temporary folder, and a database of its own on the Postgres cluster that
// LOCATOR_TEST_POSTGRES names (.ci/with-postgres starts a throwaway one).
package storetest

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/locatorhq/locator/internal/store"
)

// Drivers are the databases the store runs on.
var Drivers = []string{"sqlite", "postgres"}

// The variables .ci/with-postgres sets: the URL of the cluster the tests
// share, and the URL of a cluster that one test stops and starts again,
// and the script that does it (stop|start).
const (
	EnvPostgres       = "LOCATOR_TEST_POSTGRES"
	EnvPostgresOutage = "LOCATOR_TEST_POSTGRES_OUTAGE"
	EnvPostgresCtl    = "LOCATOR_TEST_POSTGRES_CTL"
)

// DSN returns a fresh, empty database of driver for t: a file in
// t.TempDir() for "sqlite"; for "postgres", a new database on the cluster
// EnvPostgres names, dropped when t ends. Without that variable a Postgres
// test skips, except under CI=true, where it fails.
func DSN(t testing.TB, driver string) string {
	t.Helper()
	if driver == "sqlite" {
		return filepath.Join(t.TempDir(), "locator.db")
	}
	return Postgres(t)
}

// Postgres returns the URL of a new, empty database on the test cluster,
// dropped (connections and all) when t ends.
func Postgres(t testing.TB) string {
	t.Helper()
	return database(t, need(t, EnvPostgres))
}

// need is the variable name's value; without it the test skips, except
// under CI=true, where it fails.
func need(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run the tests under .ci/with-postgres", name)
		}
		t.Skipf("%s is not set (run the tests under .ci/with-postgres); CI runs this test", name)
	}
	return v
}

// database is a new, empty database on the cluster admin reaches,
// dropped when t ends.
func database(t testing.TB, admin string) string {
	t.Helper()
	dsn, drop, err := store.NewPostgresDatabase(context.Background(), admin, "test_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(context.Background()); err != nil {
			t.Errorf("drop the test database: %v", err)
		}
	})
	return dsn
}

// Stoppable is a database of its own on the cluster that one test may stop
// at once (as a crash would, every connection dropped) and start again:
// stop and start do it, each returning once done, and the cluster runs
// again when t ends. A single test uses it: it is shared with no other.
func Stoppable(t testing.TB) (dsn string, stop, start func()) {
	t.Helper()
	admin, ctl := need(t, EnvPostgresOutage), need(t, EnvPostgresCtl)
	run := func(verb string) {
		if out, err := exec.Command(ctl, verb).CombinedOutput(); err != nil {
			t.Fatalf("%s the outage cluster: %v\n%s", verb, err, out)
		}
	}
	dsn = database(t, admin)
	stopped := false
	t.Cleanup(func() { // before the database is dropped (cleanups run last first)
		if stopped {
			run("start")
		}
	})
	return dsn, func() { run("stop"); stopped = true }, func() { run("start"); stopped = false }
}

// EndSession ends, from the server, the database session that process
// holds on the Postgres database dsn (see store.Attend), as the server
// does when the process dies, and returns once the session has ended.
func EndSession(t testing.TB, dsn, process string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The lock's 64-bit key is shown as two halves (pg_locks: classid
	// the high one, objid the low one).
	var ended bool
	err = db.QueryRowContext(t.Context(), `SELECT pg_terminate_backend(pid, 30000) FROM pg_locks
		WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('locator process ' || $1, 0)`, process).Scan(&ended)
	if err != nil || !ended {
		t.Fatalf("end the session of process %s: ended %t, %v", process, ended, err)
	}
}
