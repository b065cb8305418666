package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/locatorhq/locator/brokerclient"
)

// TokenEnv names the environment variable a fixed token is read from (the
// token has no flag: argv is visible to every local user). Without it each
// start makes a random token.
const TokenEnv = "LOCATOR_DASHBOARD_TOKEN"

// Wrong tokens (a login or a bearer) are allowed at tokenBurst at once and
// one per tokenEvery after, per client (requestClient: an address, and on
// loopback a user); past that every token of that client is answered 429
// unread, so a token cannot be guessed by trying, and one client's wrong
// tokens leave another's right one working. At most maxLimited clients
// are tracked; past them the clients not seen before share one budget.
const (
	tokenBurst = 10
	tokenEvery = 2 * time.Second
	maxLimited = 4096
)

// maxFormBody bounds a POST's body: an answer is a few short fields.
const maxFormBody = 8 << 10

// timeouts of the server's connections. The event stream lifts the read
// timeout and takes a write deadline per event instead.
type timeouts struct {
	header, read, write, idle time.Duration
}

var defaultTimeouts = timeouts{header: 5 * time.Second, read: 30 * time.Second, write: 30 * time.Second, idle: 30 * time.Second}

// limiters are the wrong-token budgets of the clients.
type limiters struct {
	mu       sync.Mutex
	byClient map[string]*rate.Limiter
	shared   *rate.Limiter // the clients past maxLimited
}

// of is client's budget at now: a full one for a client not seen before;
// the budgets that refilled are forgotten when there are too many.
func (l *limiters) of(client string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lim, ok := l.byClient[client]; ok {
		return lim
	}
	if len(l.byClient) >= maxLimited {
		for k, lim := range l.byClient {
			if lim.TokensAt(now) >= tokenBurst {
				delete(l.byClient, k)
			}
		}
	}
	if len(l.byClient) >= maxLimited {
		if l.shared == nil {
			l.shared = rate.NewLimiter(rate.Every(tokenEvery), tokenBurst)
		}
		return l.shared
	}
	lim := rate.NewLimiter(rate.Every(tokenEvery), tokenBurst)
	l.byClient[client] = lim
	return lim
}

// Access says how the dashboard is reached and who may use it.
type Access struct {
	// Token is required of every request: Authorization: Bearer, or the
	// login cookie of a ?token= login. Empty: New makes a random one per
	// start (see LoginAddress), unless NoToken.
	Token string
	// NoToken serves without a token (Token is then ignored), on loopback
	// only (ErrTokenRequired beyond it), where only this user is answered
	// (ownUser; on Linux).
	NoToken bool
	// CertFile and KeyFile (PEM) make the server speak TLS.
	CertFile, KeyFile string
	// TrustedProxies are the peers whose X-Forwarded-Proto is believed: a
	// request one of them forwards as https was encrypted up to it. One on
	// loopback is answered only when it runs as this user (ownUser).
	TrustedProxies []netip.Prefix
}

var (
	// ErrTokenRequired: serving without a token was asked for beyond
	// loopback.
	ErrTokenRequired = errors.New("dashboard: serving without a token is allowed on loopback only")
	// ErrTLSRequired: an address beyond loopback was asked for without TLS
	// or a TLS proxy in front, so the token would cross a network in clear.
	ErrTLSRequired = errors.New("dashboard: beyond loopback the dashboard needs TLS (a certificate and key) or a TLS proxy in front (a trusted proxy)")
)

// ParseProxies reads trusted proxies given as addresses or CIDR prefixes.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("dashboard: trusted proxy %q: want an IP address or a CIDR prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// CheckListen says whether the server may listen on addr with a: without a
// token on loopback only (ErrTokenRequired); beyond loopback only with TLS
// or a trusted proxy (ErrTLSRequired); a certificate given must load. A
// command checks before it sends anything.
func CheckListen(addr string, a Access) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dashboard: listen address %q: %w", addr, err)
	}
	if _, err := a.tlsConfig(); err != nil {
		return err
	}
	switch {
	case brokerclient.Loopback(host):
		return nil
	case a.NoToken:
		return ErrTokenRequired
	case a.CertFile == "" && len(a.TrustedProxies) == 0:
		return ErrTLSRequired
	}
	return nil
}

// tlsConfig loads the certificate; nil without one.
func (a Access) tlsConfig() (*tls.Config, error) {
	if a.CertFile == "" && a.KeyFile == "" {
		return nil, nil
	}
	if a.CertFile == "" || a.KeyFile == "" {
		return nil, errors.New("dashboard: TLS needs both a certificate and its key")
	}
	cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("dashboard: TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Listen binds addr for Start, after CheckListen: a command binds before
// it sends anything, so a taken address is found first.
func Listen(addr string, a Access) (net.Listener, error) {
	if err := CheckListen(addr, a); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return ln, nil
}

// LoginAddress is the address a person opens first, to print once at
// start: with a token made for this start it carries it (as notebook
// servers print theirs); with one from TokenEnv it names the variable.
func (s *Server) LoginAddress(addr net.Addr) string {
	scheme := "http"
	if s.tls != nil {
		scheme = "https"
	}
	base := scheme + "://" + addr.String() + "/"
	switch {
	case s.access.NoToken:
		return base
	case s.tokenMade:
		return base + "?token=" + url.QueryEscape(s.access.Token)
	}
	return base + "?token=$" + TokenEnv
}

// verdictOnly marks a /healthz request without the token: it is told
// whether the service is healthy, not which accounts it serves.
type verdictOnly struct{}

// guard lets a request through when it may see the service. First the
// rules every request passes (reach: plain HTTP only from loopback peers,
// a trusted proxy's https counting as encrypted, and on loopback only this
// user's). With a token, a request carries it
// (bearer header, or the login cookie of a ?token= login), but for GET
// /healthz, which without it gets the verdict alone (verdictOnly); without
// one (NoToken, loopback only), it is addressed to a loopback host name,
// so a page of another site that rebinds its name to 127.0.0.1 is refused.
// A POST must also be the page's own (checkPost). What it found of the
// request goes to next in its context (visitOf).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure, ok := s.reach(w, r)
		if !ok {
			return
		}
		v, bearer := visit{secure: secure}, false
		if s.access.NoToken {
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			if !brokerclient.Loopback(host) {
				http.Error(w, "this dashboard answers to loopback host names only (or set a token)", http.StatusForbidden)
				return
			}
			v.csrf = s.checkSession(w, r, secure)
		} else {
			if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet {
				if s.checkToken(w, r, t) {
					s.login(w, r, secure)
				}
				return
			}
			if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				if !s.checkToken(w, r, auth) {
					return
				}
				bearer = true
			} else if v.csrf = s.checkSession(w, r, secure); v.csrf == "" {
				if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
					// A supervisor's probe: the verdict only.
					next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verdictOnly{}, true)))
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="locator"`)
				http.Error(w, "a token is required: open the login address printed at start (?token=...), or send Authorization: Bearer", http.StatusUnauthorized)
				return
			}
		}
		if r.Method == http.MethodPost && !s.checkPost(w, r, v.csrf, bearer) {
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), visitKey{}, v)))
	})
}

// checkPost lets a POST through when it is the page's own: it comes from
// the page's origin and carries its login's form token (csrf, compared in
// constant time), so neither another site nor another port's page (which
// may have been sent the cookie) can make a browser answer an offer or
// place a locate; or it carries the bearer header, which no page can make
// a browser send. Its form is read here, bounded by maxFormBody. A refusal
// is answered here, and nothing is done.
func (s *Server) checkPost(w http.ResponseWriter, r *http.Request, csrf string, bearer bool) bool {
	if !bearer && !sameOrigin(r) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		status := http.StatusBadRequest
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			status = http.StatusRequestEntityTooLarge
		}
		http.Error(w, "the form could not be read", status)
		return false
	}
	if !bearer && !formTokenOK(r.PostFormValue(csrfField), csrf) {
		http.Error(w, "this form's token is missing or not this login's (a form from an older page, or not from the page): reload the page and try again; nothing was sent", http.StatusForbidden)
		return false
	}
	return true
}

// transport says whether r came encrypted (TLS here, or https at a trusted
// proxy that forwarded it), and whether it may be served at all: plain
// HTTP only from a loopback peer that is not a proxy saying otherwise.
func (s *Server) transport(r *http.Request) (secure, ok bool) {
	if r.TLS != nil {
		return true, true
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false, false
	}
	addr := peer.Addr().Unmap()
	for _, p := range s.access.TrustedProxies {
		if p.Contains(addr) {
			https := strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
			return https, https
		}
	}
	return false, addr.IsLoopback()
}

// checkToken compares a presented token with the server's in constant time
// (hashes of both, so not even the length shows), within the budget of
// wrong tokens of r's client; it answers 401 or 429 itself when it returns
// false.
func (s *Server) checkToken(w http.ResponseWriter, r *http.Request, t string) bool {
	now := s.clk.Now()
	budget := s.wrongTokens.of(requestClient(r), now)
	if budget.TokensAt(now) < 1 {
		w.Header().Set("Retry-After", fmt.Sprint(int(tokenEvery.Seconds())))
		http.Error(w, "too many wrong tokens: wait", http.StatusTooManyRequests)
		return false
	}
	sum := sha256.Sum256([]byte(t))
	if subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1 {
		return true
	}
	budget.AllowN(now, 1)
	w.Header().Set("WWW-Authenticate", `Bearer realm="locator", error="invalid_token"`)
	http.Error(w, "wrong token", http.StatusUnauthorized)
	return false
}

// localPath is p cleaned to a path of this server: one leading "/" (so
// "//evil.example" is not taken for another host), else "/".
func localPath(p string) string {
	p = path.Clean(p)
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return "/"
	}
	return p
}

// sameOrigin reports whether the browser says the request comes from a
// page of this server.
func sameOrigin(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return true
	}
	o, err := url.Parse(r.Header.Get("Origin"))
	return err == nil && o.Host != "" && o.Host == r.Host
}
