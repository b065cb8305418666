package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/console"
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
	// observe, when set, sees every broker call (a process serving
	// /metrics).
	observe func(route string, status int, d time.Duration)
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.baseURL, "base-url", "", "broker REST address (env LOCATOR_BASE_URL)")
	fs.StringVar(&c.account, "account", "", "account id, or the name of an account in the settings file (env LOCATOR_ACCOUNT)")
	fs.StringVar(&c.db, "db", "", "SQLite database path (env LOCATOR_DB; default ~/.local/state/locator/locator.db)")
	fs.StringVar(&c.env, "env", "", "environment you mean to use: live or paper (env LOCATOR_ENV; default live); writes are refused when the account is the other kind")
	fs.StringVar(&c.auth, "auth", "", "credentials: keys (LOCATOR_KEY_ID and LOCATOR_SECRET) or partner (the tokens of 'locator login --partner'; needs LOCATOR_CLIENT_SECRET) (env LOCATOR_AUTH; default keys)")
	console.RegisterFormat(fs, &c.format)
}

// settings are the resolved connection settings: each from its flag, else
// the environment, else the settings file, else the default. Nothing is
// sent to the broker here.
type settings struct {
	baseURL, keyID, secret, account, db string
	env                                 brokerclient.Env
	auth, clientSecret                  string
	// keyVars are the variables the key pair was read from:
	// LOCATOR_KEY_ID and LOCATOR_SECRET unless a named account says others.
	keyVars [2]string
	// from says where each setting came from, for 'locator config'.
	from map[string]string
}

// Where a setting came from, when not a flag, a variable or the file.
const fromDefault = "default"

// layer picks every setting by precedence; resolve checks them.
func (c *connFlags) layer(file *settingsFile) settings {
	get := c.m.Getenv
	s := settings{from: map[string]string{}}
	pick := func(name, flag, env, inFile, where, def string) string {
		switch {
		case flag != "":
			s.from[name] = "flag --" + name
			return flag
		case get(env) != "":
			s.from[name] = "env " + env
			return get(env)
		case inFile != "":
			s.from[name] = where
			return inFile
		}
		s.from[name] = fromDefault
		return def
	}
	s.account = pick("account", c.account, "LOCATOR_ACCOUNT", file.Account, file.path, "")
	// A named account brings its own address, environment and key
	// variables, ahead of the file's general ones.
	named, isNamed := file.Accounts[s.account]
	where := file.path
	if isNamed {
		where = fmt.Sprintf("%s (account %q)", file.path, s.account)
		s.from["account"] += fmt.Sprintf(" (named account %q)", s.account)
		if named.Account != "" {
			s.account = named.Account
		}
	}
	s.account = strings.ToUpper(strings.TrimSpace(s.account))
	inFile := func(own, general string) (string, string) {
		if own != "" {
			return own, where
		}
		return general, file.path
	}
	v, w := inFile(named.BaseURL, file.BaseURL)
	s.baseURL = pick("base-url", c.baseURL, "LOCATOR_BASE_URL", v, w, "")
	v, w = inFile(named.Env, file.Env)
	s.env = brokerclient.Env(strings.ToLower(pick("env", c.env, "LOCATOR_ENV", v, w, string(brokerclient.EnvLive))))
	s.auth = strings.ToLower(pick("auth", c.auth, "LOCATOR_AUTH", file.Auth, file.path, authKeys))
	s.db = pick("db", c.db, "LOCATOR_DB", file.DB, file.path, defaultDBPath(get))
	s.keyVars = [2]string{"LOCATOR_KEY_ID", "LOCATOR_SECRET"}
	if named.KeyIDEnv != "" {
		s.keyVars[0] = named.KeyIDEnv
	}
	if named.SecretEnv != "" {
		s.keyVars[1] = named.SecretEnv
	}
	// Secrets have no flag and no place in the file: the environment only.
	s.keyID, s.secret = c.m.secretEnv(s.keyVars[0]), c.m.secretEnv(s.keyVars[1])
	s.clientSecret = c.m.secretEnv("LOCATOR_CLIENT_SECRET")
	return s
}

// resolve reads the settings file, picks every setting and checks them;
// the settings come back as far as they were picked even on an error.
func (c *connFlags) resolve(needAccount bool) (settings, error) {
	s, err := c.resolveBase()
	if err != nil {
		return s, err
	}
	if err := s.checkCredentials(); err != nil {
		return s, err
	}
	if needAccount {
		if s.account == "" {
			return s, usagef("no account: set LOCATOR_ACCOUNT or --account")
		}
		if strings.ContainsAny(s.account, "/?#% ") {
			return s, usagef("account %q is not an account id", s.account)
		}
	}
	return s, nil
}

// resolveBase is resolve without the key pair and the account: the
// address, environment and database, for `serve --config`, whose accounts
// name their own key pairs.
func (c *connFlags) resolveBase() (settings, error) {
	file, err := c.m.loadSettings()
	if err != nil {
		return settings{}, err
	}
	s := c.layer(file)
	if s.env != brokerclient.EnvLive && s.env != brokerclient.EnvPaper {
		return s, usagef("--env %q: want live or paper", s.env)
	}
	if s.baseURL == "" {
		return s, usagef("no broker address: set LOCATOR_BASE_URL or --base-url (try 'locator sim' for a local one)")
	}
	return s, s.checkBaseURL()
}

// checkBaseURL is checkBaseURL of the picked address, saying where it
// came from.
func (s settings) checkBaseURL() error {
	if err := checkBaseURL(s.baseURL); err != nil {
		return usagef("%v (set by %s)", err, s.from["base-url"])
	}
	return nil
}

// dbPath is the database of a command that needs nothing else.
func (c *connFlags) dbPath() (string, error) {
	file, err := c.m.loadSettings()
	if err != nil {
		return "", err
	}
	return c.layer(file).db, nil
}

func defaultDBPath(get func(string) string) string {
	if d := get("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "locator", "locator.db")
	}
	if h := get("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "locator", "locator.db")
	}
	return "locator.db"
}

// logger is the log of the client and the engine: silent unless -v for a
// command, which prints its own outcome and the error that ends it (a
// retried 429 or a reconnect is noise to the person waiting); -v shows what
// the engine does, -vv also the client's retries and reconnects. A daemon
// logs its warnings by default.
func (c *connFlags) logger() *slog.Logger {
	switch {
	case c.daemon:
		return c.daemonLogger(slog.LevelWarn)
	case c.m.verbosity >= 2:
		return slog.New(slog.NewTextHandler(c.m.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	case c.m.verbosity == 1:
		return slog.New(slog.NewTextHandler(c.m.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

// daemonLogger is the log of serve and run: nobody watches a daemon's
// outcome at a terminal, its log is how it is watched, so it is on by
// default from level (debug with -v), as JSON lines with --json.
func (c *connFlags) daemonLogger(level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if c.m.verbosity > 0 {
		opts.Level = slog.LevelDebug
	}
	if c.format == console.JSON {
		return slog.New(slog.NewJSONHandler(c.m.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(c.m.Stderr, opts))
}

func (c *connFlags) client(s settings, clk clock.Clock) (*brokerclient.Client, error) {
	creds, err := c.credentials(s)
	if err != nil {
		return nil, err
	}
	opts := append(creds,
		brokerclient.WithBaseURL(s.baseURL),
		brokerclient.WithClock(clk),
		brokerclient.WithLogger(c.logger()),
		brokerclient.WithUserAgent(userAgent),
	)
	if c.observe != nil {
		opts = append(opts, brokerclient.WithObserver(c.observe))
	}
	return brokerclient.NewClient(opts...)
}

// accountError turns the start-up checks' failures into usage errors (exit
// 2, nothing was sent) with a message a person can act on.
func accountError(account string, err error) error {
	switch {
	case errors.Is(err, brokerclient.ErrEnvMismatch), errors.Is(err, brokerclient.ErrAccountNotActive):
		return usagef("%v; nothing was sent", err)
	case errors.Is(err, brokerclient.ErrNotFound):
		return usagef("account %s not found for these keys (or the keys are invalid); nothing was sent", account)
	}
	return err
}

// checkBaseURL refuses a broker address brokerclient.CheckAddress refuses
// (plain http beyond loopback, a password or a query in it), without
// quoting it: it may carry a secret.
func checkBaseURL(raw string) error {
	if _, err := brokerclient.CheckAddress(raw, brokerclient.BrokerAddress); err != nil {
		return usagef("%v", err)
	}
	return nil
}
