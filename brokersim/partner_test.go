package brokersim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// partnerBundle is a simulator with the default partner program and an HTTP
// client that stops at redirects, so the test sees the callback address.
type partnerBundle struct {
	*simtest.Bundle
	p    *brokersim.ScenarioPartner
	http *http.Client
}

func setupPartner(t *testing.T) *partnerBundle {
	t.Helper()
	b := simtest.New(t)
	p := brokersim.DefaultScenario().Partner
	hc := *b.Server.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &partnerBundle{Bundle: b, p: p, http: &hc}
}

func (b *partnerBundle) authorizeQuery(clientID string) url.Values {
	return url.Values{"client_id": {clientID}, "redirect_uri": {b.p.RedirectURI}, "response_type": {"code"}, "state": {"st-1"}}
}

func (b *partnerBundle) send(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *partnerBundle) postForm(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", b.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.send(t, req)
}

// login signs user in on clientID and returns the code of the redirect.
func (b *partnerBundle) login(t *testing.T, clientID, user, password, otp string) (*http.Response, string) {
	t.Helper()
	form := b.authorizeQuery(clientID)
	form.Set("username", user)
	form.Set("password", password)
	form.Set("code", otp)
	return b.postForm(t, b.p.LoginPath, form)
}

func (b *partnerBundle) mustCode(t *testing.T, clientID, user, password, otp string) string {
	t.Helper()
	resp, body := b.login(t, clientID, user, password, otp)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("login %s: %d %s", user, resp.StatusCode, body)
	}
	to, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || to.Query().Get("state") != "st-1" || to.Query().Get("code") == "" {
		t.Fatalf("redirect %q", resp.Header.Get("Location"))
	}
	if got := to.Scheme + "://" + to.Host + to.Path; got != b.p.RedirectURI {
		t.Fatalf("redirected to %s, want %s", got, b.p.RedirectURI)
	}
	return to.Query().Get("code")
}

type tokenResp struct {
	TokenType             string `json:"token_type"`
	AccessToken           string `json:"access_token"`
	ExpiresIn             int64  `json:"expires_in"`
	RefreshToken          string `json:"refresh_token"`
	RefreshTokenExpiresIn int64  `json:"refresh_token_expires_in"`
}

func (b *partnerBundle) exchange(t *testing.T, clientID, code string) (*http.Response, string) {
	t.Helper()
	return b.postForm(t, brokersim.TokenPath, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {b.p.RedirectURI},
		"client_id": {clientID}, "client_secret": {b.p.ClientSecret},
	})
}

func decodeToken(resp *http.Response, body string) (tokenResp, error) {
	var tok tokenResp
	if resp.StatusCode != http.StatusOK {
		return tok, fmt.Errorf("token: %d %s", resp.StatusCode, body)
	}
	if err := json.Unmarshal([]byte(body), &tok); err != nil {
		return tok, err
	}
	if tok.TokenType != "Bearer" || strings.Count(tok.AccessToken, ".") != 2 || strings.Count(tok.RefreshToken, ".") != 2 {
		return tok, fmt.Errorf("token response %s", body)
	}
	return tok, nil
}

// mustToken fails the test on a refused or malformed token response.
func mustToken(t *testing.T) func(tokenResp, error) tokenResp {
	return func(tok tokenResp, err error) tokenResp {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
}

func (b *partnerBundle) accounts(t *testing.T, access string) (int, []string) {
	t.Helper()
	req, _ := http.NewRequest("GET", b.URL+"/v1/api/accounts", nil)
	req.Header.Set("Authorization", "Bearer "+access)
	resp, body := b.send(t, req)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var out struct {
		Accounts []struct{ Account string } `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, a := range out.Accounts {
		ids = append(ids, a.Account)
	}
	return resp.StatusCode, ids
}

// The login page checks the authorize parameters before it shows a form,
// and never redirects to an address that did not check out.
func TestLoginPageChecksAuthorizeParameters(t *testing.T) {
	t.Parallel()
	b := setupPartner(t)
	for _, tc := range []struct {
		name string
		edit func(url.Values)
		want string
	}{
		{"unknown client id", func(q url.Values) { q.Set("client_id", "nope") }, "Invalid client_id"},
		{"redirect differs by a slash", func(q url.Values) { q.Set("redirect_uri", b.p.RedirectURI+"/") }, "redirect_uri does not match"},
		{"response_type token", func(q url.Values) { q.Set("response_type", "token") }, "response_type"},
		{"no state", func(q url.Values) { q.Del("state") }, "state parameter is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := b.authorizeQuery(b.p.LiveClientID)
			tc.edit(q)
			req, _ := http.NewRequest("GET", b.URL+b.p.LoginPath+"?"+q.Encode(), nil)
			resp, body := b.send(t, req)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) || strings.Contains(body, "<form") {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
		})
	}
	req, _ := http.NewRequest("GET", b.URL+b.p.LoginPath+"?"+b.authorizeQuery(b.p.DemoClientID).Encode(), nil)
	resp, body := b.send(t, req)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="username"`) || !strings.Contains(body, `value="st-1"`) {
		t.Errorf("form: %d %s", resp.StatusCode, body)
	}
}

func TestLoginPageSignIn(t *testing.T) {
	t.Parallel()
	b := setupPartner(t)
	for _, tc := range []struct {
		name, client, user, pass, otp, want string
	}{
		{"wrong password", b.p.LiveClientID, "alice", "x", "123456", "Invalid username, password or code"},
		{"wrong code", b.p.LiveClientID, "alice", "alice-pass", "000000", "Invalid username, password or code"},
		{"paper login on the live client id", b.p.LiveClientID, "paula", "paula-pass", "654321", "cannot be used with this client id"},
		{"live login on the demo client id", b.p.DemoClientID, "alice", "alice-pass", "123456", "cannot be used with this client id"},
		{"not entitled", b.p.LiveClientID, "ulrich", "ulrich-pass", "222222", "Invalid login combination"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := b.login(t, tc.client, tc.user, tc.pass, tc.otp)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, tc.want) || resp.Header.Get("Location") != "" {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
		})
	}
	b.mustCode(t, b.p.LiveClientID, "alice", "alice-pass", "123456")
}

// The code exchange, the user-scoped Bearer token, the spent code, expiry on
// the fake clock, and refresh with rotation.
func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	b := setupPartner(t)
	code := b.mustCode(t, b.p.LiveClientID, "alice", "alice-pass", "123456")
	tok := mustToken(t)(decodeToken(b.exchange(t, b.p.LiveClientID, code)))
	if tok.ExpiresIn != 900 || tok.RefreshTokenExpiresIn != 86400 {
		t.Errorf("expires_in %d, refresh_token_expires_in %d", tok.ExpiresIn, tok.RefreshTokenExpiresIn)
	}
	if st, ids := b.accounts(t, tok.AccessToken); st != 200 || strings.Join(ids, ",") != "LV100001,LV100002" {
		t.Errorf("alice's accounts: %d %v", st, ids)
	}
	// A token reaches its user's accounts only.
	req, _ := http.NewRequest("GET", b.URL+"/v1/api/accounts/LV300001/pnl", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	if resp, _ := b.send(t, req); resp.StatusCode != http.StatusNotFound {
		t.Errorf("foreign account: %d", resp.StatusCode)
	}

	resp, body := b.exchange(t, b.p.LiveClientID, code)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"statusCode":"BadRequest"`) || !strings.Contains(body, `"detail":null`) {
		t.Errorf("replayed code: %d %s", resp.StatusCode, body)
	}

	b.Advance(15 * time.Minute)
	if st, _ := b.accounts(t, tok.AccessToken); st != http.StatusNotFound {
		t.Errorf("expired token: %d", st)
	}
	refresh := func(rt string) (*http.Response, string) {
		return b.postForm(t, brokersim.TokenPath, url.Values{
			"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {b.p.LiveClientID}, "client_secret": {b.p.ClientSecret},
		})
	}
	next := mustToken(t)(decodeToken(refresh(tok.RefreshToken)))
	if next.RefreshTokenExpiresIn != 0 {
		t.Errorf("refresh_token_expires_in on a refresh: %d", next.RefreshTokenExpiresIn)
	}
	if st, _ := b.accounts(t, next.AccessToken); st != 200 {
		t.Errorf("refreshed token: %d", st)
	}
	if resp, _ := refresh(tok.RefreshToken); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("rotated refresh token reused: %d", resp.StatusCode)
	}

	// The request log shows the Bearer calls and no secret.
	var sawBearer bool
	for _, r := range b.Sim.Requests() {
		if r.Path == "/v1/api/accounts" && r.Auth == "bearer" {
			sawBearer = true
		}
		for _, secret := range []string{b.p.ClientSecret, "alice-pass", code, tok.RefreshToken, tok.AccessToken} {
			if strings.Contains(r.Body+r.Query, secret) {
				t.Errorf("request log holds a secret: %+v", r)
			}
		}
	}
	if !sawBearer {
		t.Error("no bearer call in the request log")
	}
}

func TestTokenEndpointFailures(t *testing.T) {
	t.Parallel()
	b := setupPartner(t)
	// Multipart is accepted as well as form encoding.
	code := b.mustCode(t, b.p.DemoClientID, "paula", "paula-pass", "654321")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range map[string]string{"grant_type": "authorization_code", "code": code, "redirect_uri": b.p.RedirectURI, "client_id": b.p.DemoClientID, "client_secret": b.p.ClientSecret} {
		mw.WriteField(k, v)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", b.URL+brokersim.TokenPath, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	tok := mustToken(t)(decodeToken(b.send(t, req)))
	if st, ids := b.accounts(t, tok.AccessToken); st != 200 || strings.Join(ids, ",") != "PP200001" {
		t.Errorf("paula's accounts: %d %v", st, ids)
	}

	// The provisioning case: a successful login whose list is empty.
	code = b.mustCode(t, b.p.LiveClientID, "nina", "nina-pass", "111111")
	tok = mustToken(t)(decodeToken(b.exchange(t, b.p.LiveClientID, code)))
	if st, ids := b.accounts(t, tok.AccessToken); st != 200 || len(ids) != 0 {
		t.Errorf("nina's accounts: %d %v", st, ids)
	}

	for _, tc := range []struct {
		name   string
		edit   func(url.Values)
		status int
	}{
		{"redirect mismatch", func(f url.Values) { f.Set("redirect_uri", b.p.RedirectURI+"?x=1") }, 400},
		{"wrong secret", func(f url.Values) { f.Set("client_secret", "nope") }, 400},
		{"code of another client id", func(f url.Values) { f.Set("client_id", b.p.DemoClientID) }, 400},
		{"unknown grant", func(f url.Values) { f.Set("grant_type", "password") }, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := url.Values{
				"grant_type": {"authorization_code"}, "code": {b.mustCode(t, b.p.LiveClientID, "alice", "alice-pass", "123456")},
				"redirect_uri": {b.p.RedirectURI}, "client_id": {b.p.LiveClientID}, "client_secret": {b.p.ClientSecret},
			}
			tc.edit(f)
			resp, body := b.postForm(t, brokersim.TokenPath, f)
			if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
		})
	}
	// A JSON body is the wrong encoding: 404, not JSON.
	req, _ = http.NewRequest("POST", b.URL+brokersim.TokenPath, strings.NewReader(`{"grant_type":"refresh_token"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, _ := b.send(t, req); resp.StatusCode != http.StatusNotFound || strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("JSON body: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// An expired code is refused.
	code = b.mustCode(t, b.p.LiveClientID, "alice", "alice-pass", "123456")
	b.Advance(time.Minute)
	if resp, _ := b.exchange(t, b.p.LiveClientID, code); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("expired code: %d", resp.StatusCode)
	}
}

// PKCE (RFC 7636, S256): a code got with a challenge is exchanged only
// with the verifier behind it; a code got without one needs none (the
// spec does not require PKCE); a challenge of another method or shape is
// refused on the login page, and the verifier is kept out of the log.
func TestTokenPKCE(t *testing.T) {
	t.Parallel()
	b := setupPartner(t)
	const verifier = "dBjftJeZ4CVP-mJ92K9zTiRPHdqL9iE2WTlMvDqfS6E"
	const challenge = "9jP0wKi4TI2oWkJVtM-QYSzV713upxtpDBgOFtT-Qyk" // base64url(sha256(verifier)), no padding
	codeWith := func(method, ch string) (*http.Response, string) {
		form := b.authorizeQuery(b.p.LiveClientID)
		form.Set("code_challenge", ch)
		form.Set("code_challenge_method", method)
		form.Set("username", "alice")
		form.Set("password", "alice-pass")
		form.Set("code", "123456")
		return b.postForm(t, b.p.LoginPath, form)
	}
	exchange := func(code, v string) int {
		resp, _ := b.postForm(t, brokersim.TokenPath, url.Values{
			"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {b.p.RedirectURI},
			"client_id": {b.p.LiveClientID}, "client_secret": {b.p.ClientSecret}, "code_verifier": {v},
		})
		return resp.StatusCode
	}
	code := func() string {
		resp, body := codeWith("S256", challenge)
		to, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || err != nil {
			t.Fatalf("login with a challenge: %d %s", resp.StatusCode, body)
		}
		return to.Query().Get("code")
	}
	if st := exchange(code(), ""); st != http.StatusBadRequest {
		t.Errorf("no verifier: %d, want 400", st)
	}
	if st := exchange(code(), "A"+verifier[1:]); st != http.StatusBadRequest {
		t.Errorf("a wrong verifier: %d, want 400", st)
	}
	if st := exchange(code(), verifier); st != http.StatusOK {
		t.Errorf("the verifier: %d, want 200", st)
	}
	if st := exchange(b.mustCode(t, b.p.LiveClientID, "alice", "alice-pass", "123456"), ""); st != http.StatusOK {
		t.Errorf("a code without a challenge, no verifier: %d, want 200", st)
	}
	for _, bad := range [][2]string{{"plain", challenge}, {"S256", "short"}} {
		if resp, body := codeWith(bad[0], bad[1]); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "code_challenge") {
			t.Errorf("challenge %v: %d %s", bad, resp.StatusCode, body)
		}
	}
	for _, r := range b.Sim.Requests() {
		if strings.Contains(r.Body, verifier) {
			t.Errorf("request log holds the verifier: %+v", r)
		}
	}
}
