package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/vault"
)

// loginCommand signs a user in through the partner OAuth program (spec:
// "Partner OAuth 2.0 (direct program)"): the user signs in on the hosted
// page in a browser, the page redirects to a loopback address this command
// listens on, and the code is exchanged at once. The tokens are stored
// encrypted (package vault); the client secret only ever comes from the
// environment.
type loginCommand struct {
	conn        connFlags
	partner     bool
	clientID    string
	loginURL    string
	redirectURI string
	timeout     time.Duration
}

func (c *loginCommand) flags(fs *pflag.FlagSet) {
	c.conn.register(fs)
	fs.BoolVar(&c.partner, "partner", false, "sign in through the partner OAuth program (API keys need no login)")
	fs.StringVar(&c.clientID, "client-id", "", "partner client id: the demo one for paper logins, the live one for live (env LOCATOR_CLIENT_ID)")
	fs.StringVar(&c.loginURL, "login-url", "", "partner login address, as issued (env LOCATOR_LOGIN_URL)")
	fs.StringVar(&c.redirectURI, "redirect-uri", "", "registered redirect address, on this machine's loopback, e.g. http://127.0.0.1:8765/callback (env LOCATOR_REDIRECT_URI)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "how long to wait for the sign-in")
}

// loginSettings are the checked inputs of a login; nothing is sent before
// they all are.
type loginSettings struct {
	config.Settings
	cfg      brokerclient.PartnerConfig
	redirect *url.URL
}

func (c *loginCommand) resolve() (loginSettings, error) {
	if !c.partner {
		return loginSettings{}, console.Usagef("pass --partner: the partner OAuth login is the only one (API keys are read from LOCATOR_KEY_ID and LOCATOR_SECRET)")
	}
	c.conn.auth = config.AuthPartner
	s, err := c.conn.resolve(false)
	if err != nil {
		return loginSettings{}, err
	}
	pick := func(flag, env string) string { return flagOrEnv(c.conn.m.Getenv, flag, env) }
	cfg, redirect, err := config.PartnerProgram(pick(c.clientID, "LOCATOR_CLIENT_ID"), s.ClientSecret,
		pick(c.loginURL, "LOCATOR_LOGIN_URL"), pick(c.redirectURI, "LOCATOR_REDIRECT_URI"))
	if err != nil {
		return loginSettings{}, console.Usagef("%v", err)
	}
	l := loginSettings{Settings: s, cfg: cfg, redirect: redirect}
	if c.timeout <= 0 {
		return l, console.Usagef("--timeout must be positive")
	}
	return l, nil
}

func (c *loginCommand) run(ctx context.Context, args []string) error {
	l, err := c.resolve()
	if err != nil {
		return err
	}
	client, err := brokerclient.NewClient(
		brokerclient.WithBaseURL(l.BaseURL), brokerclient.WithPartner(l.cfg),
		brokerclient.WithLogger(c.conn.logger()), brokerclient.WithUserAgent(service.UserAgent),
	)
	if err != nil {
		return console.Usagef("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	out := c.conn.out()
	tok, err := client.Partner.SignIn(ctx, l.redirect, func(authURL string) {
		out.Event(map[string]string{"event": "authorize", "authorizeURL": authURL},
			"Open this address in a browser and sign in:\n  "+authURL)
	})
	var te *brokerclient.TokenError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no sign-in within %s", c.timeout)
	case errors.As(err, &te):
		return &console.CodeError{Code: console.ExitBroker, Msg: err.Error()}
	case err != nil:
		return err
	}

	v := vault.Open(l.DB, c.conn.m.Getenv)
	login := vault.Login{BaseURL: l.BaseURL, ClientID: l.cfg.ClientID, LoginURL: l.cfg.LoginURL, RedirectURI: l.cfg.RedirectURI, Token: *tok}
	if err := v.Save(login); err != nil {
		return fmt.Errorf("store the tokens: %w", err)
	}
	out.Event(map[string]string{"event": "signed_in", "tokenFile": v.TokenFile, "identityFile": v.IdentityFile},
		fmt.Sprintf("Signed in. The tokens are stored encrypted in %s (key: %s).", v.TokenFile, v.IdentityFile))
	return c.listAccounts(ctx, l)
}

// listAccounts shows the accounts the token reaches, for the user to
// choose one; an empty list is explained, since the spec says it is a
// provisioning issue rather than an empty portfolio.
func (c *loginCommand) listAccounts(ctx context.Context, l loginSettings) error {
	client, err := c.conn.dialer().Client(l.Settings) // the tokens just stored, renewed into the vault
	if err != nil {
		return err
	}
	accts, _, err := client.Accounts.List(ctx)
	if err != nil {
		return fmt.Errorf("list the accounts: %w", err)
	}
	out := c.conn.out()
	if len(accts) == 0 {
		out.Event(map[string]string{"event": "no_accounts", "message": "no account reachable: a provisioning issue"},
			"The sign-in worked, but no account is reachable with it. This is a provisioning issue, not an empty\n"+
				"portfolio: select this platform on your live profile at the broker (or ask them to), then log in again.")
		return nil
	}
	console.Accounts(out, accts, l.Account)
	out.Event(map[string]string{"event": "choose_account"},
		"\nChoose an account with --account or LOCATOR_ACCOUNT, and use these tokens with --auth partner or LOCATOR_AUTH=partner.")
	return nil
}

// logoutCommand forgets the stored partner tokens. Revoking them at the
// broker is coordinated with its operator (spec: Partner OAuth, item 7).
type logoutCommand struct{ conn connFlags }

func (c *logoutCommand) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.conn.db, "db", "", "SQLite database path, beside which the tokens are stored (env LOCATOR_DB)")
	console.RegisterFormat(fs, &c.conn.format)
}

func (c *logoutCommand) run(ctx context.Context, args []string) error {
	db, err := c.conn.dbPath()
	if err != nil {
		return err
	}
	v := vault.Open(db, c.conn.m.Getenv)
	had, err := v.Forget()
	if err != nil {
		return err
	}
	text := "No partner tokens were stored."
	if had {
		text = "Forgot the partner tokens (" + v.TokenFile + ")."
	}
	c.conn.out().Event(map[string]any{"event": "logged_out", "forgot": had}, text)
	return nil
}

// flagOrEnv is the flag's value when given, else the environment's.
func flagOrEnv(getenv func(string) string, flag, env string) string {
	if flag != "" {
		return flag
	}
	return getenv(env)
}
