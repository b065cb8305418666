package main

import (
	"errors"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/wire"
)

// connFlags are the connection settings every broker command shares. The
// secret has no flag: flags show in process listings (docs/design.md rule 9).
type connFlags struct {
	m       *Main
	baseURL string
	account string
	db      string
	env     string
	auth    string
	format  console.Format
	daemon  bool // serve and run: see daemonLogger
	// network is how serve's owners take requests from other hosts.
	network    *wire.Network
	standby    bool
	ownerToken string          // wire.OwnerTokenEnv, read once
	dial       *service.Dialer // see dialer
	// streamURL is the broker's stream address of the clients this
	// process makes (service.Dialer.StreamURL): serve's, run's and
	// watch's --ws-url.
	streamURL string
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	c.registerAccount(fs)
	console.RegisterFormat(fs, &c.format)
}

// registerAccount declares the connection flags without -o: for a command
// that prints no records (mcp, whose stdout is the protocol's).
func (c *connFlags) registerAccount(fs *pflag.FlagSet) {
	fs.StringVar(&c.baseURL, "base-url", "", "broker REST address (env LOCATOR_BASE_URL)")
	fs.StringVar(&c.account, "account", "", "account id, or the name of an account in the settings file (env LOCATOR_ACCOUNT)")
	fs.StringVar(&c.db, "db", "", "SQLite database path or postgres:// URL (env LOCATOR_DB; default ~/.local/state/locator/locator.db)")
	fs.StringVar(&c.env, "env", "", "environment you mean to use: live or paper (env LOCATOR_ENV; default live); writes are refused when the account is the other kind")
	fs.StringVar(&c.auth, "auth", "", "credentials: keys (LOCATOR_KEY_ID and LOCATOR_SECRET) or partner (the tokens of 'locator login --partner'; needs LOCATOR_CLIENT_SECRET) (env LOCATOR_AUTH; default keys)")
}

// registerStreamURL declares --ws-url, saying what it is to the command.
func (c *connFlags) registerStreamURL(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&c.streamURL, "ws-url", "", usage)
}

// flags are the settings given on this command's line.
func (c *connFlags) flags() config.Flags {
	return config.Flags{BaseURL: c.baseURL, Account: c.account, DB: c.db, Env: c.env, Auth: c.auth}
}

// picked is every setting picked by precedence (config.Pick), unchecked.
func (c *connFlags) picked() (config.Settings, error) {
	file, err := c.m.loadSettings()
	if err != nil {
		return config.Settings{}, err
	}
	s, err := config.Pick(c.flags(), file, c.m.env())
	if err != nil {
		return s, console.Usagef("%v", err)
	}
	return s, nil
}

// resolve picks every setting and checks them (exit 2 on a bad one); the
// settings come back as far as they were picked even on an error.
func (c *connFlags) resolve(needAccount bool) (config.Settings, error) {
	s, err := c.picked()
	if err == nil {
		if err = s.Check(needAccount); err != nil {
			err = console.Usagef("%v", err)
		}
	}
	return s, err
}

// resolveBase is resolve without the key pair and the account: for
// `serve --config`, whose accounts name their own key pairs.
func (c *connFlags) resolveBase() (config.Settings, error) {
	s, err := c.picked()
	if err == nil {
		if err = s.CheckBase(); err != nil {
			err = console.Usagef("%v", err)
		}
	}
	return s, err
}

// dbPath is the database of a command that needs nothing else.
func (c *connFlags) dbPath() (string, error) {
	s, err := c.picked()
	return s.DB, err
}

// logger is the log of the client and the engine (console.Log): a
// command's is quiet unless -v, a daemon's logs its warnings by default.
func (c *connFlags) logger() *slog.Logger {
	return console.Log(c.m.Stderr, c.m.verbosity, c.daemon, slog.LevelWarn, c.format == console.JSON)
}

// daemonLogger is the log of serve and run from level (console.Log).
func (c *connFlags) daemonLogger(level slog.Level) *slog.Logger {
	return console.Log(c.m.Stderr, c.m.verbosity, true, level, c.format == console.JSON)
}

// accountError turns the start-up checks' failures into usage errors (exit
// 2, nothing was sent) with a message a person can act on.
func accountError(account string, err error) error {
	switch {
	case errors.Is(err, brokerclient.ErrEnvMismatch), errors.Is(err, brokerclient.ErrAccountNotActive):
		return console.Usagef("%v; nothing was sent", err)
	case errors.Is(err, brokerclient.ErrNotFound):
		return console.Usagef("account %s not found for these keys (or the keys are invalid); nothing was sent", account)
	}
	return err
}
