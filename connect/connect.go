// Package connect is the library entry point: it opens an account the way
// the locator command does, from the same settings (the LOCATOR_*
// variables, the settings file, and the values a program gives in place
// of the command's flags), and hands back the account API
// (account.Account).
//
// Open makes this process the account's owner when no live process owns
// it (its engine and its broker client then run here), or a follower of
// the process that owns it (a running `locator serve`, another command),
// whose requests that owner carries out on its own pacer: the same
// account.Account either way, as a command has.
package connect

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/wire"
)

// Options say which account to open and as whom. The connection settings
// here go before the environment's and the settings file's, as the
// command's flags do; any left empty comes from the LOCATOR_* variables
// Getenv reads (LOCATOR_BASE_URL, LOCATOR_ACCOUNT, LOCATOR_ENV, LOCATOR_DB,
// LOCATOR_AUTH), else from the settings file, else its default.
type Options struct {
	// BaseURL is the broker's REST address (LOCATOR_BASE_URL).
	BaseURL string
	// Account is the account id, or the name of an account in the
	// settings file (LOCATOR_ACCOUNT).
	Account string
	// Env is the environment meant, live or paper (LOCATOR_ENV; default
	// live): writes are refused when the account is the other kind.
	Env string
	// DB is the SQLite database path or postgres:// URL (LOCATOR_DB;
	// default ~/.local/state/locator/locator.db). Its password belongs
	// in LOCATOR_DB, PGPASSWORD or ~/.pgpass, as for the command.
	DB string
	// Auth is keys (LOCATOR_KEY_ID and LOCATOR_SECRET) or partner (the
	// tokens of 'locator login --partner', with LOCATOR_CLIENT_SECRET)
	// (LOCATOR_AUTH; default keys).
	Auth string
	// SettingsFile is the settings file (LOCATOR_CONFIG; default
	// ~/.config/locator/config.json, used when it exists).
	SettingsFile string
	// Getenv reads the environment: the settings above when left empty,
	// the secrets (the key pair, LOCATOR_CLIENT_SECRET,
	// LOCATOR_OWNER_TOKEN, which have no other way in), and the runtime
	// folder of the owner sockets (XDG_RUNTIME_DIR). Nil reads none: only
	// the fields above and the defaults count. FromEnv sets os.Getenv.
	Getenv func(string) string
	// Name is this process as the account's owner records it ("PID@HOST
	// NAME"), in its workflows and its log.
	Name string
	// Ask answers the questions of requests made with Ask set (an offer
	// above no cap, a Reg SHO pair's side); nil: nobody answers here.
	Ask func(context.Context, account.Question) bool
	// Logger is the log of the broker client and of the engine when this
	// process owns the account (nil: none).
	Logger *slog.Logger
	// Clock is the clock of the engine and the client's pacing (nil: the
	// real one); tests give a fake.
	Clock clock.Clock
	// HTTPClient is what the broker client sends with (nil: its own): a
	// proxy's, say, or a test's (simtest.Bundle.HTTPClient).
	HTTPClient *http.Client
}

// FromEnv is the options of a process that reads everything from its
// environment, as the command does: Getenv is os.Getenv. Unlike the
// command, it leaves the secrets' variables in the process's environment:
// they are the program's to keep or unset.
func FromEnv() Options { return Options{Getenv: os.Getenv} }

// Account is an open account: the account API, and Close, which gives it
// up (to the next owner, when this process owned it).
type Account interface {
	account.Account
	Close()
}

// Open opens the account o names: as its owner when no live process owns
// it, else as a follower of its owner. A setting missing or wrong is
// refused (account.KindRefused) before anything is sent; no secret is
// ever part of an error.
func Open(ctx context.Context, o Options) (Account, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	path, named := config.PathOf(o.SettingsFile, getenv)
	file, err := config.Load(path, named)
	if err != nil {
		return nil, account.Wrap(account.KindRefused, err.Error(), err)
	}
	s, err := config.Pick(config.Flags{BaseURL: o.BaseURL, Account: o.Account, DB: o.DB, Env: o.Env, Auth: o.Auth},
		file, config.Env{Lookup: getenv, Secret: getenv})
	if err == nil {
		err = s.Check(true)
	}
	if err != nil {
		return nil, account.Wrap(account.KindRefused, err.Error(), err)
	}
	d := &service.Dialer{Getenv: getenv, Clock: o.Clock, HTTPClient: o.HTTPClient, Logger: o.Logger, OwnerToken: getenv(wire.OwnerTokenEnv)}
	return d.Open(ctx, s, o.Name, o.Ask, wire.RoleCommand, false)
}
