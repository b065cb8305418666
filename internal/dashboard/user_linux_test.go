package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
)

// On loopback only the user running the dashboard is served: a peer of
// another user (the stand-in for the kernel's answer says so), or one
// whose user cannot be found (the stand-in, and the system's own lookup of
// a pair no socket holds), is refused 403 saying why, whatever it carries:
// the login cookie and the page's form token from the page's origin, the
// bearer token, the ?token= login, or an answer link. Nothing is done: no
// cookie is set, the links never see the request, and no locate is
// placed (spec "Short locates": none is even recorded to be quoted). The
// same requests from this user are served.
func TestOnlyOwnUserOnLoopback(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "tok", clock: func(*simtest.Bundle, func() bool) {}})
	var links atomic.Int32
	b.server.links = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { links.Add(1) })
	b.server.handler = b.server.routes()
	login := b.get(t, "/?token=tok", nil).Result().Cookies()[0]
	withLogin := func(r *http.Request) { r.AddCookie(login) }
	_, csrf := b.pageSession(t, withLogin)
	locate := func() *http.Request {
		form := url.Values{"account": {"LV100001"}, "symbols": {testSymbol}, "quantity": {"500"}, "cap": {"0.05"}, csrfField: {csrf}}
		req := httptest.NewRequest(http.MethodPost, "/locate", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		withLogin(req)
		return req
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }
	requests := map[string]func() (*http.Request, func(*http.Request)){
		"the page with the login": func() (*http.Request, func(*http.Request)) {
			return httptest.NewRequest(http.MethodGet, "/", nil), withLogin
		},
		"the stream with the login": func() (*http.Request, func(*http.Request)) {
			return httptest.NewRequest(http.MethodGet, "/events", nil), withLogin
		},
		"the metrics with a bearer": func() (*http.Request, func(*http.Request)) {
			return httptest.NewRequest(http.MethodGet, "/metrics", nil), bearer
		},
		"/healthz": func() (*http.Request, func(*http.Request)) {
			return httptest.NewRequest(http.MethodGet, "/healthz", nil), nil
		},
		"the login address": func() (*http.Request, func(*http.Request)) {
			return httptest.NewRequest(http.MethodGet, "/?token=tok", nil), nil
		},
		"a locate from the page": func() (*http.Request, func(*http.Request)) { return locate(), nil },
		"an answer link's button": func() (*http.Request, func(*http.Request)) {
			return httptest.NewRequest(http.MethodPost, "/link/TOKEN", nil), nil
		},
		"a log-out with a form token": func() (*http.Request, func(*http.Request)) {
			req := httptest.NewRequest(http.MethodPost, "/logout", strings.NewReader(csrfField+"="+csrf))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			return req, withLogin
		},
	}
	own := os.Getuid()
	for stand, lookup := range map[string]func(peer, local netip.AddrPort) (int, bool){
		"another user":               func(netip.AddrPort, netip.AddrPort) (int, bool) { return own + 1, true },
		"a user not found":           func(netip.AddrPort, netip.AddrPort) (int, bool) { return 0, false },
		"the system's, no such pair": peerUID,
	} {
		b.server.peerUID = lookup
		for name, request := range requests {
			req, edit := request()
			rec := b.serve(t, req, edit)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "answers only the user running it") || len(rec.Result().Cookies()) != 0 {
				t.Errorf("%s: %s: %d %q, cookies %v; want 403 saying why, no cookie", stand, name, rec.Code, rec.Body.String(), rec.Result().Cookies())
			}
		}
	}
	if n := links.Load(); n != 0 {
		t.Errorf("the links served %d requests of another user", n)
	}
	ws, err := b.store.List(t.Context(), store.Filter{Account: "LV100001", Kind: states.Locate})
	if err != nil || len(ws) != 0 {
		t.Fatalf("locates after another user's: %d %v, want none", len(ws), err)
	}
	// This user, with the same cookie and form token: served.
	asOwnUser(b.server)
	if rec := b.serve(t, locate(), nil); rec.Code != http.StatusSeeOther {
		t.Errorf("the same locate from this user: %d %s, want 303 to the page", rec.Code, rec.Body.String())
	}
	if ws, err := b.store.List(t.Context(), store.Filter{Account: "LV100001", Kind: states.Locate}); err != nil || len(ws) != 1 {
		t.Errorf("locates after this user's: %d %v, want 1", len(ws), err)
	}
	if rec := b.serve(t, httptest.NewRequest(http.MethodPost, "/link/TOKEN", nil), nil); rec.Code != http.StatusOK || links.Load() != 1 {
		t.Errorf("an answer link from this user: %d, links served %d; want it served", rec.Code, links.Load())
	}
}

// The owner of a loopback peer's socket is read from the kernel's table,
// passing over a socket in TIME_WAIT, which the table shows as root's
// (uid 0) and whose pair a new connection may take: a stale entry is not
// taken for root's connection.
func TestPeerUIDPassesOverTimeWait(t *testing.T) {
	t.Parallel()
	peer, local := netip.MustParseAddrPort("127.0.0.1:50000"), netip.MustParseAddrPort("127.0.0.1:8790")
	head := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	row := func(st, uid string) string {
		return "   0: " + procAddr(peer) + " " + procAddr(local) + " " + st + " 00000000:00000000 00:00000000 00000000 " + uid + " 0 12345 1\n"
	}
	for name, c := range map[string]struct {
		table string
		uid   int
		found bool
	}{
		"established":                  {head + row("01", "1000"), 1000, true},
		"time-wait only":               {head + row("06", "0"), 0, false},
		"time-wait, then the live one": {head + row("06", "0") + row("01", "1000"), 1000, true},
	} {
		file := filepath.Join(t.TempDir(), "tcp")
		if err := os.WriteFile(file, []byte(c.table), 0o600); err != nil {
			t.Fatal(err)
		}
		if uid, found := findUID(file, peer, local); uid != c.uid || found != c.found {
			t.Errorf("%s: uid %d found %v, want %d %v", name, uid, found, c.uid, c.found)
		}
	}
}
