package main

import (
	"strings"

	"github.com/locatorhq/locator/brokerclient"
)

// Which credentials a command uses (--auth, LOCATOR_AUTH): the API key pair
// by default, or the partner tokens stored by 'locator login --partner'.
const (
	authKeys    = "keys"
	authPartner = "partner"
)

// userAgent is the stable, identifying User-Agent the spec asks servers to
// send, on REST calls and on the token endpoint alike.
const userAgent = "locator-cli/1"

// checkCredentials checks that the chosen credentials are present; nothing
// is sent or read from disk here.
func (s *settings) checkCredentials() error {
	switch s.auth {
	case authKeys:
		if s.keyID == "" || s.secret == "" {
			return usagef("no API key: set %s and %s in the environment (or use --auth partner after 'locator login --partner')", s.keyVars[0], s.keyVars[1])
		}
	case authPartner:
		if s.clientSecret == "" {
			return usagef("--auth partner: set LOCATOR_CLIENT_SECRET in the environment; the partner client secret renews the tokens")
		}
	default:
		return usagef("--auth %q: want keys or partner", s.auth)
	}
	return nil
}

// credentials are the client options of the chosen credentials. Partner
// tokens come from the encrypted token file, and every renewed pair goes
// back to it before the old refresh token is forgotten.
func (c *connFlags) credentials(s settings) ([]brokerclient.Option, error) {
	if s.auth != authPartner {
		return []brokerclient.Option{brokerclient.WithCredentials(s.keyID, s.secret)}, nil
	}
	vault := newTokenVault(s.db, c.m.Getenv)
	l, err := vault.load()
	if err != nil {
		return nil, err
	}
	if strings.TrimSuffix(l.BaseURL, "/") != strings.TrimSuffix(s.baseURL, "/") {
		return nil, usagef("the stored partner login is for %s, not %s: run 'locator login --partner' against this broker", l.BaseURL, s.baseURL)
	}
	cfg := brokerclient.PartnerConfig{ClientID: l.ClientID, ClientSecret: s.clientSecret, LoginURL: l.LoginURL, RedirectURI: l.RedirectURI}
	save := func(tok brokerclient.PartnerToken) error {
		l.Token = tok
		return vault.save(l)
	}
	return []brokerclient.Option{brokerclient.WithPartner(cfg), brokerclient.WithPartnerToken(l.Token, save)}, nil
}

// flagOrEnv is the flag's value when given, else the environment's.
func flagOrEnv(getenv func(string) string, flag, env string) string {
	if flag != "" {
		return flag
	}
	return getenv(env)
}
