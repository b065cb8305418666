package brokersim

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// TokenPath is the partner token address (spec: "Partner OAuth endpoints").
const TokenPath = "/v1/api/oauth2/jwtexchange"

// ScenarioPartner is a direct partner program as the service issues it
// (spec: "Partner OAuth 2.0 (direct program)", item 1).
type ScenarioPartner struct {
	// LoginPath is the path of the hosted login page on the simulator's
	// host: the partner login address.
	LoginPath string `json:"loginPath"`
	// DemoClientID signs in paper logins, LiveClientID live ones.
	DemoClientID string `json:"demoClientId"`
	LiveClientID string `json:"liveClientId"`
	// ClientSecret is shared by both client ids.
	ClientSecret string `json:"clientSecret"`
	// RedirectURI is the registered redirect address, compared byte for byte.
	RedirectURI string `json:"redirectUri"`
	// AccessTTL is the access token's expires_in; RefreshTTL the refresh
	// token's; CodeTTL how long an unexchanged code stays valid.
	AccessTTL  Duration `json:"accessTTL"`
	RefreshTTL Duration `json:"refreshTTL"`
	CodeTTL    Duration `json:"codeTTL"`
}

// ScenarioUser is a person who signs in on the partner login page.
type ScenarioUser struct {
	Username string `json:"username"`
	Password string `json:"password"`
	// Code is the one-time code of the multi-factor step.
	Code string `json:"code"`
	// Env is the profile signed in: "paper" on the demo client id, "live" on
	// the live one.
	Env string `json:"env"`
	// Entitled is false for a login the program may not act for: it fails
	// with the invalid-login-combination message.
	Entitled bool `json:"entitled"`
	// Accounts are what a token of this user reaches; an empty list is the
	// spec's provisioning case, not an empty portfolio.
	Accounts []string `json:"accounts"`
}

// Messages of the hosted login page (spec item 2).
const (
	msgInvalidClientID    = "Invalid client_id: this client id is not registered."
	msgRedirectMismatch   = "The redirect_uri does not match the registered redirect address."
	msgResponseType       = "Unsupported response_type: it must be code."
	msgStateRequired      = "The state parameter is required."
	msgChallenge          = "Unsupported code_challenge: send an S256 challenge of 43 characters."
	msgInvalidCredentials = "Invalid username, password or code."
	msgWrongEnv           = "This login cannot be used with this client id: paper and live logins sign in on separate client ids."
	msgInvalidCombination = "Invalid login combination."
	msgUnableToAuthorize  = "Unable to authorize the request."
)

func (sc *Scenario) validatePartner() error {
	p := sc.Partner
	if p == nil {
		if len(sc.Users) > 0 {
			return fmt.Errorf("users need a partner program")
		}
		return nil
	}
	if p.DemoClientID == "" || p.LiveClientID == "" || p.DemoClientID == p.LiveClientID || p.ClientSecret == "" {
		return fmt.Errorf("partner: needs distinct demoClientId and liveClientId and a clientSecret")
	}
	if !strings.HasPrefix(p.LoginPath, "/") || strings.HasPrefix(p.LoginPath, "/v1/") || strings.HasPrefix(p.LoginPath, "/_sim/") {
		return fmt.Errorf("partner: loginPath %q must be an absolute path outside /v1/ and /_sim/", p.LoginPath)
	}
	if u, err := url.Parse(p.RedirectURI); err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("partner: redirectUri %q must be an absolute address", p.RedirectURI)
	}
	def := func(d *Duration, v time.Duration) {
		if *d <= 0 {
			*d = Duration(v)
		}
	}
	def(&p.AccessTTL, 15*time.Minute)
	def(&p.RefreshTTL, 24*time.Hour)
	def(&p.CodeTTL, time.Minute)
	seen := map[string]bool{}
	for _, u := range sc.Users {
		if u.Username == "" || u.Password == "" || u.Code == "" || seen[u.Username] {
			return fmt.Errorf("user %q: needs a unique username, a password and a code", u.Username)
		}
		seen[u.Username] = true
		if u.Env != "live" && u.Env != "paper" {
			return fmt.Errorf("user %s: env must be live or paper, not %q", u.Username, u.Env)
		}
		for _, id := range u.Accounts {
			a := sc.account(id)
			if a.ID == "" {
				return fmt.Errorf("user %s has unknown account %s", u.Username, id)
			}
			if (a.Type == "Paper") != (u.Env == "paper") {
				return fmt.Errorf("user %s (%s) has account %s of type %s", u.Username, u.Env, id, a.Type)
			}
		}
	}
	return nil
}

// partnerState is the program's live state: users, unexchanged codes and
// granted tokens. Tokens are looked up here, so a rotated or expired one
// stops working at once.
type partnerState struct {
	users   map[string]*simUser
	codes   map[string]*authCode
	access  map[string]*grant
	refresh map[string]*grant
	signKey []byte
}

// simUser is a scenario user with the principal its tokens act as: a key
// whose accounts are the user's.
type simUser struct {
	ScenarioUser
	principal *simKey
}

type authCode struct {
	user        *simUser
	clientID    string
	redirectURI string
	expires     time.Time
	// challenge is the PKCE S256 code_challenge of the authorize step, ""
	// when none was sent (the spec does not require PKCE).
	challenge string
}

// verifies reports whether verifier is the one behind the code's PKCE
// challenge (RFC 7636, S256), or the authorize step sent none.
func (a *authCode) verifies(verifier string) bool {
	if a.challenge == "" {
		return true
	}
	sum := sha256.Sum256([]byte(verifier))
	return verifier != "" && subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(a.challenge)) == 1
}

// grant is one access/refresh pair issued to a user on a client id.
type grant struct {
	user                          *simUser
	clientID                      string
	access, refresh               string
	accessExpires, refreshExpires time.Time
}

func (s *Sim) resetPartnerLocked() {
	s.partner = partnerState{
		users: map[string]*simUser{}, codes: map[string]*authCode{},
		access: map[string]*grant{}, refresh: map[string]*grant{},
		signKey: []byte(rand.Text()),
	}
	for _, u := range s.sc.Users {
		key := &simKey{id: "user:" + u.Username, paper: u.Env == "paper"}
		for _, id := range u.Accounts {
			key.accounts = append(key.accounts, s.accounts[id])
		}
		s.partner.users[u.Username] = &simUser{ScenarioUser: u, principal: key}
	}
}

// bearerPrincipal returns the key a valid, unexpired access token acts as.
func (s *Sim) bearerPrincipal(token string) *simKey {
	g := s.partner.access[token]
	if g == nil || !s.clockNow().Before(g.accessExpires) {
		return nil
	}
	return g.user.principal
}

// bearerToken returns the token of an "Authorization: Bearer" header; the
// scheme is compared case-insensitively (RFC 6750).
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", false
	}
	return tok, true
}

// clientEnv tells which environment a client id signs in, "" when unknown.
func (p *ScenarioPartner) clientEnv(clientID string) string {
	switch clientID {
	case p.DemoClientID:
		return "paper"
	case p.LiveClientID:
		return "live"
	}
	return ""
}

// loginPage is the hosted login page: a plain HTML form that posts back to
// itself with the authorize parameters in hidden fields.
var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<h1>Sign in to connect your brokerage account</h1>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>{{end}}
{{if .Form}}<form id="login" method="post" action="{{.Action}}">
<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.RedirectURI}}">
<input type="hidden" name="response_type" value="{{.ResponseType}}">
<input type="hidden" name="state" value="{{.State}}">
<input type="hidden" name="scope" value="{{.Scope}}">
<input type="hidden" name="code_challenge" value="{{.Challenge}}">
<input type="hidden" name="code_challenge_method" value="{{.ChallengeMethod}}">
<p><label>Username <input id="username" name="username" autocomplete="username"></label></p>
<p><label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label></p>
<p><label>One-time code <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code"></label></p>
<p><button id="submit" type="submit">Sign in</button></p>
</form>{{end}}
</body></html>
`))

type loginView struct {
	Error                                             string
	Form                                              bool
	Action                                            string
	ClientID, RedirectURI, ResponseType, State, Scope string
	Challenge, ChallengeMethod                        string
}

func htmlReply(status int, v loginView) reply {
	var b bytes.Buffer
	if err := loginPage.Execute(&b, v); err != nil {
		return textReply(http.StatusInternalServerError, "internal error: "+err.Error())
	}
	return reply{status: status, ctype: "text/html; charset=utf-8", body: b.Bytes()}
}

// handleLogin serves the hosted login page: GET shows the form once the
// authorize parameters check out; POST signs the user in and redirects to
// redirect_uri with a code and the unchanged state.
func (s *Sim) handleLogin(c *call) reply {
	p := s.sc.Partner
	params := c.r.URL.Query()
	if c.r.Method == http.MethodPost {
		var ok bool
		if params, ok = postedForm(c.r, c.body); !ok {
			return htmlReply(http.StatusBadRequest, loginView{Error: "The sign-in form could not be read."})
		}
	}
	v := loginView{
		Action: p.LoginPath, ClientID: params.Get("client_id"), RedirectURI: params.Get("redirect_uri"),
		ResponseType: params.Get("response_type"), State: params.Get("state"), Scope: params.Get("scope"),
		Challenge: params.Get("code_challenge"), ChallengeMethod: params.Get("code_challenge_method"),
	}
	env := p.clientEnv(v.ClientID)
	switch {
	case env == "":
		v.Error = msgInvalidClientID
	case v.RedirectURI != p.RedirectURI:
		v.Error = msgRedirectMismatch
	case v.ResponseType != "code":
		v.Error = msgResponseType
	case v.State == "":
		v.Error = msgStateRequired
	case (v.Challenge != "" || v.ChallengeMethod != "") && (v.ChallengeMethod != "S256" || len(v.Challenge) != 43):
		v.Error = msgChallenge
	}
	if v.Error != "" {
		// Nothing is redirected to an address that did not check out.
		return htmlReply(http.StatusBadRequest, v)
	}
	v.Form = true
	if c.r.Method != http.MethodPost {
		return htmlReply(http.StatusOK, v)
	}
	u := s.partner.users[params.Get("username")]
	switch {
	case u == nil || u.Password != params.Get("password") || u.Code != params.Get("code"):
		v.Error = msgInvalidCredentials
	case u.Env != env:
		v.Error = msgWrongEnv
	case !u.Entitled:
		v.Error = msgInvalidCombination
	}
	if v.Error != "" {
		return htmlReply(http.StatusOK, v)
	}
	code := rand.Text()
	s.partner.codes[code] = &authCode{user: u, clientID: v.ClientID, redirectURI: v.RedirectURI, expires: c.now.Add(time.Duration(p.CodeTTL)),
		challenge: v.Challenge}
	to, _ := url.Parse(v.RedirectURI) // validated with the scenario
	q := to.Query()
	q.Set("code", code)
	q.Set("state", v.State)
	to.RawQuery = q.Encode()
	return reply{status: http.StatusFound, header: http.Header{"Location": {to.String()}}, ctype: ctypeText, body: []byte("Found")}
}

// tokenJSON is the spec's token response.
type tokenJSON struct {
	TokenType             string `json:"token_type"`
	AccessToken           string `json:"access_token"`
	ExpiresIn             int64  `json:"expires_in"`
	RefreshToken          string `json:"refresh_token"`
	RefreshTokenExpiresIn int64  `json:"refresh_token_expires_in,omitempty"`
}

// unableToAuthorize is the token endpoint's generic 400: the spec's
// failure table says clients must not branch on its text.
func unableToAuthorize() reply {
	return jsonReply(http.StatusBadRequest, errorJSON{StatusCode: "BadRequest", Message: msgUnableToAuthorize})
}

// handleToken serves POST /v1/api/oauth2/jwtexchange: the authorization_code
// and refresh_token grants, form-encoded or multipart. Another encoding is
// answered 404 with a non-JSON body, as the spec's failure table says.
func (s *Sim) handleToken(c *call) reply {
	form, ok := postedForm(c.r, c.body)
	if !ok {
		return textReply(http.StatusNotFound, "404 page not found")
	}
	p := s.sc.Partner
	clientID := form.Get("client_id")
	if p.clientEnv(clientID) == "" || form.Get("client_secret") != p.ClientSecret {
		return unableToAuthorize()
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		code := s.partner.codes[form.Get("code")]
		// A code is spent once posted, whatever the outcome.
		delete(s.partner.codes, form.Get("code"))
		if code == nil || !c.now.Before(code.expires) || code.clientID != clientID || code.redirectURI != form.Get("redirect_uri") ||
			!code.verifies(form.Get("code_verifier")) {
			return unableToAuthorize()
		}
		return s.issue(code.user, clientID, true)
	case "refresh_token":
		g := s.partner.refresh[form.Get("refresh_token")]
		if g == nil || !c.now.Before(g.refreshExpires) || g.clientID != clientID {
			return unableToAuthorize()
		}
		// Refresh rotates: the old pair stops working.
		delete(s.partner.refresh, g.refresh)
		delete(s.partner.access, g.access)
		return s.issue(g.user, clientID, false)
	}
	return unableToAuthorize()
}

// issue grants a fresh pair; refresh_token_expires_in comes only on some
// responses (spec: "Token response"), here those of the code exchange.
func (s *Sim) issue(u *simUser, clientID string, withRefreshExpiry bool) reply {
	p := s.sc.Partner
	g := &grant{
		user: u, clientID: clientID,
		accessExpires: s.now.Add(time.Duration(p.AccessTTL)), refreshExpires: s.now.Add(time.Duration(p.RefreshTTL)),
	}
	g.access = s.mintJWT("access", u.Username, clientID, g.accessExpires)
	g.refresh = s.mintJWT("refresh", u.Username, clientID, g.refreshExpires)
	s.partner.access[g.access], s.partner.refresh[g.refresh] = g, g
	out := tokenJSON{TokenType: "Bearer", AccessToken: g.access, ExpiresIn: int64(time.Duration(p.AccessTTL) / time.Second), RefreshToken: g.refresh}
	if withRefreshExpiry {
		out.RefreshTokenExpiresIn = int64(time.Duration(p.RefreshTTL) / time.Second)
	}
	return jsonReply(http.StatusOK, out)
}

// mintJWT makes an HS256 JWT: the spec's tokens are JWTs, and a client that
// assumed an opaque shape would be tested on the real one.
func (s *Sim) mintJWT(use, sub, aud string, exp time.Time) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"sub": sub, "aud": aud, "use": use, "exp": exp.Unix(), "iat": s.now.Unix(), "jti": rand.Text()})
	unsigned := head + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, s.partner.signKey)
	mac.Write([]byte(unsigned))
	return unsigned + "." + enc.EncodeToString(mac.Sum(nil))
}

// postedForm decodes a form-encoded or multipart body (the login form and
// the token endpoint take both); ok is false for any other encoding.
func postedForm(r *http.Request, body []byte) (url.Values, bool) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded":
		v, err := url.ParseQuery(string(body))
		return v, err == nil
	case "multipart/form-data":
		f, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(maxBody)
		if err != nil {
			return nil, false
		}
		defer f.RemoveAll()
		return url.Values(f.Value), true
	}
	return nil, false
}

// sensitiveFields are redacted from the request log.
var sensitiveFields = []string{"password", "code", "client_secret", "refresh_token", "code_verifier"}

// redactedForm is what the request log keeps of a login or token body: the
// form with its secrets replaced, never the secrets themselves.
func redactedForm(r *http.Request, body []byte) string {
	form, ok := postedForm(r, body)
	if !ok {
		return ""
	}
	for k := range form {
		if slices.Contains(sensitiveFields, k) {
			form[k] = []string{"[redacted]"}
		}
	}
	return form.Encode()
}
