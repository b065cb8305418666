package simtest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// PartnerLogin signs user in on the hosted login page as a browser's form
// would, starting at authURL (the authorize address), and returns the
// address the page redirected to: the callback with its code and state.
// Tests that need a real browser use chromedp instead.
func (b *Bundle) PartnerLogin(tb testing.TB, authURL, user, password, code string) *url.URL {
	tb.Helper()
	hc := *b.Server.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	page, err := url.Parse(authURL)
	if err != nil {
		tb.Fatalf("simtest: authorize address: %v", err)
	}
	resp, err := hc.Get(authURL)
	if err != nil {
		tb.Fatalf("simtest: login page: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("simtest: login page: %d %s", resp.StatusCode, body)
	}
	form := page.Query()
	form.Set("username", user)
	form.Set("password", password)
	form.Set("code", code)
	resp, err = hc.Post(b.URL+page.Path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		tb.Fatalf("simtest: sign in: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		tb.Fatalf("simtest: sign in as %s: %d %s", user, resp.StatusCode, body)
	}
	to, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		tb.Fatalf("simtest: redirect: %v", err)
	}
	return to
}
