package config_test

import (
	"errors"
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
	for _, dsn := range []string{"postgres://desk@db.internal/locator?password=s3cret", "postgres://desk@db.internal/locator?sslmode=verify-full&sslpassword=s3cret",
		"postgres://desk@db.internal/locator?PASSWORD=s3cret", "postgresql://desk@db.internal/locator?SslPassword=s3cret"} {
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

// libpq's keyword form of a connection string is no file name: from the
// flag, the environment or the settings file it is refused before
// anything opens it, saying where it came from and how to give the
// database, and nothing of it is shown (it may hold a password), in the
// refusal or by Redact (what `config` prints).
func TestKeywordConnectionStringRefused(t *testing.T) {
	const dsn = "host=db.internal dbname=locator user=desk password=s3cret"
	get := func(vars map[string]string) config.Env {
		g := func(k string) string { return vars[k] }
		return config.Env{Lookup: g, Secret: g}
	}
	for _, s := range []config.Settings{
		config.Layer(config.Flags{DB: dsn}, &config.File{}, get(nil)),
		config.Layer(config.Flags{}, &config.File{}, get(map[string]string{"LOCATOR_DB": dsn})),
		config.Layer(config.Flags{}, &config.File{DB: dsn, Path: "locator.json"}, get(nil)),
	} {
		err := s.CheckDB()
		if err == nil || !strings.Contains(err.Error(), s.From["db"]) || !strings.Contains(err.Error(), "postgres:// URL") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("LOCATOR_DB from %s: %v, want refused with where and how, without the password", s.From["db"], err)
		}
	}
	if shown := store.Redact(dsn); strings.Contains(shown, "s3cret") || strings.Contains(shown, "db.internal") {
		t.Errorf("Redact(keyword form) = %s", shown)
	}
	if _, err := store.Open(t.Context(), dsn, nil); !errors.Is(err, store.ErrKeywordDSN) {
		t.Errorf("store.Open(keyword form): %v, want ErrKeywordDSN (never a SQLite file of that name)", err)
	}
	if store.KeywordDSN("/var/lib/locator/locator.db") || store.KeywordDSN("postgres://desk@db/locator?sslmode=require") {
		t.Error("a path or a URL taken for the keyword form")
	}
}
