package brokerclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
)

// TokenPath is the partner token address relative to the base URL (spec:
// "Partner OAuth endpoints"; the address issued to a program wins).
const TokenPath = "/v1/api/oauth2/jwtexchange"

// PartnerConfig is what the service issues to a direct partner program.
// The client secret belongs on a server: it never goes into a browser.
type PartnerConfig struct {
	// ClientID is the demo client id (paper logins) or the live one.
	ClientID     string
	ClientSecret string
	// LoginURL is the hosted partner login address (the authorize step).
	LoginURL string
	// TokenURL is the token address; empty means the base URL's TokenPath.
	TokenURL string
	// RedirectURI is the registered redirect address, sent byte for byte.
	RedirectURI string
}

// PartnerToken is a token response with its instants read on the client's
// clock. It prints and logs without the tokens themselves.
type PartnerToken struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	// Issued is when the response arrived; Expiry is Issued + expires_in.
	Issued time.Time `json:"issued"`
	Expiry time.Time `json:"expiry"`
	// RefreshExpiry is zero when the response did not carry
	// refresh_token_expires_in (the spec says only some do).
	RefreshExpiry time.Time `json:"refreshExpiry,omitzero"`
}

// RenewAt is when the pair is renewed: a fifth of its lifetime before
// expiry, so the schedule follows each response's expires_in.
func (t PartnerToken) RenewAt() time.Time {
	return t.Expiry.Add(-t.Expiry.Sub(t.Issued) / 5)
}

// String describes the token without its secrets.
func (t PartnerToken) String() string {
	return fmt.Sprintf("partner token (expires %s)", t.Expiry.UTC().Format(time.RFC3339))
}

// GoString keeps %#v from printing the tokens.
func (t PartnerToken) GoString() string { return t.String() }

// LogValue keeps slog from printing the tokens.
func (t PartnerToken) LogValue() slog.Value {
	return slog.GroupValue(slog.Time("expiry", t.Expiry), slog.Time("renewAt", t.RenewAt()))
}

var (
	// ErrLoginRequired: there is no usable partner token, or the token
	// endpoint refused a refresh with its JSON error; the user must go
	// through the authorize step again (spec: Partner OAuth, item 5).
	ErrLoginRequired = errors.New("partner login required")
	// ErrStateMismatch: the callback's state is not the one sent, so it is
	// not the answer to this login (spec: Partner OAuth, item 3).
	ErrStateMismatch = errors.New("callback state does not match")
)

// TokenError is a refusal of the token endpoint. Its text never carries a
// token, a code or the client secret: one the endpoint's message echoes
// shows [REDACTED] in its place.
type TokenError struct {
	Op          string // "exchange" or "refresh"
	StatusCode  int    // 0 when the request did not get an answer
	ContentType string
	// Message is the JSON error's message (a generic text the spec says not
	// to branch on), when the body was the service's JSON.
	Message string
	Err     error // the transport or decode failure, if any
}

func (e *TokenError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "brokerclient: partner %s", e.Op)
	switch {
	case e.Err != nil:
		fmt.Fprintf(&b, ": %v", e.Err)
	case e.json():
		fmt.Fprintf(&b, ": token endpoint refused (%d %s)", e.StatusCode, e.Message)
	case e.StatusCode == http.StatusForbidden:
		fmt.Fprintf(&b, ": 403 from the network edge (this address or client is not admitted), not a bad code")
	case e.StatusCode == http.StatusNotFound:
		fmt.Fprintf(&b, ": 404: wrong token address, body encoding or unregistered egress")
	default:
		fmt.Fprintf(&b, ": token endpoint answered %d (%s)", e.StatusCode, e.ContentType)
	}
	if e.Is(ErrLoginRequired) {
		b.WriteString("; log in again")
	}
	return b.String()
}

func (e *TokenError) json() bool {
	mt, _, _ := mime.ParseMediaType(e.ContentType)
	return mt == "application/json"
}

// Unwrap returns the transport or decode failure.
func (e *TokenError) Unwrap() error { return e.Err }

// Is reports ErrLoginRequired for the JSON 400 of a refresh: the spec's
// "JSON authentication error", after which only a new login helps.
func (e *TokenError) Is(target error) bool {
	return target == ErrLoginRequired && e.Op == "refresh" && e.StatusCode == http.StatusBadRequest && e.json()
}

// LoginRequiredError says no partner token is available.
type LoginRequiredError struct{ Reason string }

func (e *LoginRequiredError) Error() string {
	return "brokerclient: partner login required: " + e.Reason
}

// Is reports ErrLoginRequired.
func (e *LoginRequiredError) Is(target error) bool { return target == ErrLoginRequired }

// StateMismatchError is a callback whose state differs from the one sent.
type StateMismatchError struct{}

func (e *StateMismatchError) Error() string {
	return "brokerclient: partner callback refused: its state does not match the login's"
}

// Is reports ErrStateMismatch.
func (e *StateMismatchError) Is(target error) bool { return target == ErrStateMismatch }

// WithPartner configures the partner program; its login and token
// addresses must pass CheckAddress as LoginAddress. It is enough to sign a user
// in (Partner.AuthCodeURL, Partner.Exchange); REST calls need a token too
// (WithPartnerToken).
func WithPartner(cfg PartnerConfig) Option {
	return func(c *Client) error {
		if cfg.ClientID == "" || cfg.ClientSecret == "" || cfg.LoginURL == "" || cfg.RedirectURI == "" {
			return errors.New("partner: client id, client secret, login URL and redirect URI are all required")
		}
		if _, err := CheckAddress(cfg.LoginURL, LoginAddress); err != nil {
			return err
		}
		if cfg.TokenURL != "" {
			if _, err := CheckAddress(cfg.TokenURL, LoginAddress); err != nil {
				return err
			}
		}
		c.partner = &cfg
		return nil
	}
}

// WithPartnerToken authenticates with the user's partner tokens, renewing
// the pair before it expires. save is called with every renewed pair, under
// the lock that serialises renewals, so the caller can persist it before
// the old refresh token is forgotten.
func WithPartnerToken(tok PartnerToken, save func(PartnerToken) error) Option {
	return func(c *Client) error {
		if tok.AccessToken == "" || tok.RefreshToken == "" {
			return &LoginRequiredError{Reason: "the stored partner token is incomplete"}
		}
		c.partnerTok = &partnerTokens{tok: tok, save: save}
		c.tokens = c.partnerTok
		return nil
	}
}

// partnerTokens is the TokenSource of a client on partner tokens.
type partnerTokens struct {
	p    *PartnerService
	mu   sync.Mutex
	tok  PartnerToken
	save func(PartnerToken) error
}

// Token returns the access token, renewing the pair first when its
// RenewAt has come.
func (t *partnerTokens) Token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.renewIfDueLocked(ctx); err != nil {
		return "", err
	}
	return t.tok.AccessToken, nil
}

func (t *partnerTokens) renewIfDueLocked(ctx context.Context) error {
	c := t.p.client
	if c.clock.Now().Before(t.tok.RenewAt()) {
		return nil
	}
	next, err := t.p.Refresh(ctx, t.tok.RefreshToken)
	if err != nil {
		return err
	}
	if t.save != nil {
		if err := t.save(*next); err != nil {
			return fmt.Errorf("brokerclient: save renewed partner token: %w", err)
		}
	}
	t.tok = *next
	c.logger.Debug("partner token renewed", "token", t.tok)
	return nil
}

// oauthConfig is the program as golang.org/x/oauth2 sees it. Credentials go
// in the form (AuthStyleInParams), as the spec's field table has them; the
// library's auto-detection would post the code twice, and a code is spent
// once posted.
func (s *PartnerService) oauthConfig() (*oauth2.Config, error) {
	cfg := s.client.partner
	if cfg == nil {
		return nil, errors.New("brokerclient: no partner program configured (WithPartner)")
	}
	tokenURL := cfg.TokenURL
	if tokenURL == "" {
		tokenURL = s.client.baseURL.String() + TokenPath
	}
	return &oauth2.Config{
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: cfg.LoginURL, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams},
	}, nil
}

// Attempt is one sign-in: the state the callback must carry back, and the
// PKCE verifier (RFC 7636) whose S256 challenge the authorize address
// carries and which the code exchange presents, so a code intercepted on
// its way back is of no use without it. The spec does not require PKCE;
// a service that ignores it loses nothing.
type Attempt struct {
	State    string
	Verifier string
}

// NewAttempt makes an attempt with a random state and verifier.
func NewAttempt() Attempt {
	return Attempt{State: rand.Text(), Verifier: oauth2.GenerateVerifier()}
}

// Matches reports whether callback carries the attempt's state, compared
// in constant time.
func (a Attempt) Matches(callback url.Values) bool {
	return a.State != "" && subtle.ConstantTimeCompare([]byte(callback.Get("state")), []byte(a.State)) == 1
}

// AuthCodeURL is the address of the hosted login page for the attempt: its
// state and its verifier's S256 challenge.
//
// Spec: GET {partner_login_url}.
func (s *PartnerService) AuthCodeURL(a Attempt) (string, error) {
	cfg, err := s.oauthConfig()
	if err != nil {
		return "", err
	}
	if a.Verifier == "" {
		return "", brokercode.Invalid("verifier", "a sign-in needs a PKCE verifier (NewAttempt)")
	}
	return cfg.AuthCodeURL(a.State, oauth2.S256ChallengeOption(a.Verifier)), nil
}

// ExchangeCallback checks the callback's state against the attempt's, then
// exchanges its code at once with the attempt's verifier (a code is spent
// once posted).
//
// Spec: Partner OAuth, item 3; POST /v1/api/oauth2/jwtexchange.
func (s *PartnerService) ExchangeCallback(ctx context.Context, callback url.Values, a Attempt) (*PartnerToken, error) {
	if !a.Matches(callback) {
		return nil, &StateMismatchError{}
	}
	code := callback.Get("code")
	if code == "" {
		return nil, brokercode.Invalid("code", "the callback carries no code")
	}
	return s.Exchange(ctx, code, a.Verifier)
}

// Exchange trades an authorization code for a token pair, presenting the
// PKCE verifier of the attempt that got it.
//
// Spec: POST /v1/api/oauth2/jwtexchange, grant_type=authorization_code.
func (s *PartnerService) Exchange(ctx context.Context, code, verifier string) (*PartnerToken, error) {
	cfg, err := s.oauthConfig()
	if err != nil {
		return nil, err
	}
	return s.retrieve(ctx, "exchange", code, func(ctx context.Context) (*oauth2.Token, error) {
		return cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	})
}

// Refresh trades a refresh token for a new pair. A JSON refusal is a
// *TokenError that errors.Is ErrLoginRequired.
//
// Spec: POST /v1/api/oauth2/jwtexchange, grant_type=refresh_token.
func (s *PartnerService) Refresh(ctx context.Context, refreshToken string) (*PartnerToken, error) {
	cfg, err := s.oauthConfig()
	if err != nil {
		return nil, err
	}
	return s.retrieve(ctx, "refresh", refreshToken, func(ctx context.Context) (*oauth2.Token, error) {
		// A token without an access token is never valid, so the source
		// refreshes at once, whatever oauth2's own wall-clock expiry says.
		return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken}).Token()
	})
}

// retrieve posts to the token endpoint form-encoded and, when that is
// refused with the JSON error, once more as multipart: the spec's failure
// table says to retry the same fields with the other encoding. grant is
// the code or refresh token the form carries, masked with the client's
// secrets in a refusal that echoes it.
func (s *PartnerService) retrieve(ctx context.Context, op, grant string, fetch func(context.Context) (*oauth2.Token, error)) (*PartnerToken, error) {
	tok, err := fetch(s.oauthContext(ctx, false))
	out, err := s.token(op, grant, tok, err)
	var te *TokenError
	if errors.As(err, &te) && te.StatusCode == http.StatusBadRequest && te.json() {
		tok, err = fetch(s.oauthContext(ctx, true))
		return s.token(op, grant, tok, err)
	}
	return out, err
}

// Signed says the client calls with partner tokens (WithPartnerToken)
// rather than a key pair.
func (s *PartnerService) Signed() bool { return s.client.partnerTok != nil }

// KeepRenewed renews the client's partner tokens at each pair's RenewAt,
// sleeping on the client's clock, until ctx ends or a renewal fails. A
// long-running process runs it so that no call waits for a renewal.
func (s *PartnerService) KeepRenewed(ctx context.Context) error {
	t := s.client.partnerTok
	if t == nil {
		return &LoginRequiredError{Reason: "the client has no partner token (WithPartnerToken)"}
	}
	for {
		t.mu.Lock()
		at := t.tok.RenewAt()
		t.mu.Unlock()
		if err := clock.Sleep(ctx, s.client.clock, at.Sub(s.client.clock.Now())); err != nil {
			return err
		}
		t.mu.Lock()
		err := t.renewIfDueLocked(ctx)
		t.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// oauthContext makes oauth2 use the client's HTTP client and User-Agent,
// and post multipart bodies when asked to.
func (s *PartnerService) oauthContext(ctx context.Context, multipart bool) context.Context {
	hc := *s.client.http
	hc.Transport = &tokenTransport{base: hc.Transport, userAgent: s.client.userAgent, multipart: multipart}
	return context.WithValue(ctx, oauth2.HTTPClient, &hc)
}

// tokenTransport sets the headers the spec asks of token requests (a
// stable, identifying User-Agent and Accept: application/json), for the
// encoding retry re-encodes oauth2's form body as multipart/form-data, and
// bounds the answer.
type tokenTransport struct {
	base      http.RoundTripper
	userAgent string
	multipart bool
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", t.userAgent)
	req.Header.Set("Accept", "application/json")
	if t.multipart && req.Body != nil {
		if err := toMultipart(req); err != nil {
			return nil, err
		}
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	// oauth2 reads at most maxTokenAnswer bytes and parses what it got; the
	// answer is read here first, so a longer one is an
	// *AnswerTooLargeError, not a token cut short.
	src, err := newAnswerReader(resp.Body, resp.ContentLength, "partner token", "POST {token address}", maxTokenAnswer, capOfRows(objectRows))
	var body []byte
	if err == nil {
		body, err = src.readAll()
	}
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return resp, nil
}

// toMultipart re-encodes a form-encoded request body as multipart, with an
// explicit length.
func toMultipart(req *http.Request) error {
	raw, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, k := range slices.Sorted(maps.Keys(form)) {
		for _, v := range form[k] {
			if err := mw.WriteField(k, v); err != nil {
				return err
			}
		}
	}
	if err := mw.Close(); err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.ContentLength = int64(body.Len())
	req.Body = io.NopCloser(&body)
	req.GetBody = nil
	return nil
}

// token turns oauth2's answer into a PartnerToken on the client's clock, or
// its failure into a *TokenError that keeps no body but the JSON message,
// with the client's secrets and grant (the code or refresh token sent)
// masked in it.
func (s *PartnerService) token(op, grant string, tok *oauth2.Token, err error) (*PartnerToken, error) {
	sent := append(s.client.secretsSent(nil), grant)
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		e := &TokenError{Op: op, StatusCode: re.Response.StatusCode, ContentType: re.Response.Header.Get("Content-Type")}
		var j struct {
			Message string `json:"message"`
		}
		if e.json() && json.Unmarshal(re.Body, &j) == nil {
			e.Message = sent.mask(CleanText(j.Message))
		}
		return nil, e
	case err != nil:
		return nil, &TokenError{Op: op, Err: redact(unwrapURLError(err))}
	case !strings.EqualFold(tok.TokenType, "bearer"):
		return nil, &TokenError{Op: op, StatusCode: http.StatusOK, Err: fmt.Errorf("token_type %q, want Bearer", sent.mask(CleanText(tok.TokenType)))}
	case tok.ExpiresIn <= 0 || tok.RefreshToken == "":
		return nil, &TokenError{Op: op, StatusCode: http.StatusOK, Err: errors.New("token response lacks expires_in or refresh_token")}
	}
	now := s.client.clock.Now()
	out := &PartnerToken{
		AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		Issued: now, Expiry: now.Add(time.Duration(tok.ExpiresIn) * time.Second),
	}
	if v, ok := tok.Extra("refresh_token_expires_in").(float64); ok && v > 0 {
		out.RefreshExpiry = now.Add(time.Duration(v) * time.Second)
	}
	return out, nil
}

// unwrapURLError keeps oauth2's transport failures as *url.Error so redact
// can strip them; oauth2 wraps them in its own text.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue
	}
	return err
}
