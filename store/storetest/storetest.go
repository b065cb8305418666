// Package storetest gives tests a fresh database of each kind the store
// runs on, so that one suite runs on both: a SQLite file in the test's
// temporary folder, and a database of its own on the Postgres cluster that
// LOCATOR_TEST_POSTGRES names (.ci/with-postgres starts a throwaway one).
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
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
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b [8]byte
	rand.Read(b[:])
	name := "test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatalf("create a test database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", admin)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.Exec(`DROP DATABASE ` + name + ` WITH (FORCE)`); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
