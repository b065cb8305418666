// Package storetest gives tests a fresh database of each kind the store
// runs on, so that one suite runs on both: a SQLite file in the test's
// temporary folder, and a database of its own on the Postgres cluster that
// LOCATOR_TEST_POSTGRES names (.ci/with-postgres starts a throwaway one).
package storetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/locatorhq/locator/store"
)

// Drivers are the databases the store runs on.
var Drivers = []string{"sqlite", "postgres"}

// EnvPostgres names the variable holding the test cluster's URL.
const EnvPostgres = "LOCATOR_TEST_POSTGRES"

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
	admin := os.Getenv(EnvPostgres)
	if admin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run the tests under .ci/with-postgres", EnvPostgres)
		}
		t.Skipf("%s is not set (run the tests under .ci/with-postgres); CI runs this test", EnvPostgres)
	}
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
