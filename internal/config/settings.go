package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/workflow"
)

// Settings are the resolved connection settings: each from its flag, else
// the environment, else the settings file, else the default. Nothing is
// sent to the broker here.
type Settings struct {
	BaseURL, KeyID, Secret, Account, DB string
	Env                                 brokerclient.Env
	Auth, ClientSecret                  string
	// Budget is the account's locate budget per trading day as written
	// ("20,HTBX=10"; "" for none), which its owner keeps.
	Budget string
	// KeyVars are the variables the key pair was read from:
	// LOCATOR_KEY_ID and LOCATOR_SECRET unless a named account says others.
	KeyVars [2]string
	// From says where each setting came from, for 'locator config'.
	From map[string]string
}

// BudgetEnv holds the locate budget per account per trading day that the
// account's owner keeps: a total in dollars and/or SYMBOL=dollars,
// comma-separated ("20", "20,HTBX=10"). It goes before the settings
// file's locateBudget (of a named account, else the file's).
const BudgetEnv = "LOCATOR_LOCATE_BUDGET"

// Flags are the settings given on the command line ("" when not given).
type Flags struct {
	BaseURL, Account, DB, Env, Auth string
}

// Env is how a run reads its environment: Lookup for plain variables,
// Secret for a secret's (a key, a token), which may remove it once read.
type Env struct {
	Lookup, Secret func(string) string
}

// FromDefault is where a setting came from when not from a flag, a
// variable or the file.
const FromDefault = "default"

// Layer picks every setting by precedence; Check checks them.
func Layer(c Flags, file *File, env Env) Settings {
	get := env.Lookup
	s := Settings{From: map[string]string{}}
	pick := func(name, flag, env, inFile, where, def string) string {
		switch {
		case flag != "":
			s.From[name] = "flag --" + name
			return flag
		case get(env) != "":
			s.From[name] = "env " + env
			return get(env)
		case inFile != "":
			s.From[name] = where
			return inFile
		}
		s.From[name] = FromDefault
		return def
	}
	s.Account = pick("account", c.Account, "LOCATOR_ACCOUNT", file.Account, file.Path, "")
	// A named account brings its own address, environment and key
	// variables, ahead of the file's general ones.
	named, isNamed := file.Accounts[s.Account]
	where := file.Path
	if isNamed {
		where = fmt.Sprintf("%s (account %q)", file.Path, s.Account)
		s.From["account"] += fmt.Sprintf(" (named account %q)", s.Account)
		if named.Account != "" {
			s.Account = named.Account
		}
	}
	s.Account = strings.ToUpper(strings.TrimSpace(s.Account))
	inFile := func(own, general string) (string, string) {
		if own != "" {
			return own, where
		}
		return general, file.Path
	}
	v, w := inFile(named.BaseURL, file.BaseURL)
	s.BaseURL = pick("base-url", c.BaseURL, "LOCATOR_BASE_URL", v, w, "")
	v, w = inFile(named.Env, file.Env)
	s.Env = brokerclient.Env(strings.ToLower(pick("env", c.Env, "LOCATOR_ENV", v, w, string(brokerclient.EnvLive))))
	s.Auth = strings.ToLower(pick("auth", c.Auth, "LOCATOR_AUTH", file.Auth, file.Path, AuthKeys))
	s.DB = pick("db", c.DB, "LOCATOR_DB", file.DB, file.Path, DefaultDBPath(get))
	v, w = inFile(named.LocateBudget, file.LocateBudget)
	s.Budget = pick("locate-budget", "", BudgetEnv, v, w, "")
	s.KeyVars = [2]string{"LOCATOR_KEY_ID", "LOCATOR_SECRET"}
	if named.KeyIDEnv != "" {
		s.KeyVars[0] = named.KeyIDEnv
	}
	if named.SecretEnv != "" {
		s.KeyVars[1] = named.SecretEnv
	}
	// Secrets have no flag and no place in the file: the environment only.
	s.KeyID, s.Secret = env.Secret(s.KeyVars[0]), env.Secret(s.KeyVars[1])
	s.ClientSecret = env.Secret("LOCATOR_CLIENT_SECRET")
	return s
}

// Pick is Layer with the one check of a setting that must never be used
// as given (CheckDB); Check checks the rest.
func Pick(c Flags, file *File, env Env) (Settings, error) {
	s := Layer(c, file, env)
	return s, s.CheckDB()
}

// LocateBudget is s's locate budget (none when unset), naming where it
// came from when it does not read.
func (s Settings) LocateBudget() (workflow.Budget, error) {
	b, err := workflow.ParseBudget(s.Budget)
	if err != nil {
		return b, fmt.Errorf("locate budget (%s): %v", s.From["locate-budget"], err)
	}
	return b, nil
}

// Check checks the picked settings: the environment's name, the address
// (see CheckBase), the credentials, and with needAccount the account.
func (s Settings) Check(needAccount bool) error {
	if err := s.CheckBase(); err != nil {
		return err
	}
	if err := s.CheckCredentials(); err != nil {
		return err
	}
	if needAccount {
		if s.Account == "" {
			return errors.New("no account: set LOCATOR_ACCOUNT or --account")
		}
		if strings.ContainsAny(s.Account, "/?#% ") {
			return fmt.Errorf("account %q is not an account id", s.Account)
		}
	}
	return nil
}

// CheckDB refuses a Postgres password given as the --db flag: the command
// line is visible to every user of the machine (ps). In LOCATOR_DB, the
// settings file, PGPASSWORD or ~/.pgpass it stays private. It refuses
// libpq's keyword form from anywhere (store.ErrKeywordDSN), quoting
// nothing of it: it is no file name, and may hold a password.
func (s Settings) CheckDB() error {
	if store.KeywordDSN(s.DB) {
		return fmt.Errorf("%s: %w", s.From["db"], store.ErrKeywordDSN)
	}
	if !strings.HasPrefix(s.From["db"], "flag") || !(strings.HasPrefix(s.DB, "postgres://") || strings.HasPrefix(s.DB, "postgresql://")) {
		return nil
	}
	u, err := url.Parse(s.DB)
	if err != nil {
		return errors.New("--db: the Postgres URL does not parse")
	}
	_, secret := u.User.Password()
	for k := range u.Query() {
		secret = secret || store.SecretParam(k)
	}
	if secret {
		return errors.New("--db: a password (in the user part or a password or sslpassword parameter) on the command line is visible to every user of this machine; put the URL in LOCATOR_DB or the password in PGPASSWORD or ~/.pgpass")
	}
	return nil
}

// CheckBase is Check without the key pair and the account: the address
// and environment, for `serve --config`, whose accounts name their own
// key pairs.
func (s Settings) CheckBase() error {
	if s.Env != brokerclient.EnvLive && s.Env != brokerclient.EnvPaper {
		return fmt.Errorf("--env %q: want live or paper", s.Env)
	}
	if s.BaseURL == "" {
		return errors.New("no broker address: set LOCATOR_BASE_URL or --base-url (try 'locator sim' for a local one)")
	}
	return s.CheckBaseURL()
}

// CheckBaseURL refuses the picked broker address when
// brokerclient.CheckAddress does (plain http beyond loopback, a password
// or a query in it), saying where it came from and never quoting it: it
// may carry a secret.
func (s Settings) CheckBaseURL() error {
	if _, err := brokerclient.CheckAddress(s.BaseURL, brokerclient.BrokerAddress); err != nil {
		return fmt.Errorf("%w (set by %s)", err, s.From["base-url"])
	}
	return nil
}

// DefaultDBPath is the database when none is set: the user's state
// folder.
func DefaultDBPath(get func(string) string) string {
	if d := get("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "locator", "locator.db")
	}
	if h := get("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "locator", "locator.db")
	}
	return "locator.db"
}

// Which credentials a run uses (--auth, LOCATOR_AUTH): the API key pair by
// default, or the partner tokens stored by 'locator login --partner'.
const (
	AuthKeys    = "keys"
	AuthPartner = "partner"
)

// CheckCredentials checks that the chosen credentials are present; nothing
// is sent or read from disk here.
func (s Settings) CheckCredentials() error {
	switch s.Auth {
	case AuthKeys:
		if s.KeyID == "" || s.Secret == "" {
			return fmt.Errorf("no API key: set %s and %s in the environment (or use --auth partner after 'locator login --partner')", s.KeyVars[0], s.KeyVars[1])
		}
	case AuthPartner:
		if s.ClientSecret == "" {
			return fmt.Errorf("--auth partner: set LOCATOR_CLIENT_SECRET in the environment; the partner client secret renews the tokens")
		}
	default:
		return fmt.Errorf("--auth %q: want keys or partner", s.Auth)
	}
	return nil
}
