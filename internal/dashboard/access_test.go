package dashboard

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/browsertest"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/simtest"
)

// accounts is what a server of b's shows: its owner's account.
func (b *testBundle) accounts() []account.Account {
	return []account.Account{b.owner.Local().As(account.Caller{Name: "access test"})}
}

// start serves b's server on a loopback port and returns its base address
// and its address.
func (b *testBundle) start(t *testing.T) (string, net.Addr) {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", b.server.access)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := b.server.Start(ln)
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr.String(), addr
}

// By default each start makes a random token, printed once in
// the login address; a request without it gets 401, and the address logs
// in.
func TestRandomTokenPerStart(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "set-below"})
	b.server.Close()
	var logins []string
	for range 2 {
		srv, err := newServer(Config{Accounts: b.accounts(), FeeDays: jobs.DefaultDays, FeeGrace: jobs.DefaultGrace, Clock: b.sim.Clock}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		b.server = srv
		base, addr := b.start(t)
		login := srv.LoginAddress(addr)
		if !strings.HasPrefix(login, base+"/?token=") || len(login) < len(base)+len("/?token=")+20 {
			t.Fatalf("login address %q", login)
		}
		logins = append(logins, login)
		if resp, err := http.Get(base + "/"); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("no token: %v %v, want 401", resp.Status, err)
		}
		jar, _ := cookiejar.New(nil)
		if resp, err := (&http.Client{Jar: jar}).Get(login); err != nil || resp.StatusCode != http.StatusOK || resp.Request.URL.RawQuery != "" {
			t.Errorf("the login address: %v %v, want the page without the token in its address", resp, err)
		}
	}
	if logins[0] == logins[1] {
		t.Error("two starts made the same token")
	}
	b.server.access.Token = ""
	b.server.tokenMade = false
	if got := b.server.LoginAddress(&net.TCPAddr{}); !strings.HasSuffix(got, "/?token=$"+TokenEnv) {
		t.Errorf("a token from the environment is printed: %q", got)
	}
}

// Another local user (uid 65534 here, as curl) holding this user's login
// cookie, as a page of theirs on another 127.0.0.1 port is sent it, and
// the page's form token is refused 403 for the page, the event stream, the
// metrics, /healthz and a locate from the page's origin (before, the
// loopback dashboard served any user holding the cookie, and a locate was
// filled), saying why; nothing reaches the simulator (spec "Short locates":
// no quote is sent).
func TestOtherLocalUserRefused(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("running a request as another user needs root")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl")
	}
	// The clock stands still: the login lasts the test however slow it is.
	b := setup(t, setupOpt{token: "x", clock: func(*simtest.Bundle, func() bool) {}})
	b.server.Close()
	srv, err := newServer(Config{Accounts: b.accounts(), FeeDays: jobs.DefaultDays, FeeGrace: jobs.DefaultGrace, Clock: b.sim.Clock}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	b.server = srv
	base, addr := b.start(t)
	jar, _ := cookiejar.New(nil)
	page, err := (&http.Client{Jar: jar}).Get(srv.LoginAddress(addr))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := formToken.FindSubmatch(body)
	u, _ := url.Parse(base)
	if page.StatusCode != http.StatusOK || m == nil || len(jar.Cookies(u)) != 1 {
		t.Fatalf("this user's login: %s, form token %q, cookies %v", page.Status, m, jar.Cookies(u))
	}
	cookie := jar.Cookies(u)[0]
	locate := url.Values{"account": {"LV100001"}, "symbols": {testSymbol}, "quantity": {"500"}, "cap": {"0.05"}, csrfField: {string(m[1])}}
	before := b.sent()
	// --max-time is a hang guard (a stream served would never end), not
	// a verdict on speed: a refusal is answered at once.
	asNobody := func(args ...string) string {
		cmd := exec.Command(curl, append([]string{"-s", "--max-time", "30", "-w", " %{http_code}", "-b", cookie.Name + "=" + cookie.Value}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil && len(out) == 0 {
			t.Fatalf("curl as uid 65534: %v", err)
		}
		return string(out)
	}
	for _, args := range [][]string{
		{base + "/"},
		{base + "/events"},
		{base + "/metrics"},
		{base + "/healthz"},
		{"-X", "POST", "-H", "Origin: " + base, "-d", locate.Encode(), base + "/locate"},
	} {
		out := asNobody(args...)
		body, code := out[:strings.LastIndex(out, " ")], out[strings.LastIndex(out, " ")+1:]
		if code != "403" || !strings.Contains(body, "answers only the user running it") {
			t.Errorf("uid 65534 with this user's cookie: %v: %s %.200q, want 403 saying why", args, code, body)
		}
	}
	if n := b.sent() - before; n != 0 {
		t.Errorf("another user's requests sent %d writes to the broker, want 0", n)
	}
	// The same cookie, form token and origin from this user are served
	// (an answer to no open workflow: 409, nothing sent): what refused
	// them was the user alone.
	answer := url.Values{"account": {"LV100001"}, "id": {"wf-none"}, "answer": {"decline"}, csrfField: {string(m[1])}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/answer", strings.NewReader(answer.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("an answer from this user with the same cookie and form token: %s, want 409", resp.Status)
	}
}

// A request trickling its body (or its header) is cut off by the
// read timeouts, before it is even looked at; before, one byte every 5 s
// held a connection open for good.
func TestTricklingRequestCutOff(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok"})
	b.server.timeouts.header, b.server.timeouts.read = 300*time.Millisecond, 300*time.Millisecond
	base, _ := b.start(t)
	for name, head := range map[string]string{
		"body":   "POST /answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n",
		"header": "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n",
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			io.Copy(io.Discard, conn) // until the server closes it
		}()
	trickle:
		for {
			select {
			case <-closed:
				break trickle
			case <-time.After(50 * time.Millisecond):
				if time.Since(start) > 10*time.Second {
					t.Fatalf("%s: a trickling request still open after %v", name, time.Since(start))
				}
				if _, err := io.WriteString(conn, "x"); err != nil {
					<-closed
					break trickle
				}
			}
		}
		conn.Close()
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: cut off after %v, want about the 300ms timeout", name, d)
		}
	}
}

// The event stream lifts the read and write timeouts, which would cut it:
// it goes on delivering well past them.
func TestEventStreamOutlivesTimeouts(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok"})
	b.server.timeouts.read, b.server.timeouts.write = 200*time.Millisecond, 200*time.Millisecond
	base, _ := b.start(t)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/events", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatalf("the stream ended after the timeouts: %v", err)
		}
	}
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("the stream ended: %v", err)
	}
}

// An answer's body is bounded: a large one is refused with 413 unread.
func TestAnswerBodyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok"})
	body := "account=LV100001&id=wf-none&answer=decline&pad=" + strings.Repeat("x", 1<<20)
	req := httptest.NewRequest(http.MethodPost, "/answer", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if rec := b.serve(t, req, func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1 MB answer: %d, want 413", rec.Code)
	}
	if code := b.answer(t, "decline", "", func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }); code != http.StatusConflict {
		t.Errorf("a small answer to no open workflow: %d, want 409", code)
	}
}

// Connections held open and silent, 70 of them from one client
// (more than the server's 64 in all), keep nobody waiting: a request on a
// fresh connection, from the same client or another address (127.0.0.2: on
// TCP a client is told apart by its address, and on loopback by its user,
// TestClientOfLoopbackUser), is answered, each newcomer closing the oldest
// silent connection of the client it counts against. Before, the 65th
// connection waited for one of them to close. The silent connections are
// kept for a minute here (the header timeout), so an answer within
// idleAnswerBound is one that did not wait for them: the bound is the
// test's patience on a loaded machine, not the server's speed (within
// milliseconds on a quiet one).
func TestIdleConnectionsKeepNobodyWaiting(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok"})
	b.server.timeouts.header, b.server.timeouts.read = time.Minute, time.Minute
	base, addr := b.start(t)
	for range 70 {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	for name, local := range map[string]string{"the same client": "127.0.0.1", "another address": "127.0.0.2"} {
		client := &http.Client{Timeout: idleAnswerBound, Transport: &http.Transport{
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/healthz", nil)
		req.Header.Set("Authorization", "Bearer tok")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: /healthz beside 70 idle connections: %v after %v", name, err, time.Since(start))
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "LV100001") {
			t.Errorf("%s: /healthz: %d %s, want 200 with the accounts", name, resp.StatusCode, body)
		}
	}
}

// 70 connections held open and silent by a process running as
// another user (nobody, 65534) keep this user waiting no longer: on
// loopback that user is a client of its own, so /healthz from here, with
// the token, is answered without waiting for them (kept for a minute, as
// in TestIdleConnectionsKeepNobodyWaiting). The holder is this test binary
// run again as that user (TestMain, holdConnsEnv).
func TestIdleConnectionsOfAnotherUserKeepNobodyWaiting(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	b := setup(t, setupOpt{token: "tok"})
	b.server.timeouts.header, b.server.timeouts.read = time.Minute, time.Minute
	base, addr := b.start(t)
	if _, ready := asUser(t, 65534, 65534, holdConnsEnv+"="+addr.String()); ready != "ready" {
		t.Fatalf("the holder of another user said %q, want ready", ready)
	}
	client := &http.Client{Timeout: idleAnswerBound, Transport: &http.Transport{}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer tok")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("/healthz beside 70 idle connections of another user: %v after %v", err, time.Since(start))
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "LV100001") {
		t.Errorf("/healthz: %d %s, want 200 with the accounts", resp.StatusCode, body)
	}
}

// idleAnswerBound is how long the idle-connection tests wait for an
// answer: far less than the minute the silent connections are kept.
const idleAnswerBound = 10 * time.Second

// holdConnsEnv, set to an address, makes this test binary hold 70 silent
// connections to it, say "ready" and keep them until its stdin closes.
const holdConnsEnv = "LOCATOR_TEST_HOLD_CONNS"

// asUser runs this test binary again as user uid (group gid), with env
// (NAME=value) added, which makes its TestMain play a part instead of
// running the tests; it returns its output and the first line it says
// (without its end: "ready ..."). The build's folder is its user's alone,
// so the other user runs a copy. When the test ends its stdin is closed,
// which ends it, and it is waited for. Root only.
func asUser(t *testing.T, uid, gid uint32, env string) (out *bufio.Reader, ready string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "other-user")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "dashboard.test")
	if err := os.WriteFile(copied, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copied)
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the process of uid %d: %v: %s", uid, err, stderr.String())
		}
	})
	out = bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("the process of uid %d: %v: %s", uid, err, stderr.String())
	}
	return out, strings.TrimSuffix(line, "\n")
}

func TestMain(m *testing.M) {
	if dashboard := os.Getenv(collectEnv); dashboard != "" {
		collectAndReplay(dashboard)
		return
	}
	if addr := os.Getenv(holdConnsEnv); addr != "" {
		for range 70 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer c.Close()
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		return
	}
	os.Exit(m.Run())
}

// A connection inside a request (the page's event stream) is never closed
// to make room: past a client's bound with every connection busy, the
// newcomer is the one closed, and the streams go on.
func TestBusyConnectionsKept(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok"})
	b.server.maxClientConns = 2
	base, addr := b.start(t)
	var streams []*bufio.Reader
	for range 2 {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/events", nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		r := bufio.NewReader(resp.Body)
		if _, err := r.ReadString('\n'); err != nil { // the stream is served
			t.Fatal(err)
		}
		streams = append(streams, r)
	}
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a third connection beside two streams: %v, want closed at once", err)
	}
	for i, r := range streams {
		if _, err := r.ReadString('\n'); err != nil {
			t.Errorf("stream %d after the newcomer: %v", i, err)
		}
	}
}

// On loopback, where every local user shares 127.0.0.1, a client is also
// its user: the owner of the peer's socket, from the kernel's table.
func TestClientOfLoopbackUser(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	if got, want := clientOf(accepted), fmt.Sprintf("127.0.0.1 uid %d", os.Getuid()); got != want {
		t.Errorf("clientOf a loopback peer = %q, want %q", got, want)
	}
}

// The login cookie expires and rotates: past rotateAfter a
// request gets a new one (the login's form token goes on with it), the old
// one lasts rotateGrace more, and a session ends after sessionTTL.
func TestSessionsRotateAndExpire(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok", clock: func(*simtest.Bundle, func() bool) {}})
	clk := b.sim.Clock
	login := b.get(t, "/?token=tok", nil).Result().Cookies()[0]
	with := func(c *http.Cookie) func(*http.Request) { return func(r *http.Request) { r.AddCookie(c) } }
	_, csrf := b.pageSession(t, with(login))
	if rec := b.get(t, "/metrics", with(login)); rec.Code == http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("a fresh session: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
	clk.Advance(rotateAfter)
	rec := b.get(t, "/metrics", with(login))
	if rec.Code == http.StatusUnauthorized || len(rec.Result().Cookies()) != 1 {
		t.Fatalf("a session due for rotation: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
	rotated := rec.Result().Cookies()[0]
	if rotated.Value == login.Value || rotated.MaxAge != int(sessionTTL.Seconds()) {
		t.Errorf("rotated cookie %v", rotated)
	}
	if rec := b.get(t, "/metrics", with(login)); len(rec.Result().Cookies()) != 0 {
		t.Errorf("a session already replaced was replaced again: %v", rec.Result().Cookies())
	}
	// The page loaded before the rotation still posts: its form token is
	// the login's, handed on to the new cookie.
	fromPage := func(c *http.Cookie) func(*http.Request) {
		return func(r *http.Request) { r.AddCookie(c); r.Header.Set("Sec-Fetch-Site", "same-origin") }
	}
	if code := b.answer(t, "decline", csrf, fromPage(rotated)); code != http.StatusConflict {
		t.Errorf("an answer with the rotated cookie and the form token of the page before: %d, want 409", code)
	}
	clk.Advance(rotateGrace - time.Second)
	if rec := b.get(t, "/metrics", with(login)); rec.Code == http.StatusUnauthorized {
		t.Error("the old cookie failed within the grace")
	}
	clk.Advance(time.Second)
	if rec := b.get(t, "/metrics", with(login)); rec.Code != http.StatusUnauthorized {
		t.Errorf("the old cookie after the grace: %d, want 401", rec.Code)
	}
	// A session used often still rotates; one left alone expires.
	clk.Advance(sessionTTL)
	if rec := b.get(t, "/metrics", with(rotated)); rec.Code != http.StatusUnauthorized {
		t.Errorf("a session past its lifetime: %d, want 401", rec.Code)
	}
}

// A login is logged out by the page's button: a POST of /logout with the
// login's form token ends it (the cookie of the moment and the one it
// replaced, still in its grace) and expires the cookie; without the form
// token, or from another origin, it is refused 403 and the login goes on.
// A page shown to a login has the button; one shown to a bearer has not.
func TestLogout(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok", clock: func(*simtest.Bundle, func() bool) {}})
	first := b.get(t, "/?token=tok", nil).Result().Cookies()[0]
	with := func(c *http.Cookie) func(*http.Request) { return func(r *http.Request) { r.AddCookie(c) } }
	_, csrf := b.pageSession(t, with(first))
	if page := b.get(t, "/", with(first)).Body.String(); !strings.Contains(page, `action="/logout"`) {
		t.Error("the page of a login has no log-out button")
	}
	if page := b.get(t, "/", func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }).Body.String(); strings.Contains(page, `action="/logout"`) {
		t.Error("the page of a bearer has a log-out button")
	}
	b.sim.Clock.Advance(rotateAfter)
	rotated := b.get(t, "/metrics", with(first)).Result().Cookies()[0]
	logout := func(c *http.Cookie, csrf, site string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/logout", strings.NewReader(url.Values{csrfField: {csrf}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", site)
		return b.serve(t, req, with(c))
	}
	if rec := logout(rotated, "", "same-origin"); rec.Code != http.StatusForbidden {
		t.Errorf("log out without the form token: %d, want 403", rec.Code)
	}
	if rec := logout(rotated, csrf, "cross-site"); rec.Code != http.StatusForbidden {
		t.Errorf("log out from another site: %d, want 403", rec.Code)
	}
	if rec := b.get(t, "/", with(rotated)); rec.Code != http.StatusOK {
		t.Fatalf("the login after the refused log-outs: %d, want it going on", rec.Code)
	}
	rec := logout(rotated, csrf, "same-origin")
	gone := rec.Result().Cookies()
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "session has ended") || len(gone) != 1 || gone[0].Name != rotated.Name || gone[0].MaxAge >= 0 {
		t.Errorf("log out: %d %q, cookies %v; want the session ended and its cookie expired", rec.Code, rec.Body.String(), gone)
	}
	for name, c := range map[string]*http.Cookie{"the cookie logged out": rotated, "the cookie it replaced": first} {
		if rec := b.get(t, "/", with(c)); rec.Code != http.StatusUnauthorized {
			t.Errorf("%s after the log-out: %d, want 401", name, rec.Code)
		}
	}
}

// Wrong tokens are rate limited: past the burst every token of
// that client, even the right one, is answered 429 unread, until the
// budget refills. Another client's right token goes on working.
func TestWrongTokensRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "right", clock: func(*simtest.Bundle, func() bool) {}})
	bearer := func(t string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+t) }
	}
	for i := range tokenBurst {
		if rec := b.get(t, fmt.Sprintf("/?token=guess%d", i), nil); rec.Code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i, rec.Code)
		}
	}
	for _, edit := range []func(*http.Request){bearer("guess"), bearer("right")} {
		if rec := b.get(t, "/metrics", edit); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
			t.Errorf("after %d wrong tokens: %d, want 429 with Retry-After", tokenBurst, rec.Code)
		}
	}
	other := func(r *http.Request) { bearer("right")(r); r.RemoteAddr = "127.0.0.2:50124" }
	if rec := b.get(t, "/metrics", other); rec.Code != http.StatusOK {
		t.Errorf("another client's right token beside the locked-out one: %d, want 200", rec.Code)
	}
	b.sim.Clock.Advance(tokenEvery)
	if rec := b.get(t, "/metrics", bearer("right")); rec.Code == http.StatusUnauthorized || rec.Code == http.StatusTooManyRequests {
		t.Errorf("the right token once the budget refilled: %d", rec.Code)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their files and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "locator test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// Beyond loopback the dashboard needs TLS or a TLS proxy in
// front; with a certificate it serves https, and its login cookie is
// __Host-locator_dashboard_PORT: Secure, for Path=/, without a Domain (a
// browser takes no other of that name, so no page of another port can
// plant one); behind a trusted proxy, a request the proxy forwards as https
// gets a Secure __Host- cookie, and plain http from elsewhere is refused.
func TestTLSBeyondLoopback(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	proxy := netip.MustParsePrefix("192.0.2.7/32")
	for _, tc := range []struct {
		a    Access
		want error
	}{
		{Access{Token: "tok"}, ErrTLSRequired},
		{Access{Token: "tok", CertFile: certFile, KeyFile: keyFile}, nil},
		{Access{Token: "tok", TrustedProxies: []netip.Prefix{proxy}}, nil},
		{Access{NoToken: true, CertFile: certFile, KeyFile: keyFile}, ErrTokenRequired},
	} {
		if err := CheckListen("192.0.2.1:8790", tc.a); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.a, err, tc.want)
		}
	}
	if err := CheckListen("127.0.0.1:8790", Access{CertFile: certFile}); err == nil {
		t.Error("a certificate without its key was accepted")
	}

	b := setup(t, setupOpt{token: "tok"})
	b.server.Close()
	srv, err := newServer(Config{Accounts: b.accounts(), FeeDays: jobs.DefaultDays, FeeGrace: jobs.DefaultGrace, Clock: b.sim.Clock,
		Access: Access{Token: "tok", CertFile: certFile, KeyFile: keyFile}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	b.server = srv
	plain, addr := b.start(t)
	base := strings.Replace(plain, "http://", "https://", 1)
	if got := srv.LoginAddress(addr); !strings.HasPrefix(got, base+"/?token=") {
		t.Errorf("login address %q, want it on %s", got, base)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(base + "/?token=tok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	hostCookie := fmt.Sprintf("__Host-%s_%d", cookieBase, addr.(*net.TCPAddr).Port)
	if c := resp.Cookies(); len(c) != 1 || c[0].Name != hostCookie || !c[0].Secure || c[0].Path != "/" || c[0].Domain != "" {
		t.Errorf("login over TLS: cookies %v, want one %s, Secure, for Path=/, without a Domain", c, hostCookie)
	}

	pb := setup(t, setupOpt{token: "tok"})
	pb.server.access.TrustedProxies = []netip.Prefix{proxy}
	viaProxy := func(proto string) func(*http.Request) {
		return func(r *http.Request) { r.RemoteAddr = "192.0.2.7:40000"; r.Header.Set("X-Forwarded-Proto", proto) }
	}
	if c := pb.get(t, "/?token=tok", viaProxy("https")).Result().Cookies(); len(c) != 1 || !c[0].Secure || !strings.HasPrefix(c[0].Name, "__Host-") {
		t.Errorf("login through the proxy's https: cookies %v, want one Secure, named __Host-", c)
	}
	if rec := pb.get(t, "/?token=tok", viaProxy("http")); rec.Code != http.StatusForbidden {
		t.Errorf("plain http through the proxy: %d, want 403", rec.Code)
	}
	if rec := pb.get(t, "/?token=tok", func(r *http.Request) { r.RemoteAddr = "192.0.2.9:40000" }); rec.Code != http.StatusForbidden {
		t.Errorf("plain http from a peer beyond loopback: %d, want 403", rec.Code)
	}
	if c := pb.get(t, "/?token=tok", nil).Result().Cookies(); len(c) != 1 || c[0].Secure {
		t.Errorf("plain http on loopback: cookies %v, want one, not Secure", c)
	}
}

// In a real browser the token login holds: the login address leaves the
// token out of the address bar, the cookie carries the event stream (the
// page goes live) and a same-origin answer from the page's script with the
// page's form token (refused 409 here, as no offer waits, not 401 or 403);
// without the form token the same answer is 403.
func TestBrowserTokenLogin(t *testing.T) {
	t.Parallel()
	ctx := browsertest.New(t)
	b := setup(t, setupOpt{token: "tok-browser"})
	srv := httptest.NewServer(b.server.handler)
	t.Cleanup(srv.Close)
	t.Cleanup(b.server.Close) // first: it ends the page's event stream
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?token=tok-browser"),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent === "broker up"`),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	location, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	answer := func(csrf string) int {
		t.Helper()
		status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/answer", {method: "POST", headers: {"Accept": "application/json"},
			body: new URLSearchParams({account: "LV100001", id: "wf-none", answer: "decline", csrf: `+csrf+`})}).then(r => r.status)`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		return status
	}
	if location != srv.URL+"/" {
		t.Errorf("address bar %q after the login, want %s/ without the token", location, srv.URL)
	}
	if status := answer(`document.querySelector('.locate-form input[name="csrf"]').value`); status != http.StatusConflict {
		t.Errorf("an answer from the page with its form token: %d, want 409", status)
	}
	if status := answer(`""`); status != http.StatusForbidden {
		t.Errorf("an answer from the page without its form token: %d, want 403", status)
	}
}
