package config

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/locatorhq/locator/brokerclient"
)

// PartnerProgram checks the partner OAuth program a login signs in
// through (the client id, its secret, the issued login address and the
// registered loopback redirect address) before anything is sent.
func PartnerProgram(clientID, clientSecret, loginURL, redirectURI string) (brokerclient.PartnerConfig, *url.URL, error) {
	cfg := brokerclient.PartnerConfig{ClientID: clientID, ClientSecret: clientSecret, LoginURL: loginURL, RedirectURI: redirectURI}
	if clientID == "" {
		return cfg, nil, errors.New("no client id: set LOCATOR_CLIENT_ID or --client-id")
	}
	if _, err := brokerclient.CheckAddress(loginURL, brokerclient.LoginAddress); err != nil {
		return cfg, nil, fmt.Errorf("%w (LOCATOR_LOGIN_URL or --login-url: the issued address)", err)
	}
	redirect, err := url.Parse(redirectURI)
	if err != nil || redirect.Scheme != "http" || redirect.Port() == "" || !brokerclient.Loopback(redirect.Hostname()) {
		return cfg, nil, fmt.Errorf("redirect address %q: want the registered http://127.0.0.1:PORT/... address on this machine (LOCATOR_REDIRECT_URI or --redirect-uri)", redirectURI)
	}
	return cfg, redirect, nil
}
