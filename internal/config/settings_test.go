package config_test

import (
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/store"
)

// A Postgres password never goes on the command line (every user of the
// machine can read it there); in the environment it is accepted.
func TestPostgresPasswordNotInArgv(t *testing.T) {
	env := func(vars map[string]string) config.Env {
		get := func(k string) string { return vars[k] }
		return config.Env{Lookup: get, Secret: get}
	}
	const withPassword = "postgres://desk:s3cret@db.internal/locator"
	s := config.Layer(config.Flags{DB: withPassword}, &config.File{}, env(nil))
	err := s.CheckDB()
	if err == nil || !strings.Contains(err.Error(), "LOCATOR_DB") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("--db with a password: %v", err)
	}
	// A password in the query is refused too, and never shown.
	for _, dsn := range []string{"postgres://desk@db.internal/locator?password=s3cret", "postgres://desk@db.internal/locator?sslmode=verify-full&sslpassword=s3cret"} {
		err := config.Layer(config.Flags{DB: dsn}, &config.File{}, env(nil)).CheckDB()
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("--db %s: %v, want refused without the password", dsn, err)
		}
		if shown := store.Redact(dsn); strings.Contains(shown, "s3cret") {
			t.Errorf("Redact(%s) = %s", dsn, shown)
		}
	}
	for _, ok := range []config.Settings{
		config.Layer(config.Flags{DB: "postgres://desk@db.internal/locator"}, &config.File{}, env(nil)),
		config.Layer(config.Flags{}, &config.File{}, env(map[string]string{"LOCATOR_DB": withPassword})),
		config.Layer(config.Flags{DB: "/var/lib/locator/locator.db"}, &config.File{}, env(nil)),
	} {
		if err := ok.CheckDB(); err != nil {
			t.Errorf("%s from %s: %v", ok.DB, ok.From["db"], err)
		}
	}
}
