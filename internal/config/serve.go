package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/fileperm"
)

// ServeFile lists the accounts a `serve` owns, each as the settings file
// names an account: its id, and optionally its address, environment and
// the names of the environment variables holding its key pair (secrets
// never sit in the file).
type ServeFile struct {
	Accounts []NamedAccount `json:"accounts"`
}

// LoadServe reads and checks serve's accounts file: each account's id,
// environment, address and key variables, none listed twice; a key
// variable not named is LOCATOR_KEY_ID / LOCATOR_SECRET.
func LoadServe(path string) ([]NamedAccount, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := fileperm.Check(path); err != nil {
		return nil, fmt.Errorf("config %w", err)
	}
	var cfg ServeFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if len(cfg.Accounts) == 0 {
		return nil, fmt.Errorf("config %s: no accounts", path)
	}
	seen := map[string]bool{}
	for i, a := range cfg.Accounts {
		a.Account = strings.ToUpper(strings.TrimSpace(a.Account))
		switch {
		case a.Account == "" || strings.ContainsAny(a.Account, "/?#% "):
			return nil, fmt.Errorf("config %s: account %d: %q is not an account id", path, i+1, a.Account)
		case seen[a.Account]:
			return nil, fmt.Errorf("config %s: account %s listed twice", path, a.Account)
		case a.Env != "" && a.Env != string(brokerclient.EnvLive) && a.Env != string(brokerclient.EnvPaper):
			return nil, fmt.Errorf("config %s: account %s: env %q: want live or paper", path, a.Account, a.Env)
		}
		if err := a.CheckVars(); err != nil {
			return nil, fmt.Errorf("config %s: account %s: %w", path, a.Account, err)
		}
		if a.BaseURL != "" {
			if _, err := brokerclient.CheckAddress(a.BaseURL, brokerclient.BrokerAddress); err != nil {
				return nil, fmt.Errorf("config %s: account %s: %w", path, a.Account, err)
			}
		}
		if a.KeyIDEnv == "" {
			a.KeyIDEnv = "LOCATOR_KEY_ID"
		}
		if a.SecretEnv == "" {
			a.SecretEnv = "LOCATOR_SECRET"
		}
		seen[a.Account] = true
		cfg.Accounts[i] = a
	}
	return cfg.Accounts, nil
}

// For is s for account a of serve's file: its id, key pair (read through
// secret), its own address and environment where it names them, and its
// locate budget (LOCATOR_LOCATE_BUDGET when set, else its own).
func (s Settings) For(a NamedAccount, secret func(string) string) (Settings, error) {
	s.Account, s.KeyID, s.Secret = a.Account, secret(a.KeyIDEnv), secret(a.SecretEnv)
	s.KeyVars = [2]string{a.KeyIDEnv, a.SecretEnv}
	if a.Env != "" {
		s.Env = brokerclient.Env(a.Env)
	}
	if a.BaseURL != "" {
		s.BaseURL = a.BaseURL
	}
	if !strings.HasPrefix(s.From["locate-budget"], "env ") && a.LocateBudget != s.Budget {
		// The account's own budget, never the settings file's default
		// account's.
		s.From = maps.Clone(s.From) // s's map is its base's, shared by every account
		s.Budget, s.From["locate-budget"] = a.LocateBudget, fmt.Sprintf("serve's file (account %s)", a.Account)
		if a.LocateBudget == "" {
			s.From["locate-budget"] = FromDefault
		}
	}
	if err := s.CheckCredentials(); err != nil {
		return s, fmt.Errorf("account %s: %w (set %s and %s)", a.Account, err, a.KeyIDEnv, a.SecretEnv)
	}
	return s, nil
}
