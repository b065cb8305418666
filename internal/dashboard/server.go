package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/poller"
	"github.com/locatorhq/locator/workflow"
)

// DefaultAddr is where the service listens unless told otherwise: loopback.
const DefaultAddr = "127.0.0.1:8790"

//go:embed assets
var assets embed.FS

// Config wires a Server. Accounts and FeeDays are required.
type Config struct {
	// Accounts are the accounts the page shows and answers for, through
	// the account API (this process's own, whether it owns each or
	// follows its owner): the page reads and does everything through
	// them, their records and fee checks included.
	Accounts []account.Account
	// Metrics is the registry the broker clients report to (NewMetrics);
	// nil makes one that sees no broker calls.
	Metrics *Metrics
	Clock   clock.Clock
	Logger  *slog.Logger
	// Access is who may use the server and how it is reached (a random
	// token per start by default).
	Access
	// Links, when set, serves the signed answer links (answerlink) under
	// answerlink.Prefix, outside the token check (see withLinks).
	Links http.Handler
	// StaleAfter is how old the last successful history read may be
	// before /healthz says unhealthy (default 3 minutes; see setDefaults).
	StaleAfter time.Duration
	// FeeDays and FeeGrace are the reconciliation window behind the fee
	// problems metric (serve gives the reconcile job's: jobs.DefaultDays,
	// jobs.DefaultGrace); FeeDays is 1 or more.
	FeeDays  int
	FeeGrace time.Duration
}

// Server serves /healthz, /metrics, the page and its event stream.
type Server struct {
	accounts  map[string]account.Account // by account id
	ids       []string                   // the accounts' ids, in the order given
	metrics   *Metrics
	clk       clock.Clock
	log       *slog.Logger
	access    Access
	tokenMade bool // the token was made for this start
	tokenSum  [32]byte
	tls       *tls.Config // nil: plain HTTP
	sessions  sessions
	// uid is the user running the dashboard, the one user it answers on
	// loopback; peerUID finds the user of a loopback peer's socket (the
	// system's, peerUID; a test's stand-in for a user it cannot be).
	uid     int
	peerUID func(peer, local netip.AddrPort) (int, bool)
	// wrongTokens are the budgets of wrong tokens, per client, on the
	// server's clock.
	wrongTokens    limiters
	timeouts       timeouts
	maxConns       int
	maxClientConns int
	staleAfter     time.Duration
	feeDays        int
	feeGrace       time.Duration
	page           *template.Template
	handler        http.Handler // every route behind the transport, token and origin checks (guard)
	links          http.Handler

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
	switch {
	case len(cfg.Accounts) == 0:
		return nil, errors.New("dashboard: accounts are required")
	case cfg.FeeDays < 1 || cfg.FeeGrace < 0:
		return nil, fmt.Errorf("dashboard: fee window of %d days, grace %s: want 1 day or more, a grace of zero or more", cfg.FeeDays, cfg.FeeGrace)
	}
	cfg.setDefaults()
	page, err := template.New("page.html").Funcs(template.FuncMap{"market": func(t time.Time) time.Time { return t.In(market.NewYork) }}).
		ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, err
	}
	tokenMade := cfg.Token == "" && !cfg.NoToken
	if tokenMade {
		cfg.Token = rand.Text()
	}
	if cfg.NoToken {
		cfg.Token = ""
	}
	tlsConfig, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	s := &Server{accounts: map[string]account.Account{}, metrics: cfg.Metrics, clk: cfg.Clock, log: cfg.Logger,
		access: cfg.Access, tokenMade: tokenMade, tokenSum: sha256.Sum256([]byte(cfg.Token)), tls: tlsConfig,
		sessions: sessions{byID: map[[32]byte]session{}}, uid: os.Getuid(), peerUID: peerUID, wrongTokens: limiters{byClient: map[string]*rate.Limiter{}},
		timeouts: defaultTimeouts, maxConns: maxConns, maxClientConns: maxClientConns, staleAfter: cfg.StaleAfter,
		feeDays: cfg.FeeDays, feeGrace: cfg.FeeGrace, page: page, links: cfg.Links, fed: fed}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.name(cfg.Accounts); err != nil {
		s.cancel()
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	s.metrics.reg.MustRegister(newGauges(s))
	s.handler = s.routes()
	for _, id := range s.ids {
		s.wg.Add(1)
		go s.feed(id)
	}
	return s, nil
}

// setDefaults fills what cfg leaves unset with its default.
func (cfg *Config) setDefaults() {
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
		// An account with nothing open reads history once a quiet
		// spacing (2 minutes); a minute more leaves that read room to
		// wait its turn on a busy key pair (an idle read goes last)
		// before a healthy account is called stale.
		cfg.StaleAfter = poller.DefaultCadence.Quiet + time.Minute
	}
}

// name reads each account's id from its status, which answers even for
// an account its daemon cannot serve yet (Status.NotServed).
func (s *Server) name(accounts []account.Account) error {
	for _, a := range accounts {
		st, err := a.Status(s.ctx, account.StatusRequest{})
		if err != nil {
			return err
		}
		s.accounts[st.Account] = a
		s.ids = append(s.ids, st.Account)
	}
	return nil
}

// subscribeRetry is how long the metrics' feed of an account waits before
// subscribing again to one that refused (its daemon cannot serve it yet).
const subscribeRetry = 5 * time.Second

// feed counts account id's updates in the metrics until the server closes
// or the account is given up. An account that cannot be subscribed to yet
// (its daemon does not serve it now: its keys refused, its lease held
// elsewhere) is tried again every subscribeRetry: one account the daemon
// cannot serve is no reason for the dashboard not to serve the others.
func (s *Server) feed(id string) {
	defer s.wg.Done()
	updates, err := s.accounts[id].Subscribe(s.ctx)
	if err != nil {
		s.log.Warn("account updates not followed yet; trying again", "account", id, "err", err, "every", subscribeRetry)
	}
	for err != nil {
		if clock.Sleep(s.ctx, s.clk, subscribeRetry) != nil {
			return
		}
		if updates, err = s.accounts[id].Subscribe(s.ctx); err == nil {
			s.log.Info("account updates followed", "account", id)
		}
	}
	for {
		var u account.Update
		var ok bool
		select {
		case <-s.ctx.Done():
			return
		case u, ok = <-updates:
		}
		if !ok {
			return // the account was given up
		}
		s.metrics.observe(id, u)
		if s.fed != nil {
			s.fed(u)
		}
	}
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

// Start serves on ln (from Listen) until Close, which closes it: over TLS
// when the Access has a certificate, at most maxClientConns connections of
// a client and maxConns in all at once (see conns), each bounded by the
// read-header, read, write and idle timeouts. What
// CheckListen refuses for ln's address it refuses too, and closes ln.
func (s *Server) Start(ln net.Listener) (net.Addr, error) {
	if err := CheckListen(ln.Addr().String(), s.access); err != nil {
		ln.Close()
		return nil, err
	}
	addr := ln.Addr()
	held := &conns{max: s.maxConns, perClient: s.maxClientConns, byClient: map[string]map[*conn]struct{}{}}
	ln = listener{Listener: ln, set: held}
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	s.srv = &http.Server{Handler: held.counted(s.handler), ConnContext: withConn, ReadHeaderTimeout: s.timeouts.header, ReadTimeout: s.timeouts.read,
		WriteTimeout: s.timeouts.write, IdleTimeout: s.timeouts.idle, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("dashboard stopped", "err", err)
		}
	}()
	return addr, nil
}

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

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", s.handlePage)
	mux.HandleFunc("GET /events", s.handleEvents)
	mux.HandleFunc("POST /answer", s.handleAnswer)
	mux.HandleFunc("POST /cancel-order", s.handleCancelOrder)
	mux.HandleFunc("POST /credit-back", s.handleCreditBack)
	mux.HandleFunc("POST /credit-back-all", s.handleCreditBackAll)
	mux.HandleFunc("POST /locate", s.handleLocate)
	mux.HandleFunc("POST /logout", s.handleLogout)
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	return s.withLinks(s.guard(mux))
}

// health is /healthz's answer.
type health struct {
	Healthy bool `json:"healthy"`
	// Accounts is left out for a request without the token.
	Accounts []accountHealth `json:"accounts,omitempty"`
}

type accountHealth struct {
	Account       string   `json:"account"`
	LeaseHeld     bool     `json:"leaseHeld"`
	EngineRunning bool     `json:"engineRunning"`
	LastPollAge   *float64 `json:"lastPollAgeSeconds"` // null before the first read
	Healthy       bool     `json:"healthy"`
}

// handleHealth says, per account, whether this process holds the lease, its
// engine runs and history was read lately; 503 when any is not so. A
// request without the token gets the verdict alone.
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
	if r.Context().Value(verdictOnly{}) != nil {
		h.Accounts = nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !h.Healthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(h)
}

// handlePage serves the page with its forms' token: its login's, or
// without a token (NoToken) that of a session the page opens when the
// browser has none, so its forms post as they do after a login.
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	v := visitOf(r.Context())
	if v.csrf == "" && s.access.NoToken {
		v.csrf = s.setSession(w, r, v.secure, "")
	}
	var buf bytes.Buffer
	if err := s.page.Execute(&buf, s.build(r.Context(), v.csrf)); err != nil {
		s.log.Error("dashboard page", "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Write(buf.Bytes())
}

// act runs one action of the page: one call on the account named by the
// form's account field, through its account API (so it is the same
// whether this process owns the account or follows its owner). call
// returns what it did in words when there is more to say than the stream
// shows ("" when there is not). A form post (no script) is shown those
// words on a page of their own, else the page again; the page's script
// gets {"done": words} or the error's words, with a status from its kind.
func (s *Server) act(w http.ResponseWriter, r *http.Request, what string, call func(account.Account) (string, error)) {
	a := s.accounts[r.FormValue("account")]
	if a == nil {
		http.Error(w, "no such account on this dashboard", http.StatusBadRequest)
		return
	}
	done, err := call(a)
	if err != nil {
		status := http.StatusInternalServerError
		switch account.KindOf(err) {
		case account.KindNotOpen, account.KindChanged:
			status = http.StatusConflict
		case account.KindInput, account.KindRefused, account.KindSizing:
			status = http.StatusBadRequest
		}
		http.Error(w, err.Error(), status)
		return
	}
	s.log.Info("dashboard action", "account", r.FormValue("account"), "action", what)
	switch {
	case r.Header.Get("Accept") == "application/json":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(struct {
			Done string `json:"done,omitempty"`
		}{done})
	case done != "":
		s.done(w, what, done)
	default:
		http.Redirect(w, r, "/", http.StatusSeeOther)
	}
}

// done shows what an action did, in words, on a page of its own (a form
// posted without the page's script).
func (s *Server) done(w http.ResponseWriter, what, done string) {
	var buf bytes.Buffer
	if err := s.page.ExecuteTemplate(&buf, "done", struct{ What, Done string }{what, done}); err != nil {
		s.log.Error("dashboard result page", "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// creditedBack is a credit-back of the unused shares in words: each row started
// and each left alone, with why, or that there was nothing to credit
// back.
func creditedBack(res *account.CreditBackResult) string {
	var parts []string
	for _, c := range res.Started {
		parts = append(parts, fmt.Sprintf("crediting back %d %s %s", c.Shares, c.Symbol, c.Type))
	}
	for _, sk := range res.Skipped {
		parts = append(parts, fmt.Sprintf("skipped %s %s: %s", sk.Symbol, sk.Type, sk.Reason))
	}
	if len(res.Started) == 0 {
		parts = append([]string{"nothing unused to credit back"}, parts...)
	}
	return strings.Join(parts, "; ")
}

// inputError is a form field the page could not read: refused before any
// call, as the API refuses bad input.
func inputError(field, want string) error {
	return account.Errorf(account.KindInput, field+": want "+want+"; nothing was sent")
}

// handleAnswer answers an offer as `locator approve` or `locator decline`
// would, through the account's owner.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, "answer "+r.FormValue("answer"), func(a account.Account) (string, error) {
		answer := r.FormValue("answer")
		if answer != "approve" && answer != "decline" {
			return "", inputError("answer", "approve or decline")
		}
		req := account.AnswerRequest{ID: r.FormValue("id"), Accept: answer == "approve", Offer: r.FormValue("offer"), Via: "the dashboard"}
		if p := r.FormValue("price"); p != "" {
			price, err := decimal.NewFromString(p)
			if err != nil {
				return "", inputError("price", "a decimal")
			}
			req.Price = price
		}
		return "", a.Answer(r.Context(), req)
	})
}

// handleCancelOrder cancels a working order locator placed.
func (s *Server) handleCancelOrder(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, "cancel order", func(a account.Account) (string, error) {
		_, err := a.CancelOrder(r.Context(), account.CancelOrderRequest{ClientOrderID: r.FormValue("clientOrderId")})
		return "", err
	})
}

// handleCreditBack credits back shares of one inventory row: with unused
// set (the row's button), the shares the owner finds unused in it at the
// moment (not those working short sales need), answering what it started
// and left alone; else the quantity posted, which the owner refuses above
// the row's unused shares.
func (s *Server) handleCreditBack(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, "credit back "+r.FormValue("symbol"), func(a account.Account) (string, error) {
		if r.FormValue("unused") != "" {
			res, err := a.CreditBack(r.Context(), account.CreditBackRequest{Symbol: r.FormValue("symbol"),
				Type: brokercode.LocateType(r.FormValue("type")), Unused: true})
			if err != nil {
				return "", err
			}
			return creditedBack(res), nil
		}
		qty, err := strconv.ParseInt(r.FormValue("quantity"), 10, 64)
		if err != nil {
			return "", inputError("quantity", "a whole number of shares")
		}
		_, err = a.CreditBack(r.Context(), account.CreditBackRequest{Symbol: r.FormValue("symbol"), Quantity: qty,
			Type: brokercode.LocateType(r.FormValue("type"))})
		return "", err
	})
}

// handleCreditBackAll credits back every unused located share, as
// `locator credit-back --all` and the end-of-day job do, and answers with
// what it started and what it left alone, and why.
func (s *Server) handleCreditBackAll(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, "credit back all unused", func(a account.Account) (string, error) {
		res, err := a.CreditBack(r.Context(), account.CreditBackRequest{Unused: true})
		if err != nil {
			return "", err
		}
		return creditedBack(res), nil
	})
}

// handleLocate starts a locate of each symbol of the form under its cap:
// the cap decides every offer (a batch's offers come faster than anyone
// can weigh them), so it is required; the form's box allows the SingleUse
// side of a Reg SHO pair when it is the cheaper.
func (s *Server) handleLocate(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, "locate "+r.FormValue("symbols"), func(a account.Account) (string, error) {
		symbols := strings.FieldsFunc(r.FormValue("symbols"), func(c rune) bool { return c == ',' || c == ' ' })
		if len(symbols) == 0 {
			return "", inputError("symbols", "one or more symbols, such as KITE, DASH")
		}
		qty, err := strconv.ParseInt(strings.TrimSpace(r.FormValue("quantity")), 10, 64)
		if err != nil {
			return "", inputError("quantity", "a whole number of shares, such as 500")
		}
		capPrice, err := decimal.NewFromString(strings.TrimSpace(r.FormValue("cap")))
		if err != nil || !capPrice.IsPositive() {
			return "", inputError("cap", "the most to pay per share, such as 0.05")
		}
		req := account.LocateRequest{}
		for _, sym := range symbols {
			req.Items = append(req.Items, account.LocateItem{Symbol: strings.ToUpper(sym), Quantity: qty,
				Policy: workflow.Policy{MaxPrice: capPrice, AllowSingleUse: r.FormValue("allowSingleUse") != ""}})
		}
		res, err := a.Locate(r.Context(), req)
		if err != nil {
			return "", err
		}
		return "", res.Err()
	})
}

// viewRefreshTicks is how many ticks (seconds) pass between views sent
// without a workflow change: positions and P&L move with the stream, not
// with the workflows.
const viewRefreshTicks = 2

// handleEvents streams the page's live part: a "view" event (the sections'
// HTML) at once, after every workflow change and every viewRefreshTicks
// ticks, and every second of the service clock a "tick" event (that clock,
// Unix milliseconds), from which the page counts offers down on the
// service's clock, not the browser's, and a "state" event (the connection
// part's HTML: each account's broker connection as its owner finds it),
// so the page turns red within a second of the owner finding the broker
// down.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	changed := s.changes(ctx)
	// The stream outlives the server's read and write timeouts: nothing
	// more is read of the request, and each event gets a write deadline of
	// its own, so a reader that stops reading is still cut off.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	es := eventStream{s: s, ctx: ctx, w: w, fl: fl, rc: rc, csrf: visitOf(ctx).csrf}
	// One ticker for the stream's life: a workflow change sends a view and
	// leaves it be, so a busy engine does not hold the ticks back.
	tick := s.clk.NewTimer(time.Second)
	defer func() { tick.Stop() }()
	if !es.view() {
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
			if !es.view() {
				return
			}
		case now := <-tick.C():
			tick = s.clk.NewTimer(time.Second)
			if !es.send("tick", strconv.FormatInt(now.UnixMilli(), 10)) || !es.state() {
				return
			}
			// Inventory reads and job runs publish no change: the view is
			// sent again at the poller's idle inventory spacing.
			if ticks++; ticks%viewRefreshTicks == 0 && !es.view() {
				return
			}
		}
	}
}

// changes follows every account's updates until ctx ends: a value on the
// channel (at most one waiting: one view shows them all) after each.
func (s *Server) changes(ctx context.Context) <-chan struct{} {
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
	return changed
}

// eventStream writes one page's events: each with a write deadline of its
// own, flushed at once.
type eventStream struct {
	s   *Server
	ctx context.Context
	w   http.ResponseWriter
	fl  http.Flusher
	rc  *http.ResponseController
	// csrf is the form token of the stream's login: the forms of the
	// views it sends carry it.
	csrf string
}

// send writes one event; false when the reader is gone.
func (es eventStream) send(event, data string) bool {
	es.rc.SetWriteDeadline(time.Now().Add(es.s.timeouts.write))
	if _, err := es.w.Write([]byte(sseEvent(event, data))); err != nil {
		return false
	}
	es.fl.Flush()
	return true
}

// view sends the "view" event: the page's live sections.
func (es eventStream) view() bool {
	var buf bytes.Buffer
	if err := es.s.page.ExecuteTemplate(&buf, "live", es.s.build(es.ctx, es.csrf)); err != nil {
		es.s.log.Error("dashboard view", "err", err)
		return false
	}
	return es.send("view", buf.String())
}

// state sends the "state" event: each account's broker connection.
func (es eventStream) state() bool {
	var buf bytes.Buffer
	if err := es.s.page.ExecuteTemplate(&buf, "state", es.s.state(es.s.statuses(es.ctx), es.s.clk.Now())); err != nil {
		es.s.log.Error("dashboard state", "err", err)
		return false
	}
	return es.send("state", buf.String())
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
