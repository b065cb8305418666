package main

import (
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
)

// connFlags are the connection settings every broker command shares. The
// secret has no flag: flags show in process listings (DESIGN.md rule 7).
type connFlags struct {
	m       *Main
	baseURL string
	account string
	db      string
	env     string
	auth    string
	json    bool
	verbose bool
	// observe, when set, sees every broker call (a process serving
	// /metrics).
	observe func(route string, status int, d time.Duration)
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.baseURL, "base-url", "", "broker REST address (env LOCATOR_BASE_URL)")
	fs.StringVar(&c.account, "account", "", "account id (env LOCATOR_ACCOUNT)")
	fs.StringVar(&c.db, "db", "", "SQLite database path (env LOCATOR_DB; default ~/.local/state/locator/locator.db)")
	fs.StringVar(&c.env, "env", "", "environment you mean to use: live or paper (env LOCATOR_ENV; default live); writes are refused when the account is the other kind")
	fs.StringVar(&c.auth, "auth", "", "credentials: keys (LOCATOR_KEY_ID and LOCATOR_SECRET) or partner (the tokens of 'locator login --partner'; needs LOCATOR_CLIENT_SECRET) (env LOCATOR_AUTH; default keys)")
	fs.BoolVar(&c.json, "json", false, "print machine-readable JSON, one object per line")
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "log the engine's decisions to stderr")
}

// settings resolves flags over the environment and checks them; nothing is
// sent to the broker here.
type settings struct {
	baseURL, keyID, secret, account, db string
	env                                 brokerclient.Env
	auth, clientSecret                  string
}

func (c *connFlags) resolve(needAccount bool) (settings, error) {
	get := c.m.Getenv
	pick := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		return get(env)
	}
	s := settings{
		baseURL: pick(c.baseURL, "LOCATOR_BASE_URL"),
		keyID:   get("LOCATOR_KEY_ID"),
		secret:  get("LOCATOR_SECRET"),
		account: strings.ToUpper(strings.TrimSpace(pick(c.account, "LOCATOR_ACCOUNT"))),
		db:      pick(c.db, "LOCATOR_DB"),
		env:     brokerclient.Env(strings.ToLower(pick(c.env, "LOCATOR_ENV"))),
		auth:    strings.ToLower(pick(c.auth, "LOCATOR_AUTH")),
		// The client secret, like the key secret, has no flag.
		clientSecret: get("LOCATOR_CLIENT_SECRET"),
	}
	if s.env == "" {
		s.env = brokerclient.EnvLive
	}
	if s.env != brokerclient.EnvLive && s.env != brokerclient.EnvPaper {
		return s, usagef("--env %q: want live or paper", s.env)
	}
	if s.baseURL == "" {
		return s, usagef("no broker address: set LOCATOR_BASE_URL or --base-url (try 'locator sim' for a local one)")
	}
	if u, err := url.Parse(s.baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, usagef("broker address %q: want http(s)://host[:port]", s.baseURL)
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
	if s.db == "" {
		s.db = defaultDBPath(get)
	}
	return s, nil
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

func (c *connFlags) logger() *slog.Logger {
	if !c.verbose {
		return slog.New(slog.NewTextHandler(c.m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewTextHandler(c.m.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
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
