package dashboard

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/store"
)

// DefaultAddr is where the service listens unless told otherwise: loopback,
// where no token is needed.
const DefaultAddr = "127.0.0.1:8790"

// TokenEnv names the environment variable the dashboard's token is read
// from (the token has no flag: argv is visible to every local user).
const TokenEnv = "LOCATOR_DASHBOARD_TOKEN"

// cookieName holds the session in a browser after a ?token= login: not
// the token, but sessionValue of it.
const cookieName = "locator_dashboard"

// sessionLabel is what the token signs to make the login cookie's value.
const sessionLabel = "locator-dashboard-session"

//go:embed assets
var assets embed.FS

// ErrTokenRequired: an address beyond loopback was asked for without a
// token.
var ErrTokenRequired = errors.New("dashboard: a token is required to listen beyond loopback (set " + TokenEnv + ")")

// Config wires a Server. Accounts and Store are required.
type Config struct {
	// Accounts are the accounts the page shows and answers for, through
	// the account API (this process's own, whether it owns each or
	// follows its owner).
	Accounts []account.Account
	// Store holds the records the page reads (fees, job runs).
	Store *store.Store
	// Metrics is the registry the broker clients report to (NewMetrics);
	// nil makes one that sees no broker calls.
	Metrics *Metrics
	Clock   clock.Clock
	Logger  *slog.Logger
	// Token, when set, is required of every request; without it the
	// server only listens on, and only answers to, loopback.
	Token string
	// StaleAfter is how old the last successful history read may be
	// before /healthz says unhealthy (default one minute; the idle
	// cadence reads every 8 s).
	StaleAfter time.Duration
	// FeeDays and FeeGrace are the reconciliation window behind the fee
	// problems metric (defaults: the reconcile job's).
	FeeDays  int
	FeeGrace time.Duration
}

// Server serves /healthz, /metrics, the page and its event stream.
type Server struct {
	accounts   map[string]account.Account // by account id
	ids        []string                   // the accounts' ids, in the order given
	st         *store.Store
	metrics    *Metrics
	clk        clock.Clock
	log        *slog.Logger
	token      string
	tokenSum   [32]byte
	session    string // the login cookie's value: sessionValue(token)
	staleAfter time.Duration
	feeDays    int
	feeGrace   time.Duration
	page       *template.Template
	handler    http.Handler

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	srv    *http.Server

	// fed, when set (tests), is called once the metrics have counted an
	// update.
	fed func(account.Update)
}

// New builds the server and starts feeding the metrics from each owner's
// engine; Close stops it.
func New(cfg Config) (*Server, error) { return newServer(cfg, nil) }

func newServer(cfg Config, fed func(account.Update)) (*Server, error) {
	if len(cfg.Accounts) == 0 || cfg.Store == nil {
		return nil, errors.New("dashboard: accounts and a store are required")
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = time.Minute
	}
	if cfg.FeeDays <= 0 {
		cfg.FeeDays = jobs.DefaultDays
	}
	if cfg.FeeGrace <= 0 {
		cfg.FeeGrace = jobs.DefaultGrace
	}
	page, err := template.New("page.html").Funcs(template.FuncMap{"market": func(t time.Time) time.Time { return t.In(jobs.Market) }}).
		ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, err
	}
	s := &Server{accounts: map[string]account.Account{}, st: cfg.Store, metrics: cfg.Metrics, clk: cfg.Clock, log: cfg.Logger,
		token: cfg.Token, tokenSum: sha256.Sum256([]byte(cfg.Token)), session: sessionValue(cfg.Token), staleAfter: cfg.StaleAfter,
		feeDays: cfg.FeeDays, feeGrace: cfg.FeeGrace, page: page, fed: fed}
	ctx, cancel := context.WithCancel(context.Background())
	s.ctx, s.cancel = ctx, cancel
	type subscribed struct {
		id      string
		updates <-chan account.Update
	}
	var subs []subscribed
	for _, a := range cfg.Accounts {
		st, err := a.Status(ctx, account.StatusRequest{})
		if err == nil {
			var updates <-chan account.Update
			if updates, err = a.Subscribe(ctx); err == nil {
				subs = append(subs, subscribed{st.Account, updates})
			}
		}
		if err != nil {
			cancel()
			return nil, fmt.Errorf("dashboard: %w", err)
		}
		s.accounts[st.Account] = a
		s.ids = append(s.ids, st.Account)
	}
	s.metrics.reg.MustRegister(newGauges(s))
	s.handler = s.routes()
	for _, sub := range subs {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				var u account.Update
				var ok bool
				select {
				case <-ctx.Done():
					return
				case u, ok = <-sub.updates:
				}
				if !ok {
					return // the account was given up
				}
				s.metrics.observe(sub.id, u)
				if s.fed != nil {
					s.fed(u)
				}
			}
		}()
	}
	return s, nil
}

// statuses reads each account's status, in the order given; an account
// that does not answer is shown as not held.
func (s *Server) statuses(ctx context.Context) []account.Status {
	out := make([]account.Status, 0, len(s.ids))
	for _, id := range s.ids {
		st, err := s.accounts[id].Status(ctx, account.StatusRequest{})
		if err != nil {
			s.log.Warn("account status not read", "account", id, "err", err)
			st = &account.Status{Account: id}
		}
		out = append(out, *st)
	}
	return out
}

// Handler serves every route behind the token and origin checks.
func (s *Server) Handler() http.Handler { return s.handler }

// Listen binds addr for Start, after CheckListen: a command binds before
// it sends anything, so a taken address is found first.
func Listen(addr, token string) (net.Listener, error) {
	if err := CheckListen(addr, token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return ln, nil
}

// Start serves on ln (from Listen) until Close, which closes it; beyond
// loopback it refuses without a token (ErrTokenRequired) and closes ln.
func (s *Server) Start(ln net.Listener) (net.Addr, error) {
	if err := CheckListen(ln.Addr().String(), s.token); err != nil {
		ln.Close()
		return nil, err
	}
	// No ReadTimeout or WriteTimeout: they would cut the event streams.
	s.srv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("dashboard stopped", "err", err)
		}
	}()
	return ln.Addr(), nil
}

// idleTimeout closes a kept-alive connection no request has used for
// that long.
const idleTimeout = 2 * time.Minute

// shutdownTimeout bounds how long Close waits for requests in flight.
const shutdownTimeout = 5 * time.Second

// Close stops serving and the metrics feed: it ends the event streams,
// then lets the requests in flight finish (for at most shutdownTimeout),
// so none uses the store after its owner closes it.
func (s *Server) Close() {
	s.cancel()
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			s.log.Warn("dashboard requests cut short", "err", err)
			s.srv.Close()
		}
	}
	s.wg.Wait()
}

// CheckListen says whether the server may listen on addr with token (or
// none): beyond loopback only with one (ErrTokenRequired). A command
// checks before it sends anything.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dashboard: listen address %q: %w", addr, err)
	}
	if token == "" && !loopback(host) {
		return ErrTokenRequired
	}
	return nil
}

// loopback reports whether host (a name or an address, without port) is
// this machine's loopback: an empty host or 0.0.0.0 listens everywhere.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", s.handlePage)
	mux.HandleFunc("GET /events", s.handleEvents)
	mux.HandleFunc("POST /answer", s.handleAnswer)
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	return s.guard(mux)
}

// guard lets a request through when it may see the service: with a token,
// one that carries it (bearer header, or the login cookie); without one,
// one addressed to a loopback host name, so a page of another site that
// rebinds its name to 127.0.0.1 is refused. A POST must also come from the
// page's own origin or carry the token in its header.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer := false
		if s.token == "" {
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			if !loopback(host) {
				http.Error(w, "this dashboard answers to loopback host names only (or set a token)", http.StatusForbidden)
				return
			}
		} else {
			if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet {
				s.login(w, r, t)
				return
			}
			auth, hasBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			bearer = hasBearer && s.valid(auth)
			if c, err := r.Cookie(cookieName); !bearer && (err != nil || !s.validSession(c.Value)) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="locator"`)
				http.Error(w, "a token is required: open the page once with ?token=..., or send Authorization: Bearer", http.StatusUnauthorized)
				return
			}
		}
		if r.Method == http.MethodPost && !bearer && !sameOrigin(r) {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// valid compares a presented token with the server's in constant time
// (hashes of both, so not even the length shows).
func (s *Server) valid(t string) bool {
	sum := sha256.Sum256([]byte(t))
	return subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1
}

// sessionValue is the login cookie's value for token: hex of
// HMAC-SHA256 keyed by the token over sessionLabel. Any token, whatever
// its bytes, makes a valid cookie value, and the cookie is not the token.
func sessionValue(token string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(sessionLabel))
	return hex.EncodeToString(mac.Sum(nil))
}

// validSession compares a presented login cookie with the server's in
// constant time.
func (s *Server) validSession(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.session)) == 1
}

// login sets the session cookie and redirects to the same path of this
// server without the token, so it stays out of the history, bookmarks and
// Referer.
func (s *Server) login(w http.ResponseWriter, r *http.Request, t string) {
	if !s.valid(t) {
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.session, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	q := r.URL.Query()
	q.Del("token")
	to := url.URL{Path: localPath(r.URL.Path), RawQuery: q.Encode()}
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
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

// health is /healthz's answer.
type health struct {
	Healthy  bool            `json:"healthy"`
	Accounts []accountHealth `json:"accounts"`
}

type accountHealth struct {
	Account       string   `json:"account"`
	LeaseHeld     bool     `json:"leaseHeld"`
	EngineRunning bool     `json:"engineRunning"`
	LastPollAge   *float64 `json:"lastPollAgeSeconds"` // null before the first read
	Healthy       bool     `json:"healthy"`
}

// handleHealth says, per account, whether this process holds the lease, its
// engine runs and history was read lately; 503 when any is not so.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	now := s.clk.Now()
	h := health{Healthy: true}
	for _, st := range s.statuses(r.Context()) {
		a := accountHealth{Account: st.Account, LeaseHeld: st.Held, EngineRunning: st.Running}
		if at := st.LastPoll; !at.IsZero() {
			age := now.Sub(at).Seconds()
			a.LastPollAge = &age
		}
		a.Healthy = a.LeaseHeld && a.EngineRunning && a.LastPollAge != nil && *a.LastPollAge <= s.staleAfter.Seconds()
		h.Healthy = h.Healthy && a.Healthy
		h.Accounts = append(h.Accounts, a)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !h.Healthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(h)
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := s.page.Execute(&buf, s.build(r.Context())); err != nil {
		s.log.Error("dashboard page", "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Write(buf.Bytes())
}

// handleAnswer answers an offer as `locator approve` or `locator decline`
// would, through the account's owner; a form post (no script) is shown
// the page again, the page's script gets {}.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	id, acct, answer := r.FormValue("id"), r.FormValue("account"), r.FormValue("answer")
	a := s.accounts[acct]
	if a == nil || id == "" || (answer != "approve" && answer != "decline") {
		http.Error(w, "want account, id and answer=approve|decline", http.StatusBadRequest)
		return
	}
	req := account.AnswerRequest{ID: id, Accept: answer == "approve", Offer: r.FormValue("offer"), Via: "the dashboard"}
	if err := a.Answer(r.Context(), req); err != nil {
		status := http.StatusInternalServerError
		switch account.KindOf(err) {
		case account.KindNotOpen, account.KindChanged:
			status = http.StatusConflict
		case account.KindInput, account.KindRefused:
			status = http.StatusBadRequest
		}
		http.Error(w, err.Error(), status)
		return
	}
	s.log.Info("offer answered on the dashboard", "account", acct, "id", id, "answer", answer)
	if r.Header.Get("Accept") == "application/json" {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}\n"))
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// viewRefreshTicks is how many ticks (seconds) pass between views sent
// without a workflow change: the poller's idle inventory spacing.
const viewRefreshTicks = 5

// handleEvents streams the page's live part: a "view" event (the sections'
// HTML) at once, after every workflow change and every viewRefreshTicks
// ticks, and a "tick" event (the service clock, Unix milliseconds) every
// second of that clock, from which the page counts offers down: on the
// service's clock, not the browser's.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	changed := make(chan struct{}, 1)
	for _, a := range s.accounts {
		updates, err := a.Subscribe(ctx)
		if err != nil {
			s.log.Warn("account not followed", "err", err)
			continue
		}
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case _, ok := <-updates:
					if !ok {
						return
					}
				}
				select {
				case changed <- struct{}{}:
				default: // one view shows them all
				}
			}
		}()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	send := func(event, data string) bool {
		if _, err := w.Write([]byte(sseEvent(event, data))); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	sendView := func() bool {
		var buf bytes.Buffer
		if err := s.page.ExecuteTemplate(&buf, "live", s.build(ctx)); err != nil {
			s.log.Error("dashboard view", "err", err)
			return false
		}
		return send("view", buf.String())
	}
	// One ticker for the stream's life: a workflow change sends a view and
	// leaves it be, so a busy engine does not hold the ticks back.
	tick := s.clk.NewTimer(time.Second)
	defer func() { tick.Stop() }()
	if !sendView() {
		return
	}
	ticks := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case <-changed:
			if !sendView() {
				return
			}
		case now := <-tick.C():
			tick = s.clk.NewTimer(time.Second)
			if !send("tick", strconv.FormatInt(now.UnixMilli(), 10)) {
				return
			}
			// Inventory reads and job runs publish no change: the view is
			// sent again at the poller's idle inventory spacing.
			if ticks++; ticks%viewRefreshTicks == 0 && !sendView() {
				return
			}
		}
	}
}

// sseEvent frames one server-sent event: each line of data (ended by
// "\r\n", "\r" or "\n", as the event stream format reads them) on a data
// field of its own, so no text in data can end the event early.
func sseEvent(event, data string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\n", event)
	data = strings.ReplaceAll(data, "\r\n", "\n")
	for line := range strings.SplitSeq(data, "\n") {
		for part := range strings.SplitSeq(line, "\r") {
			fmt.Fprintf(&b, "data: %s\n", part)
		}
	}
	b.WriteString("\n")
	return b.String()
}
