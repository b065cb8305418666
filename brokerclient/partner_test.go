package brokerclient_test

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// partnerSetup signs alice in on the live client id and returns the
// simulator, the login-only client and her token pair.
func partnerSetup(t *testing.T) (*simtest.Bundle, *brokerclient.Client, brokerclient.PartnerToken) {
	t.Helper()
	b := simtest.New(t)
	login := b.PartnerClient(t, b.Partner.LiveClientID)
	a := brokerclient.NewAttempt()
	cb := aliceSignsIn(t, b, login, a)
	tok, err := login.Partner.ExchangeCallback(t.Context(), cb.Query(), a)
	if err != nil {
		t.Fatal(err)
	}
	return b, login, *tok
}

// aliceSignsIn opens c's authorize address for the attempt and signs alice
// in; it returns the callback address the login page redirected to.
func aliceSignsIn(t *testing.T, b *simtest.Bundle, c *brokerclient.Client, a brokerclient.Attempt) *url.URL {
	t.Helper()
	auth, err := c.Partner.AuthCodeURL(a)
	if err != nil {
		t.Fatal(err)
	}
	return b.PartnerLogin(t, auth, "alice", "alice-pass", "123456")
}

func tokenPosts(b *simtest.Bundle) []brokersim.RequestRecord {
	var out []brokersim.RequestRecord
	for _, r := range b.Sim.Requests() {
		if r.Path == brokersim.TokenPath {
			out = append(out, r)
		}
	}
	return out
}

func TestPartnerLoginAndBearerCalls(t *testing.T) {
	t.Parallel()
	b, _, tok := partnerSetup(t)
	if want := simtest.Start.Add(15 * time.Minute); !tok.Expiry.Equal(want) || !tok.RenewAt().Before(want) {
		t.Errorf("expiry %s renew at %s, want expiry %s (expires_in on the fake clock) and renewal before it", tok.Expiry, tok.RenewAt(), want)
	}
	if !tok.RefreshExpiry.Equal(simtest.Start.Add(24 * time.Hour)) {
		t.Errorf("refresh expiry %s", tok.RefreshExpiry)
	}
	c := b.PartnerClient(t, b.Partner.LiveClientID, brokerclient.WithPartnerToken(tok, nil))
	accts, _, err := c.Accounts.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range accts {
		ids = append(ids, a.Account)
	}
	if strings.Join(ids, ",") != "LV100001,LV100002" {
		t.Errorf("accounts %v", ids)
	}
	last := b.Sim.Requests()[len(b.Sim.Requests())-1]
	if last.Path != "/v1/api/accounts" || last.Auth != "bearer" || last.KeyID != "" {
		t.Errorf("last request %+v", last)
	}
	posts := tokenPosts(b)
	if len(posts) != 1 || !strings.Contains(posts[0].Body, "grant_type=authorization_code") {
		t.Errorf("token posts %+v", posts)
	}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%+v", tok), fmt.Sprintf("%#v", tok)} {
		if strings.Contains(s, tok.AccessToken) || strings.Contains(s, tok.RefreshToken) {
			t.Errorf("a token was formatted: %s", s)
		}
	}
}

// The callback is refused when its state differs, and nothing is posted.
func TestPartnerStateMismatch(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.PartnerClient(t, b.Partner.LiveClientID)
	a := brokerclient.NewAttempt()
	cb := aliceSignsIn(t, b, c, a)
	q := cb.Query()
	q.Set("state", "forged")
	if _, err := c.Partner.ExchangeCallback(t.Context(), q, a); !errors.Is(err, brokerclient.ErrStateMismatch) {
		t.Fatalf("err %v, want ErrStateMismatch", err)
	}
	if p := tokenPosts(b); len(p) != 0 {
		t.Errorf("posted %+v", p)
	}
	// The unspent code still works for the right state.
	if _, err := c.Partner.ExchangeCallback(t.Context(), cb.Query(), a); err != nil {
		t.Fatal(err)
	}
}

func TestPartnerReplayedCode(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.PartnerClient(t, b.Partner.LiveClientID)
	a := brokerclient.NewAttempt()
	code := aliceSignsIn(t, b, c, a).Query().Get("code")
	if _, err := c.Partner.Exchange(t.Context(), code, a.Verifier); err != nil {
		t.Fatal(err)
	}
	_, err := c.Partner.Exchange(t.Context(), code, a.Verifier)
	var te *brokerclient.TokenError
	if !errors.As(err, &te) || te.StatusCode != http.StatusBadRequest || errors.Is(err, brokerclient.ErrLoginRequired) {
		t.Fatalf("replayed code: %v", err)
	}
	if strings.Contains(err.Error(), code) || strings.Contains(err.Error(), b.Partner.ClientSecret) {
		t.Errorf("error text holds a secret: %v", err)
	}
}

// KeepRenewed refreshes at RenewAt, before expiry, on the fake clock; the
// renewed pair is saved, the old one stops working.
func TestPartnerRenewsBeforeExpiry(t *testing.T) {
	t.Parallel()
	b, _, tok := partnerSetup(t)
	saved := make(chan brokerclient.PartnerToken, 1)
	c := b.PartnerClient(t, b.Partner.LiveClientID, brokerclient.WithPartnerToken(tok, func(next brokerclient.PartnerToken) error {
		saved <- next
		return nil
	}))
	done := make(chan error, 1)
	ctx := t.Context()
	go func() { done <- c.Partner.KeepRenewed(ctx) }()

	select {
	case <-b.Clock.BlockUntil(1):
	case <-time.After(5 * time.Second):
		t.Fatal("KeepRenewed never slept on the clock")
	}
	b.Advance(tok.RenewAt().Sub(b.Clock.Now()))
	var next brokerclient.PartnerToken
	select {
	case next = <-saved:
	case err := <-done:
		t.Fatalf("KeepRenewed ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no renewal")
	}
	posts := tokenPosts(b)
	refresh := posts[len(posts)-1]
	if !strings.Contains(refresh.Body, "grant_type=refresh_token") || !refresh.Time.Before(tok.Expiry) {
		t.Errorf("refresh %+v, want one before %s", refresh, tok.Expiry)
	}
	if !next.Expiry.Equal(tok.RenewAt().Add(15 * time.Minute)) {
		t.Errorf("renewed expiry %s", next.Expiry)
	}
	// Calls use the renewed token; the rotated pair is refused, so its
	// holder must log in again.
	if _, _, err := c.Accounts.List(ctx); err != nil {
		t.Fatal(err)
	}
	old := b.PartnerClient(t, b.Partner.LiveClientID, brokerclient.WithPartnerToken(tok, nil))
	if _, _, err := old.Accounts.List(ctx); !errors.Is(err, brokerclient.ErrLoginRequired) {
		t.Errorf("rotated pair: %v", err)
	}
}

// A refresh refused with the token endpoint's JSON error asks for a new
// login, and says so without printing a token.
func TestPartnerRefreshRefusedAsksForLogin(t *testing.T) {
	t.Parallel()
	b, _, tok := partnerSetup(t)
	var mu sync.Mutex
	saves := 0
	stale := tok
	stale.RefreshToken = "revoked." + tok.RefreshToken
	c := b.PartnerClient(t, b.Partner.LiveClientID, brokerclient.WithPartnerToken(stale, func(brokerclient.PartnerToken) error {
		mu.Lock()
		defer mu.Unlock()
		saves++
		return nil
	}))
	b.Advance(tok.RenewAt().Sub(b.Clock.Now()))
	_, _, err := c.Accounts.List(t.Context())
	if !errors.Is(err, brokerclient.ErrLoginRequired) || !strings.Contains(err.Error(), "log in again") {
		t.Fatalf("err %v, want ErrLoginRequired", err)
	}
	if strings.Contains(err.Error(), tok.RefreshToken) || strings.Contains(err.Error(), tok.AccessToken) {
		t.Errorf("error text holds a token: %v", err)
	}
	if saves != 0 {
		t.Errorf("saved %d times", saves)
	}
	// A client of the program without a token does not call at all.
	login := b.PartnerClient(t, b.Partner.LiveClientID)
	if _, _, err := login.Accounts.List(t.Context()); !errors.Is(err, brokerclient.ErrLoginRequired) {
		t.Errorf("no token: %v", err)
	}
}

func TestPartnerAuthCodeURL(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.PartnerClient(t, b.Partner.DemoClientID)
	a := brokerclient.Attempt{State: "xyz", Verifier: "dBjftJeZ4CVP-mJ92K9zTiRPHdqL9iE2WTlMvDqfS6E"}
	raw, err := c.Partner.AuthCodeURL(a)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	if u.Path != b.Partner.LoginPath || q.Get("client_id") != b.Partner.DemoClientID || q.Get("redirect_uri") != b.Partner.RedirectURI ||
		q.Get("response_type") != "code" || q.Get("state") != "xyz" || q.Has("client_secret") || q.Has("code_verifier") ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") != "9jP0wKi4TI2oWkJVtM-QYSzV713upxtpDBgOFtT-Qyk" {
		t.Errorf("authorize address %s", raw)
	}
	if _, err := c.Partner.AuthCodeURL(brokerclient.Attempt{State: "xyz"}); !errors.Is(err, brokercode.ErrInput) {
		t.Errorf("an attempt without a verifier: %v", err)
	}
}

// headerRecorder keeps the headers of the requests it passes on.
type headerRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen map[string]http.Header // by path
}

func (h *headerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen[req.URL.Path] = req.Header.Clone()
	h.mu.Unlock()
	return h.base.RoundTrip(req)
}

// The token endpoint gets the spec's Accept header and the client's stable
// User-Agent, as REST calls do.
func TestPartnerTokenRequestHeaders(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	rec := &headerRecorder{base: b.Server.Client().Transport, seen: map[string]http.Header{}}
	c := b.PartnerClient(t, b.Partner.LiveClientID,
		brokerclient.WithHTTPClient(&http.Client{Transport: rec}), brokerclient.WithUserAgent("locator-test/1"))
	a := brokerclient.NewAttempt()
	cb := aliceSignsIn(t, b, c, a)
	if _, err := c.Partner.ExchangeCallback(t.Context(), cb.Query(), a); err != nil {
		t.Fatal(err)
	}
	h := rec.seen[brokersim.TokenPath]
	if h.Get("User-Agent") != "locator-test/1" || h.Get("Accept") != "application/json" || h.Get("Authorization") != "" {
		t.Errorf("token request headers %v", h)
	}
}

// A token endpoint that refuses one body encoding with its JSON error gets
// the same fields once more in the other (spec: "Partner token endpoint
// failures").
func TestPartnerRetriesTheOtherEncoding(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		mu.Lock()
		seen = append(seen, mt)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if mt != "multipart/form-data" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"statusCode":"BadRequest","message":"Unable to authorize the request.","detail":null}`)
			return
		}
		if err := r.ParseMultipartForm(1 << 16); err != nil || r.FormValue("code") != "the-code" || r.FormValue("client_secret") != "s3" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"statusCode":"BadRequest","message":"fields","detail":null}`)
			return
		}
		io.WriteString(w, `{"token_type":"bearer","access_token":"a.b.c","expires_in":60,"refresh_token":"d.e.f"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithPartner(brokerclient.PartnerConfig{
		ClientID: "id", ClientSecret: "s3", LoginURL: srv.URL + "/login", RedirectURI: "http://127.0.0.1:1/cb",
	}))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Partner.Exchange(t.Context(), "the-code", "")
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "a.b.c" || tok.Expiry.Sub(tok.Issued) != time.Minute {
		t.Errorf("token %v", tok)
	}
	if strings.Join(seen, ",") != "application/x-www-form-urlencoded,multipart/form-data" {
		t.Errorf("encodings sent: %v", seen)
	}
}

// Spec: "Brief 403 on REST after a fresh token: retry with short backoff";
// at the token endpoint a 403 is the network edge, not a bad code, and no
// reason to log in again.
func TestPartner403(t *testing.T) {
	t.Parallel()
	b, _, tok := partnerSetup(t)
	b.RunClock(t)
	c := b.PartnerClient(t, b.Partner.LiveClientID, brokerclient.WithPartnerToken(tok, nil))
	setFaults(t, b, brokersim.FaultStep{Match: "GET /v1/api/accounts", Kind: "403", Count: 2})
	if _, resp, err := c.Accounts.List(t.Context()); err != nil || resp.Attempts != 3 {
		t.Fatalf("list after two 403s: %v (%+v)", err, resp)
	}

	setFaults(t, b, brokersim.FaultStep{Match: "POST " + brokersim.TokenPath, Kind: "403", Count: 1})
	_, err := c.Partner.Refresh(t.Context(), tok.RefreshToken)
	var te *brokerclient.TokenError
	if !errors.As(err, &te) || te.StatusCode != http.StatusForbidden || errors.Is(err, brokerclient.ErrLoginRequired) || !strings.Contains(err.Error(), "network edge") {
		t.Errorf("403 at the token endpoint: %v", err)
	}
}

// The partner login uses PKCE (S256): the authorize address
// carries the attempt's challenge, and the simulator exchanges the code
// only for the verifier behind it, so a code intercepted on its way back
// is useless to whoever lacks the verifier. The verifier never reaches the
// request log.
func TestPartnerPKCE(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.PartnerClient(t, b.Partner.LiveClientID)
	a := brokerclient.NewAttempt()
	code := aliceSignsIn(t, b, c, a).Query().Get("code")
	_, err := c.Partner.Exchange(t.Context(), code, brokerclient.NewAttempt().Verifier)
	var te *brokerclient.TokenError
	if !errors.As(err, &te) || te.StatusCode != http.StatusBadRequest {
		t.Fatalf("an intercepted code with another verifier: %v, want the token endpoint's 400", err)
	}
	a = brokerclient.NewAttempt()
	code = aliceSignsIn(t, b, c, a).Query().Get("code")
	if _, err := c.Partner.Exchange(t.Context(), code, ""); !errors.As(err, &te) {
		t.Fatalf("a code without its verifier: %v, want refused", err)
	}
	a = brokerclient.NewAttempt()
	cb := aliceSignsIn(t, b, c, a)
	if _, err := c.Partner.ExchangeCallback(t.Context(), cb.Query(), a); err != nil {
		t.Fatalf("the code with its verifier: %v", err)
	}
	for _, r := range tokenPosts(b) {
		if strings.Contains(r.Body, a.Verifier) || !strings.Contains(r.Body, "code_verifier=%5Bredacted%5D") {
			t.Errorf("token post logged as %q", r.Body)
		}
	}
}

// A token endpoint whose answer never ends gets an
// ErrAnswerTooLarge once 1 MiB is read (all golang.org/x/oauth2 would
// parse), not a token cut short, and the exchange is not tried again.
func TestPartnerTokenAnswerBound(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"token_type":"bearer","expires_in":60,"refresh_token":"d.e.f","access_token":"`)
		pad := strings.Repeat("a", 64<<10)
		for range 2 << 20 / len(pad) { // 2 MiB of access token
			if _, err := io.WriteString(w, pad); err != nil {
				return
			}
		}
		io.WriteString(w, `"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithPartner(brokerclient.PartnerConfig{
		ClientID: "id", ClientSecret: "s3", LoginURL: srv.URL + "/login", RedirectURI: "http://127.0.0.1:1/cb",
	}))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Partner.Exchange(t.Context(), "the-code", "")
	var tooLarge *brokerclient.AnswerTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 1<<20 {
		t.Fatalf("token %v, err %v; want an *AnswerTooLargeError at 1 MiB", tok, err)
	}
	if errors.Is(err, brokerclient.ErrLoginRequired) || posts.Load() != 1 {
		t.Errorf("%d posts, login required %v: want 1 post and no login asked for", posts.Load(), errors.Is(err, brokerclient.ErrLoginRequired))
	}
}

// A token endpoint refusal echoing the client secret the form
// carried keeps [REDACTED] in the TokenError's message in its place.
func TestPartnerRefusalMasksClientSecret(t *testing.T) {
	t.Parallel()
	const secret = "partner-s3cr3t-0123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseMultipartForm(1 << 16)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"statusCode":"BadRequest","message":"client_secret `+r.FormValue("client_secret")+` refused","detail":null}`)
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithPartner(brokerclient.PartnerConfig{
		ClientID: "id", ClientSecret: secret, LoginURL: srv.URL + "/login", RedirectURI: "http://127.0.0.1:1/cb",
	}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Partner.Exchange(t.Context(), "the-code", "")
	var te *brokerclient.TokenError
	if !errors.As(err, &te) || te.Message != "client_secret [REDACTED] refused" {
		t.Fatalf("refusal: %#v", err)
	}
	if s := fmt.Sprintf("%v %+v %#v", err, err, te); strings.Contains(s, secret) {
		t.Errorf("secret printed: %s", s)
	}
}

// A token endpoint refusal echoing the grant the form carried
// (the authorization code of an exchange, the refresh token of a refresh)
// keeps [REDACTED] in the TokenError in its place.
func TestPartnerRefusalMasksCodeAndRefreshToken(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseMultipartForm(1 << 16)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"statusCode":"BadRequest","message":"grant `+r.FormValue("code")+r.FormValue("refresh_token")+` refused","detail":null}`)
	}))
	t.Cleanup(srv.Close)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(srv.URL), brokerclient.WithPartner(brokerclient.PartnerConfig{
		ClientID: "id", ClientSecret: "partner-s3cr3t-0123", LoginURL: srv.URL + "/login", RedirectURI: "http://127.0.0.1:1/cb",
	}))
	if err != nil {
		t.Fatal(err)
	}
	const code, refresh = "auth-code-7f3a9c", "refresh-tok-91b2e7d4"
	_, exchangeErr := c.Partner.Exchange(t.Context(), code, "")
	_, refreshErr := c.Partner.Refresh(t.Context(), refresh)
	for grant, err := range map[string]error{code: exchangeErr, refresh: refreshErr} {
		var te *brokerclient.TokenError
		if !errors.As(err, &te) || te.Message != "grant [REDACTED] refused" {
			t.Errorf("refusal echoing %s: %#v", grant, err)
			continue
		}
		if s := fmt.Sprintf("%v %+v %#v", err, err, te); strings.Contains(s, grant) {
			t.Errorf("grant printed: %s", s)
		}
	}
}
