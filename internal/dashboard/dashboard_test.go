package dashboard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// testSymbol, askSymbol and floatSymbol are hard-to-borrow symbols the
// tests add to the scenario.
const (
	testSymbol  = "DASH"
	askSymbol   = "KITE"
	floatSymbol = "FLOT"
)

// floatPrice is floatSymbol's price per share: 0.013 as a broker that
// keeps prices in float64 computes and sends it (13 ticks of 0.001 is
// 0.013000000000000001), a JSON number the simulator sends as given.
func floatPrice() decimal.Decimal {
	ticks, tick := 13.0, 0.001
	return decimal.RequireFromString(strconv.FormatFloat(ticks*tick, 'g', -1, 64))
}

type testBundle struct {
	sim   *simtest.Bundle
	store *store.Store
	owner *service.Owner
	// closeOwner gives the account up (once).
	closeOwner func()
	metrics    *Metrics
	server     *Server
	fed        chan engine.Update
	// subscribed is closed when the server's feed subscribes (with
	// setupOpt.refuseSubscribe).
	subscribed chan struct{}
	// loops is the owner's, once it runs: virtual time waits while it
	// holds an event or a question (Owner.Idle).
	loops simtest.Loops
	// session is the page's session cookie and form token, once loaded
	// (pageSession).
	sessionMu sync.Mutex
	cookie    *http.Cookie
	csrf      string
}

type setupOpt struct {
	// token is the server's; empty serves without one (NoToken).
	token      string
	staleAfter time.Duration
	onUpdate   func(engine.Update)
	// clock, when set, drives the fake clock instead of plain virtual time.
	clock func(sim *simtest.Bundle, idle func() bool)
	// follower serves the account through the owner's socket, as a
	// process that follows the owner does, rather than in process.
	follower bool
	// budget is the owner's locate budget.
	budget workflow.Budget
	// refuseSubscribe is how many subscriptions the account refuses first,
	// as one its daemon cannot serve yet does.
	refuseSubscribe int32
}

// refusing is an account that refuses its first subscriptions; taken is
// closed at the first it takes.
type refusing struct {
	account.Account
	left  *atomic.Int32
	taken chan struct{}
}

func (r refusing) Subscribe(ctx context.Context) (<-chan account.Update, error) {
	if r.left.Add(-1) >= 0 {
		return nil, errors.New("account LV100001 not served here yet")
	}
	ch, err := r.Account.Subscribe(ctx)
	if err == nil {
		close(r.taken)
	}
	return ch, err
}

// setup starts the simulator (with testSymbol offered at 0.02, askSymbol
// at 0.04 and floatSymbol at floatPrice), a store on
// a temp file, the owner of LV100001 with its engine, and the dashboard
// server, all on one fake clock.
func setup(t *testing.T, o setupOpt) *testBundle {
	t.Helper()
	b := &testBundle{fed: make(chan engine.Update, 256)}
	b.sim = simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) {
		sc.Timing.FeeDelay = brokersim.Duration(time.Millisecond) // a fill's fee is in the ledger at once
		sc.Pools = append(sc.Pools,
			brokersim.ScenarioPool{Symbol: testSymbol, LocateType: 1, Shares: 10000, Price: brokersim.Dec(decimal.RequireFromString("0.02"))},
			brokersim.ScenarioPool{Symbol: askSymbol, LocateType: 1, Shares: 10000, Price: brokersim.Dec(decimal.RequireFromString("0.04"))},
			brokersim.ScenarioPool{Symbol: floatSymbol, LocateType: 1, Shares: 10000, Price: brokersim.Dec(floatPrice())})
	}))
	dbPath := filepath.Join(t.TempDir(), "locator.db")
	st, err := store.Open(t.Context(), dbPath, b.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b.store = st
	// The daemon owner's ledger sync, the engine's loop and its poller
	// sleep on the clock when idle (the heartbeat keeps real time).
	if o.clock != nil {
		o.clock(b.sim, b.loops.Idle)
	} else {
		b.sim.RunClockWhile(t, 3, b.loops.Idle)
	}
	b.metrics = NewMetrics()
	client := b.sim.Client(t, b.sim.Live, brokerclient.WithObserver(b.metrics.ObserveCall))
	log := slog.New(slog.NewTextHandler(tWriter{t}, nil))
	run, err := os.MkdirTemp("", "lr") // short: a socket's path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	b.owner, err = service.Own(t.Context(), service.OwnerConfig{
		Engine: engine.Config{Client: client, Store: st, Clock: b.sim.Clock, Account: "LV100001",
			Env: brokerclient.EnvLive, Logger: log, OnUpdate: o.onUpdate, Budget: o.budget},
		DB: dbPath, BaseURL: b.sim.URL, RuntimeDir: run, Role: wire.RoleDaemon})
	if err != nil {
		t.Fatal(err)
	}
	b.loops.Add(b.owner)
	b.closeOwner = sync.OnceFunc(b.owner.Close)
	t.Cleanup(b.closeOwner)
	var served account.Account = b.owner.Local().As(account.Caller{Name: "dashboard test"})
	if o.follower {
		c := wire.Dial(b.owner.Lease().Endpoint, account.Caller{Name: "dashboard test", Env: brokerclient.EnvLive},
			b.sim.Client(t, b.sim.Live), b.sim.URL)
		t.Cleanup(c.Close)
		served = c
	}
	if o.refuseSubscribe > 0 {
		r := refusing{Account: served, left: new(atomic.Int32), taken: make(chan struct{})}
		r.left.Store(o.refuseSubscribe)
		served, b.subscribed = r, r.taken
	}
	b.server, err = newServer(Config{Accounts: []account.Account{served}, FeeDays: jobs.DefaultDays, FeeGrace: jobs.DefaultGrace, Metrics: b.metrics, Clock: b.sim.Clock,
		Logger: log, Access: Access{Token: o.token, NoToken: o.token == ""}, StaleAfter: o.staleAfter}, func(u engine.Update) {
		select {
		case b.fed <- u:
		default: // a test that does not read them
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	asOwnUser(b.server)
	t.Cleanup(b.server.Close)
	return b
}

// serveLocal is where the requests serve hands the handler came in, as a
// server's connection says (http.LocalAddrContextKey). No socket holds
// the pair, so the kernel cannot name their peer's user: asOwnUser says it
// is this user.
var serveLocal = netip.MustParseAddrPort("127.0.0.1:8790")

// asOwnUser has s take the requests that came in at serveLocal (handed to
// its handler by serve, on no socket) for this user's; every other
// request's user is looked up as the system does (peerUID).
func asOwnUser(s *Server) {
	s.peerUID = func(peer, local netip.AddrPort) (int, bool) {
		if local == serveLocal {
			return os.Getuid(), true
		}
		return peerUID(peer, local)
	}
}

// tWriter sends the service's log to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// get serves one request on the handler; edit adds headers.
func (b *testBundle) get(t *testing.T, target string, edit func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	return b.serve(t, httptest.NewRequest(http.MethodGet, target, nil), edit)
}

// serve serves one request on the handler as if it came in at serveLocal
// from a loopback peer of this user; edit changes it first.
func (b *testBundle) serve(t *testing.T, req *http.Request, edit func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.TCPAddrFromAddrPort(serveLocal)))
	req.Host, req.RemoteAddr = serveLocal.String(), "127.0.0.1:50123"
	if edit != nil {
		edit(req)
	}
	rec := httptest.NewRecorder()
	b.server.handler.ServeHTTP(rec, req)
	return rec
}

// syncLedger reads today's cash ledger into the store, as the ledger-sync
// job does.
func (b *testBundle) syncLedger(t *testing.T) {
	t.Helper()
	today := ledger.TradeDate(b.sim.Clock.Now())
	if _, err := ledger.Sync(t.Context(), b.sim.Client(t, b.sim.Live), b.store, "LV100001", today, today.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
}

// jobRun records a finished run of job.
func (b *testBundle) jobRun(t *testing.T, job string, outcome locator.JobOutcome, detail string) {
	t.Helper()
	run, err := b.store.StartJobRun(t.Context(), job, "locate", "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.EndJobRun(t.Context(), run.ID, outcome, detail); err != nil {
		t.Fatal(err)
	}
}

// answer posts the page's answer form for a workflow that is not open,
// with form token csrf ("" leaves it out), and returns the status; edit
// adds headers.
func (b *testBundle) answer(t *testing.T, verb, csrf string, edit func(*http.Request)) int {
	t.Helper()
	form := url.Values{"account": {"LV100001"}, "id": {"wf-none"}, "answer": {verb}}
	if csrf != "" {
		form.Set(csrfField, csrf)
	}
	req := httptest.NewRequest(http.MethodPost, "/answer", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.serve(t, req, edit).Code
}

// formToken finds the form token the page's forms carry in page.
var formToken = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// pageSession loads the page as a browser without a login does (edit adds
// a login's cookie or a header) and returns the session cookie it was
// given (nil: none) and the form token its forms carry ("": none).
func (b *testBundle) pageSession(t *testing.T, edit func(*http.Request)) (*http.Cookie, string) {
	t.Helper()
	rec := b.get(t, "/", edit)
	if rec.Code != http.StatusOK {
		t.Fatalf("the page: %d %s", rec.Code, rec.Body.String())
	}
	var cookie *http.Cookie
	if cs := rec.Result().Cookies(); len(cs) == 1 {
		cookie = cs[0]
	}
	var csrf string
	if m := formToken.FindStringSubmatch(rec.Body.String()); m != nil {
		csrf = m[1]
	}
	return cookie, csrf
}

// session is the session b's posts carry, with its form token: opened
// once, as the page opens one (pageSession) but without showing the page,
// whose first view starts the owner's P&L watch, one more sleeper on the
// virtual clock the actions' tests run on.
func (b *testBundle) session(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	b.sessionMu.Lock()
	defer b.sessionMu.Unlock()
	if b.cookie == nil {
		id, csrf := b.server.sessions.open(b.sim.Clock.Now(), "")
		b.cookie, b.csrf = &http.Cookie{Name: fmt.Sprintf("%s_%d", cookieBase, serveLocal.Port()), Value: id}, csrf
	}
	return b.cookie, b.csrf
}

// locate runs a locate the policy accepts alone and waits for its end.
func (b *testBundle) locate(t *testing.T, qty int64) *workflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	id := b.startLocate(t, qty)
	w, err := b.wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// startLocate starts a locate the policy accepts alone, through the
// owner's account API, and returns its workflow's id.
func (b *testBundle) startLocate(t *testing.T, qty int64) string {
	t.Helper()
	res, err := b.owner.Local().As(account.Caller{Name: "test"}).Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{
		{Symbol: testSymbol, Quantity: qty, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05")}}}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	return res.Started[0].ID
}

// wait follows workflow id through the owner's account API to its end.
func (b *testBundle) wait(ctx context.Context, id string) (*workflow.Workflow, error) {
	return b.owner.Local().As(account.Caller{Name: "test"}).Follow(ctx, account.FollowRequest{ID: id}, nil)
}

// awaitFed waits until the metrics have counted workflow id's end.
func (b *testBundle) awaitFed(t *testing.T, id string) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case u := <-b.fed:
			if u.Workflow != nil && u.Workflow.ID == id && u.Workflow.Terminal() {
				return
			}
		case <-timeout.C:
			t.Fatalf("the metrics never saw %s end", id)
		}
	}
}

// metric reads one series (name with its labels, as exposed) from a
// scrape; absent reads as -1.
func metric(t *testing.T, scrape, series string) float64 {
	t.Helper()
	for line := range strings.SplitSeq(scrape, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// /healthz says healthy while the owner holds the lease, its engine runs
// and history was read lately; 503 once the last read is older than
// StaleAfter, and once the lease is given up.
func TestHealthz(t *testing.T) {
	t.Parallel()
	// The clock moves only when the test says.
	b := setup(t, setupOpt{staleAfter: 2 * time.Second, clock: func(*simtest.Bundle, func() bool) {}})
	// The ledger sync, the loop and the poller asleep: history was read.
	<-b.sim.Clock.BlockUntil(3)
	rec := b.get(t, "/healthz", nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `"healthy":true`) || !strings.Contains(body, `"leaseHeld":true`) ||
		!strings.Contains(body, `"engineRunning":true`) || !strings.Contains(body, `"lastPollAgeSeconds":0`) {
		t.Fatalf("healthy owner: %d %s", rec.Code, body)
	}
	// Three seconds on: the poller's next read (idle: 5 s) is not due,
	// the ledger sync (every 2 minutes) neither.
	b.sim.Clock.Advance(3 * time.Second)
	rec = b.get(t, "/healthz", nil)
	if body := rec.Body.String(); rec.Code != http.StatusServiceUnavailable || !strings.Contains(body, `"lastPollAgeSeconds":3`) {
		t.Fatalf("history read 3 s ago, stale after 2 s: %d %s", rec.Code, body)
	}
	b.closeOwner()
	rec = b.get(t, "/healthz", nil)
	body = rec.Body.String()
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(body, `"leaseHeld":false`) {
		t.Fatalf("closed owner: %d %s", rec.Code, body)
	}
}

// An account that cannot be subscribed to when the
// dashboard starts (its daemon does not serve it yet) does not keep the
// dashboard from serving; its updates are followed once it can be: a
// locate after two refusals is counted.
func TestMetricsFollowAnAccountServedLate(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{refuseSubscribe: 2})
	if rec := b.get(t, "/healthz", nil); rec.Code != http.StatusOK {
		t.Fatalf("/healthz beside an account not followed yet: %d %s", rec.Code, rec.Body.String())
	}
	awaitSignal(t, "the feed's third subscription", b.subscribed)
	w := b.locate(t, 300)
	if w.State != states.Filled {
		t.Fatalf("locate ended %s: %s", w.State, w.Reason)
	}
	b.awaitFed(t, w.ID)
	if v := metric(t, b.get(t, "/metrics", nil).Body.String(), `locator_workflows_ended_total{account="LV100001",state="filled"}`); v != 1 {
		t.Errorf("filled workflows counted: %v, want 1", v)
	}
}

// A locate through the simulator moves the named series: the broker
// calls by route template and status, the offer-to-accept histogram, the
// ended workflows; the gauges are there with the lease held and nothing
// queued, and no 429.
func TestMetricsAfterLocate(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	before := b.get(t, "/metrics", nil).Body.String()
	const quote = `locator_broker_calls_total{route="POST /v1/api/accounts/locates/quote",status="200"}`
	if v := metric(t, before, quote); v != -1 {
		t.Fatalf("quotes before any locate: %v", v)
	}
	w := b.locate(t, 300)
	if w.State != states.Filled {
		t.Fatalf("locate ended %s: %s", w.State, w.Reason)
	}
	b.awaitFed(t, w.ID)
	after := b.get(t, "/metrics", nil).Body.String()
	for series, want := range map[string]float64{
		quote: 1,
		`locator_broker_calls_total{route="POST /v1/api/accounts/locates/accept",status="200"}`: 1,
		`locator_broker_rate_limited_total{route="POST /v1/api/accounts/locates/quote"}`:        0,
		`locator_offer_to_accept_seconds_count{account="LV100001"}`:                             1,
		`locator_workflows_ended_total{account="LV100001",state="filled"}`:                      1,
		`locator_workflows{account="LV100001",kind="locate",state="offered"}`:                   0,
		`locator_quote_queue{account="LV100001"}`:                                               0,
		`locator_lease_held{account="LV100001"}`:                                                1,
		`locator_lease_term{account="LV100001"}`:                                                1,
		`locator_owned_here{account="LV100001"}`:                                                1,
		`locator_standbys{account="LV100001"}`:                                                  0,
		`locator_fee_problems{account="LV100001"}`:                                              0,
	} {
		if got := metric(t, after, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if metric(t, after, `locator_broker_calls_total{route="GET /v1/api/accounts/{accountId}/locates/history",status="200"}`) < 1 {
		t.Errorf("no history read counted:\n%s", after)
	}
	if strings.Contains(after, "LV100001/") || strings.Contains(after, w.QuoteReqID) {
		t.Errorf("a raw path or an id is a label:\n%s", after)
	}
}

// Without a token (NoToken) the server listens on loopback only and
// answers only to loopback host names; with one, every request needs it
// (bearer or the cookie of a ?token= login, locator_dashboard_PORT, which
// redirects the token out of the URL). An answer must come from the page's
// origin with the form token of the login (see also
// TestAnswerNeedsOriginAndFormToken), or carry the bearer.
func TestTokenRules(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	if _, err := Listen("0.0.0.0:0", Access{NoToken: true}); !errors.Is(err, ErrTokenRequired) {
		t.Errorf("0.0.0.0 without a token: %v", err)
	}
	if _, err := Listen(":0", Access{NoToken: true}); !errors.Is(err, ErrTokenRequired) {
		t.Errorf(":0 without a token: %v", err)
	}
	// A listener bound beyond loopback some other way is refused too.
	if wide, err := net.Listen("tcp", ":0"); err != nil {
		t.Fatal(err)
	} else if _, err := b.server.Start(wide); !errors.Is(err, ErrTokenRequired) {
		t.Errorf("a listener on %s without a token: %v", wide.Addr(), err)
	}
	ln, err := Listen("127.0.0.1:0", Access{NoToken: true})
	if err != nil {
		t.Fatalf("loopback without a token: %v", err)
	}
	addr, err := b.server.Start(ln)
	if err != nil {
		t.Fatalf("loopback without a token: %v", err)
	}
	resp, err := http.Get("http://" + addr.String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("loopback page: %s", resp.Status)
	}
	if rec := b.get(t, "/", func(r *http.Request) { r.Host = "rebound.example:8790" }); rec.Code != http.StatusForbidden {
		t.Errorf("no token, a foreign host name: %d", rec.Code)
	}

	const token = "dash-token-7b1e"
	tb := setup(t, setupOpt{token: token})
	loginCookie := fmt.Sprintf("%s_%d", cookieBase, serveLocal.Port())
	for _, tt := range []struct {
		name string
		edit func(*http.Request)
		want int
	}{
		{"nothing", nil, http.StatusUnauthorized},
		{"wrong bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusUnauthorized},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }, http.StatusOK},
		{"wrong cookie", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: loginCookie, Value: "nope"}) }, http.StatusUnauthorized},
		{"the token as the cookie", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: loginCookie, Value: token}) }, http.StatusUnauthorized},
		{"foreign host with bearer", func(r *http.Request) {
			r.Host = "dash.example:8790"
			r.Header.Set("Authorization", "Bearer "+token)
		}, http.StatusOK},
	} {
		if rec := tb.get(t, "/", tt.edit); rec.Code != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, rec.Code, tt.want)
		}
	}
	if rec := tb.get(t, "/?token=nope", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %d", rec.Code)
	}
	rec := tb.get(t, "/?token="+token, nil)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" || len(cookies) != 1 ||
		cookies[0].Name != loginCookie || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d to %q, cookies %v, want %s", rec.Code, rec.Header().Get("Location"), cookies, loginCookie)
	}
	withCookie := func(r *http.Request) { r.AddCookie(cookies[0]) }
	_, loginCSRF := tb.pageSession(t, withCookie)
	if loginCSRF == "" {
		t.Fatal("the page of a login has no form token")
	}
	ta := func(csrf string, edit func(*http.Request)) int { return tb.answer(t, "decline", csrf, edit) }
	if code := ta(loginCSRF, withCookie); code != http.StatusForbidden {
		t.Errorf("answer with the cookie, no origin: %d", code)
	}
	fromPage := func(r *http.Request) { withCookie(r); r.Header.Set("Sec-Fetch-Site", "same-origin") }
	if code := ta("", fromPage); code != http.StatusForbidden {
		t.Errorf("answer with the cookie from the page, no form token: %d, want 403", code)
	}
	if code := ta(loginCSRF, fromPage); code != http.StatusConflict {
		t.Errorf("answer with the cookie from the page: %d, want 409", code)
	}
	if code := ta("", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }); code != http.StatusConflict {
		t.Errorf("answer with the bearer: %d, want 409", code)
	}
	// Beyond loopback a token is not enough: it would cross the network in
	// clear (see TestTLSBeyondLoopback).
	if _, err := Listen("0.0.0.0:0", Access{Token: token}); !errors.Is(err, ErrTLSRequired) {
		t.Errorf("beyond loopback with a token, no TLS: %v", err)
	}
}

// Without a token, an answer is the page's own only from its origin with
// the form token of the session the page opened (it opens one for a
// browser that has none): without an origin, from another site or from a
// page of another port (same site, sent the cookie), without the form
// token, with a wrong one or without the session, it is refused 403 and
// nothing is asked of the account.
func TestAnswerNeedsOriginAndFormToken(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	cookie, csrf := b.pageSession(t, nil)
	if cookie == nil || csrf == "" {
		t.Fatalf("the page opened no session (cookie %v, form token %q)", cookie, csrf)
	}
	withSession := func(origin string) func(*http.Request) {
		return func(r *http.Request) { r.AddCookie(cookie); r.Header.Set("Origin", origin) }
	}
	for _, c := range []struct {
		name string
		csrf string
		edit func(*http.Request)
		want int
	}{
		{"without an origin", csrf, func(r *http.Request) { r.AddCookie(cookie) }, http.StatusForbidden},
		{"from another origin", csrf, withSession("http://evil.example"), http.StatusForbidden},
		{"from another port's page", csrf, withSession("http://127.0.0.1:9999"), http.StatusForbidden},
		{"without the form token", "", withSession("http://127.0.0.1:8790"), http.StatusForbidden},
		{"with a wrong form token", csrf + "x", withSession("http://127.0.0.1:8790"), http.StatusForbidden},
		{"without the session", csrf, func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:8790") }, http.StatusForbidden},
		{"same origin, session and form token (to no open workflow)", csrf, withSession("http://127.0.0.1:8790"), http.StatusConflict},
	} {
		if code := b.answer(t, "approve", c.csrf, c.edit); code != c.want {
			t.Errorf("no token, an answer %s: %d, want %d", c.name, code, c.want)
		}
	}
}

// The event stream shows a workflow the moment the engine publishes it,
// and neither the page nor the stream carries the key's secret or the
// token.
func TestEventsDeliverUpdate(t *testing.T) {
	t.Parallel()
	const token = "dash-token-e5"
	b := setup(t, setupOpt{token: token})
	srv := httptest.NewServer(b.server.handler)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel) // before srv.Close: the stream ends first
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("events: %s %s", resp.Status, ct)
	}
	var stream strings.Builder
	events, next := readSSE(t, resp.Body, &stream)
	first := next("first view", func(name, _ string) bool { return name == "view" })
	if !strings.Contains(first, "No locate today") {
		t.Errorf("first view: %s", first)
	}
	w := b.locate(t, 200)
	next("view of the locate", func(name, data string) bool {
		return name == "view" && strings.Contains(data, w.Symbol) && strings.Contains(data, "200")
	})
	next("tick", func(name, _ string) bool { return name == "tick" })
	page := b.get(t, "/", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }).Body.String()
	cancel()
	for range events {
	}
	for _, secret := range []string{b.sim.Live.Secret, token} {
		if strings.Contains(page, secret) || strings.Contains(stream.String(), secret) {
			t.Errorf("a secret is served: %q", secret)
		}
	}
	if !strings.Contains(page, "LV100001") {
		t.Errorf("page:\n%s", page)
	}
}

// The page shows the located inventory, today's fees as a chart (the
// fill's expected fee beside the ledger's charge) and the job runs.
func TestPageShowsInventoryFeesAndJobs(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	w := b.locate(t, 300)
	if w.State != states.Filled {
		t.Fatalf("locate ended %s: %s", w.State, w.Reason)
	}
	// The same again is covered: its check reads the inventory the fill
	// changed, which the page shows.
	if w := b.locate(t, 300); w.State != states.Covered {
		t.Fatalf("second locate ended %s: %s", w.State, w.Reason)
	}
	b.syncLedger(t)
	b.jobRun(t, "premarket-locates", locator.JobFailed, "HTBX declined")
	page := b.get(t, "/", nil).Body.String()
	for _, want := range []string{
		"<td>" + testSymbol + ` <small class="type">Locate</small></td><td class="num">300</td>`, // inventory
		`<svg class="chart"`, `class="sym">` + testSymbol + `</text>`, ">6.00</text>", // fees
		`<tr class="outcome-failed"><td>premarket-locates</td>`, "HTBX declined", // job runs
		"No working order.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

// An event's data is split on every line end the event stream format
// knows ("\r\n", "\r", "\n"): a lone "\r" in broker text would otherwise
// end the data line, and what follows it would be read as a field.
func TestSSEEventSplitsEveryLineEnd(t *testing.T) {
	t.Parallel()
	got := sseEvent("view", "a\rretry: 1\r\nb\nc\r")
	want := "event: view\ndata: a\ndata: retry: 1\ndata: b\ndata: c\ndata: \n\n"
	if got != want {
		t.Errorf("sseEvent = %q, want %q", got, want)
	}
	if strings.Count(got, "\r") != 0 {
		t.Errorf("a carriage return is in the frame: %q", got)
	}
}

// A token of any bytes (those a cookie cannot carry among them) logs in:
// the cookie is a random session id, never the token, and expires; and the
// redirect after the login stays on this server, whatever the path asked
// for.
func TestLoginCookieAndRedirect(t *testing.T) {
	t.Parallel()
	const token = "tok;en \"quoted\" back\\slash é,=" // ; " \ space , and non-ASCII
	b := setup(t, setupOpt{token: token})
	rec := b.get(t, "/?token="+url.QueryEscape(token), nil)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 || cookies[0].Value == "" || cookies[0].MaxAge != int(sessionTTL.Seconds()) {
		t.Fatalf("login: %d, cookies %v, want a session cookie good for %v", rec.Code, cookies, sessionTTL)
	}
	if sc := rec.Header().Get("Set-Cookie"); strings.Contains(sc, "tok") {
		t.Errorf("the cookie holds the token: %s", sc)
	}
	if again := b.get(t, "/?token="+url.QueryEscape(token), nil).Result().Cookies(); len(again) != 1 || again[0].Value == cookies[0].Value {
		t.Errorf("a second login got the same session: %v", again)
	}
	if rec := b.get(t, "/", func(r *http.Request) { r.AddCookie(cookies[0]) }); rec.Code != http.StatusOK {
		t.Errorf("page with the login cookie: %d", rec.Code)
	}
	for _, tt := range []struct{ target, want string }{
		{"//evil.example?token=", "/evil.example"},
		{"//evil.example/x?a=1&token=", "/evil.example/x?a=1"},
		{"/\\evil.example?token=", "/%5Cevil.example"},
		{"/a/../..//evil.example?token=", "/evil.example"},
		{"/?token=", "/"},
	} {
		rec := b.get(t, tt.target+url.QueryEscape(token), nil)
		if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != tt.want {
			t.Errorf("login at %s: %d to %q, want %q", tt.target, rec.Code, loc, tt.want)
		}
	}
}

// An offer counts down to the last moment a person's answer is acted on:
// the window's end less the accept margin, when the engine gives the
// question up; the page's script counts to the same instant.
func TestOfferCountsDownToAnswerDeadline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC)
	offer := &workflow.Offer{QuoteReqID: "q1", LocateType: 1, Price: decimal.RequireFromString("0.04"), Shares: 500,
		Total: decimal.RequireFromString("20"), ExpiresAt: now.Add(30 * time.Second)}
	v := newOfferView(offer, now)
	by := offer.ExpiresAt.Add(-workflow.DefaultRules.AcceptMargin)
	if !v.AnswerBy.Equal(by) || v.Remaining != by.Sub(now) || v.RemainingFormatted != "28s" {
		t.Errorf("offer view: answer by %v, %v (%s) left; want %v, 28s", v.AnswerBy, v.Remaining, v.RemainingFormatted, by)
	}
	if v := newOfferView(offer, by.Add(time.Second)); v.Remaining != 0 || v.RemainingFormatted != "0s" {
		t.Errorf("past the margin: %v (%s) left", v.Remaining, v.RemainingFormatted)
	}
	b := setup(t, setupOpt{})
	var buf strings.Builder
	v.Account, v.ID, v.Symbol, v.Requested = "LV100001", "wf-1", askSymbol, 1000
	if err := b.server.page.ExecuteTemplate(&buf, "live", view{Now: now, Offers: []offerView{*v}}); err != nil {
		t.Fatal(err)
	}
	if want := `data-expires="` + strconv.FormatInt(by.UnixMilli(), 10) + `"`; !strings.Contains(buf.String(), want) {
		t.Errorf("the view lacks %s:\n%s", want, buf.String())
	}
	// The price at the broker's four decimals, as the CLI
	// prints it.
	// The shares offered (500), not the 1,000 asked.
	for _, want := range []string{`<dd class="price">0.0400</dd>`, `<dd class="shares">500 <small>of 1000 asked</small></dd>`, `<dd class="total">20.00</dd>`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the view lacks %q:\n%s", want, buf.String())
		}
	}
}

// The stream ticks every second of the service's clock however often the
// workflows change (a change once restarted the second, so a busy engine
// stopped the countdown), and every view carries that clock's time, so the
// page never counts from a stale one.
func TestEventsTickWhileBusy(t *testing.T) {
	t.Parallel()
	// The clock moves only when the test says.
	b := setup(t, setupOpt{clock: func(*simtest.Bundle, func() bool) {}})
	<-b.sim.Clock.BlockUntil(3) // the ledger sync, the loop and the poller asleep
	t0 := b.sim.Clock.Now()
	srv := httptest.NewServer(b.server.handler)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel) // before srv.Close: the stream ends first
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, next := readSSE(t, resp.Body, nil)
	nowAttr := func(at time.Time) string { return `data-now="` + strconv.FormatInt(at.UnixMilli(), 10) + `"` }
	first := next("first view", func(name, _ string) bool { return name == "view" })
	if !strings.Contains(first, nowAttr(t0)) {
		t.Errorf("the first view lacks the clock's time %s:\n%s", nowAttr(t0), first)
	}
	b.sim.Clock.Advance(600 * time.Millisecond)
	// A change 0.6 s into the second: the view shows it, and the clock.
	b.startLocate(t, 100)
	changed := next("view of the change", func(name, data string) bool { return name == "view" && strings.Contains(data, testSymbol) })
	if !strings.Contains(changed, nowAttr(t0.Add(600*time.Millisecond))) {
		t.Errorf("the view of the change lacks the clock's time %s:\n%s", nowAttr(t0.Add(600*time.Millisecond)), changed)
	}
	// 1.2 s after the stream began: its first second has passed, the
	// change notwithstanding.
	b.sim.Clock.Advance(600 * time.Millisecond)
	tick := next("tick 1.2 s after the stream began, 0.6 s after a change", func(name, _ string) bool { return name == "tick" })
	if tick != strconv.FormatInt(t0.Add(1200*time.Millisecond).UnixMilli(), 10) {
		t.Errorf("tick %s, want the clock's time %d", tick, t0.Add(1200*time.Millisecond).UnixMilli())
	}
	cancel()
	for range events {
	}
}

// Close ends the event streams, then lets the requests in flight finish
// before it returns (the store is closed after it), rather than cutting
// their connections; the server keeps no idle connection forever, and the
// event stream lifts its read and write timeouts (TestEventStreamOutlivesTimeouts).
func TestCloseLetsRequestsFinish(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	entered, shutdown := make(chan struct{}), make(chan struct{})
	inner := b.server.handler
	b.server.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slow" {
			inner.ServeHTTP(w, r)
			return
		}
		close(entered)
		select {
		case <-shutdown: // Close waits for the requests in flight
			io.WriteString(w, "done")
		case <-r.Context().Done(): // the connection was cut under it
		}
	})
	ln, err := Listen("127.0.0.1:0", Access{NoToken: true})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := b.server.Start(ln)
	if err != nil {
		t.Fatal(err)
	}
	srv := b.server.srv
	if srv.IdleTimeout <= 0 || srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 {
		t.Errorf("timeouts: idle %v, header %v, read %v, write %v; want all", srv.IdleTimeout, srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout)
	}
	srv.RegisterOnShutdown(sync.OnceFunc(func() { close(shutdown) }))
	base := "http://" + addr.String()
	stream, err := http.Get(base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if _, err := bufio.NewReader(stream.Body).ReadString('\n'); err != nil { // the first view is under way
		t.Fatal(err)
	}
	type result struct {
		body string
		err  error
	}
	slow := make(chan result, 1)
	go func() {
		resp, err := http.Get(base + "/slow")
		if err != nil {
			slow <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		slow <- result{string(body), err}
	}()
	select {
	case <-entered:
	case <-time.After(20 * time.Second): // a safety net
		t.Fatal("the request never reached the handler")
	}
	b.server.Close()
	select {
	case r := <-slow:
		if r.err != nil || r.body != "done" {
			t.Errorf("the request in flight at Close: %q, %v; want it finished", r.body, r.err)
		}
	case <-time.After(20 * time.Second): // a safety net
		t.Fatal("the request in flight at Close got no answer")
	}
	if _, err := io.ReadAll(stream.Body); err != nil {
		t.Errorf("the event stream did not end cleanly: %v", err)
	}
}

// readSSE reads a server-sent event stream until it ends, each event as
// its name and data; raw, when not nil, gets every line as sent (read it
// once events is closed). next waits for the first event want takes,
// skipping the others (20 s at most: a safety net, never waited out when
// all is well).
func readSSE(t *testing.T, body io.Reader, raw *strings.Builder) (<-chan [2]string, func(what string, want func(name, data string) bool) string) {
	events := make(chan [2]string, 256)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		var name string
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if raw != nil {
				raw.WriteString(line + "\n")
			}
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			case line == "":
				events <- [2]string{name, strings.Join(data, "\n")}
				name, data = "", nil
			}
		}
	}()
	next := func(what string, want func(name, data string) bool) string {
		t.Helper()
		timeout := time.NewTimer(20 * time.Second)
		defer timeout.Stop()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("the stream ended before the %s", what)
				}
				if want(ev[0], ev[1]) {
					return ev[1]
				}
			case <-timeout.C:
				t.Fatalf("no %s", what)
			}
		}
	}
	return events, next
}

// heldOffer stands the simulator's clock still once an offer of its
// symbol waits on a person, so that the offer's window does not run out
// while a test answers it: offered gets the offer's workflow id,
// accepting a signal when an answer of it is being accepted, and release
// lets the clock run again.
type heldOffer struct {
	hold      atomic.Bool
	offered   chan string
	accepting chan struct{}
}

// holdOffer sets opt's clock and its hook of updates to hold the offers
// of symbol.
func holdOffer(t *testing.T, opt *setupOpt, symbol string) *heldOffer {
	h := &heldOffer{offered: make(chan string, 1), accepting: make(chan struct{}, 1)}
	opt.clock = func(sim *simtest.Bundle, idle func() bool) {
		sim.RunClockWhile(t, 3, func() bool { return !h.hold.Load() && idle() })
	}
	opt.onUpdate = func(u engine.Update) {
		switch w := u.Workflow; {
		case w == nil || w.Symbol != symbol:
		case w.State == states.Offered:
			h.hold.Store(true)
			select {
			case h.offered <- w.ID:
			default:
			}
		case w.State == states.Accepting:
			select {
			case h.accepting <- struct{}{}:
			default:
			}
		}
	}
	return h
}

func (h *heldOffer) release() { h.hold.Store(false) }

// await waits for the held offer, which must be workflow id's.
func (h *heldOffer) await(t *testing.T, id string) {
	t.Helper()
	select {
	case got := <-h.offered:
		if got != id {
			t.Fatalf("offer for %s, want %s", got, id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no offer")
	}
}

// askElsewhere has a terminal, another process following the owner over
// its socket whose person never answers, ask for a locate of item, and
// waits until its offer waits on a person (held): the workflow's id.
func (b *testBundle) askElsewhere(t *testing.T, held *heldOffer, item account.LocateItem) string {
	t.Helper()
	remote := wire.Dial(b.owner.Lease().Endpoint, account.Caller{Name: "terminal", Env: brokerclient.EnvLive,
		Ask: func(ctx context.Context, q account.Question) bool { <-ctx.Done(); return false }}, b.sim.Client(t, b.sim.Live), b.sim.URL)
	t.Cleanup(remote.Close)
	res, err := remote.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{item}, Ask: true})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Started[0].ID
	held.await(t, id)
	return id
}
