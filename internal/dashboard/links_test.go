package dashboard

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/locatorhq/locator/internal/jobs"
)

// The signed answer links are served without the dashboard's token (a
// link is its own credential) but under its transport rule: plain HTTP
// from beyond loopback is refused before the links see it; every other
// path still wants the token.
func TestLinksOutsideTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{token: "the-token"})
	b.server.Close()
	var served atomic.Int32
	srv, err := newServer(Config{Accounts: b.accounts(), FeeDays: jobs.DefaultDays, FeeGrace: jobs.DefaultGrace, Clock: b.sim.Clock, Access: Access{Token: "the-token"},
		Links: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) })}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	asOwnUser(srv)
	for _, c := range []struct {
		method, path, peer string
		status             int
		served             int32
	}{
		{http.MethodGet, "/link/TOKEN", "127.0.0.1:5000", http.StatusOK, 1},
		{http.MethodPost, "/link/TOKEN", "127.0.0.1:5000", http.StatusOK, 2},
		{http.MethodPost, "/link/TOKEN", "203.0.113.7:5000", http.StatusForbidden, 2},
		{http.MethodGet, "/", "127.0.0.1:5000", http.StatusUnauthorized, 2},
		{http.MethodPost, "/answer", "127.0.0.1:5000", http.StatusUnauthorized, 2},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.TCPAddrFromAddrPort(serveLocal)))
		req.RemoteAddr = c.peer
		rec := httptest.NewRecorder()
		srv.handler.ServeHTTP(rec, req)
		if rec.Code != c.status || served.Load() != c.served {
			t.Errorf("%s %s from %s: %d (links served %d), want %d (%d)", c.method, c.path, c.peer, rec.Code, served.Load(), c.status, c.served)
		}
	}
}
