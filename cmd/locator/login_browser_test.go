package main

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/browsertest"
)

// The whole login in a real browser: the CLI prints the authorize address,
// Chromium opens it, fills username, password and code, submits, and the
// hosted page redirects to the CLI's loopback callback. Then the flow's
// checks (tokens encrypted, commands over Bearer, logout) and a replay of
// the code the browser carried, which the token endpoint refuses.
func TestBrowserPartnerLogin(t *testing.T) {
	t.Parallel()
	ctx := browsertest.New(t)
	b := setupPartnerCLI(t)
	var callback string
	b.checkPartnerFlow(t, func(authURL string) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(authURL),
			chromedp.WaitVisible(chromedp.ID("username")),
			chromedp.SendKeys(chromedp.ID("username"), "alice"),
			chromedp.SendKeys(chromedp.ID("password"), "alice-pass"),
			chromedp.SendKeys(chromedp.ID("code"), "123456"),
			chromedp.Click(chromedp.ID("submit")),
			chromedp.WaitVisible(chromedp.ID("result")),
		)
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		result, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("result")))
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		if callback, err = chromedp.Run(ctx, chromedp.Location()); err != nil {
			t.Fatalf("browser: %v", err)
		}
		if !strings.Contains(result, "Signed in") {
			t.Errorf("callback page says %q", result)
		}
	})
	cb, err := url.Parse(callback)
	if err != nil || cb.Query().Get("code") == "" {
		t.Fatalf("browser ended at %q", callback)
	}
	replay := b.sim.PartnerClient(t, b.sim.Partner.LiveClientID)
	_, err = replay.Partner.Exchange(t.Context(), cb.Query().Get("code"), brokerclient.NewAttempt().Verifier)
	var te *brokerclient.TokenError
	if !errors.As(err, &te) || te.StatusCode != 400 {
		t.Errorf("replayed code: %v", err)
	}
}

// A wrong client id shows the invalid-client-id message on the page, and
// no form.
func TestBrowserWrongClientID(t *testing.T) {
	t.Parallel()
	ctx := browsertest.New(t)
	b := setupPartnerCLI(t)
	login := b.startLogin(t, map[string]string{"LOCATOR_CLIENT_ID": "not-a-client"})
	if err := chromedp.Do(ctx, chromedp.Navigate(login.authURL), chromedp.WaitVisible(chromedp.ID("error"))); err != nil {
		t.Fatalf("browser: %v", err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error")))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	forms, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.forms.length`))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !strings.Contains(msg, "Invalid client_id") || forms != 0 {
		t.Errorf("page says %q with %d forms", msg, forms)
	}
	login.cancel()
	if code, _, _ := login.wait(t); code == 0 {
		t.Error("login succeeded without a sign-in")
	}
}
