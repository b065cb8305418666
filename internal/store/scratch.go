package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// NewPostgresDatabase creates an empty database, named prefix and a random
// suffix, on the Postgres server that server (the URL of any database on
// it) reaches, and returns its URL and what drops it (connections and
// all). Tests and benchmarks run on one of their own this way.
func NewPostgresDatabase(ctx context.Context, server, prefix string) (dsn string, drop func(context.Context) error, err error) {
	u, err := url.Parse(server)
	if err != nil || !IsPostgres(server) {
		return "", nil, errors.New("store: want a postgres:// URL of the server")
	}
	var b [8]byte
	rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	admin := func(ctx context.Context, stmt string) error {
		db, err := sql.Open("pgx", server)
		if err != nil {
			return err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err = db.ExecContext(ctx, stmt)
		return err
	}
	if err := admin(ctx, `CREATE DATABASE `+name); err != nil {
		return "", nil, fmt.Errorf("store: create database %s at %s: %w", name, Redact(server), err)
	}
	u.Path = "/" + name
	return u.String(), func(ctx context.Context) error { return admin(ctx, `DROP DATABASE `+name+` WITH (FORCE)`) }, nil
}
