package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/config"
	"github.com/locatorhq/locator/vault"
)

// userAgent is the stable, identifying User-Agent the spec asks servers to
// send, on REST calls and on the token endpoint alike; the pid tells which
// of a desk's processes sent a request.
var userAgent = "locator-cli/1 (pid " + strconv.Itoa(os.Getpid()) + ")"

// credentials are the client options of the chosen credentials. Partner
// tokens come from the encrypted token file, and every renewed pair goes
// back to it before the old refresh token is forgotten.
func (c *connFlags) credentials(s config.Settings) ([]brokerclient.Option, error) {
	if s.Auth != config.AuthPartner {
		return []brokerclient.Option{brokerclient.WithCredentials(s.KeyID, s.Secret)}, nil
	}
	v := vault.Open(s.DB, c.m.Getenv)
	l, err := v.Load()
	if err != nil {
		return nil, err
	}
	if strings.TrimSuffix(l.BaseURL, "/") != strings.TrimSuffix(s.BaseURL, "/") {
		return nil, usagef("the stored partner login is for %s, not %s: run 'locator login --partner' against this broker", l.BaseURL, s.BaseURL)
	}
	cfg := brokerclient.PartnerConfig{ClientID: l.ClientID, ClientSecret: s.ClientSecret, LoginURL: l.LoginURL, RedirectURI: l.RedirectURI}
	save := func(tok brokerclient.PartnerToken) error {
		l.Token = tok
		return v.Save(l)
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
