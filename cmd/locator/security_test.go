package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// nonLoopbackIP is an address of this machine beyond loopback, or the test
// is skipped.
func nonLoopbackIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	t.Skip("no address beyond loopback")
	return nil
}

// Issue 21: an http:// broker address beyond loopback is refused with exit
// 2 and nothing sent: here the simulator listens on every interface and is
// named by this machine's own network address, so a request would reach it.
func TestPlainBrokerAddressBeyondLoopbackRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ip := nonLoopbackIP(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Skip(err)
	}
	var got atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	for _, args := range [][]string{{"locate", "HTBX", "100", "--yes"}, {"inventory"}, {"serve", "--listen", ""}, {"config"}} {
		code, _, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_BASE_URL": srv.URL}, args...)
		if code != exitUsage || !strings.Contains(errOut, "http:// beyond this machine's loopback") || !strings.Contains(errOut, "env LOCATOR_BASE_URL") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the rule and where the address came from", args, code, errOut)
		}
	}
	if n := got.Load(); n != 0 {
		t.Errorf("%d requests reached the plain-http address", n)
	}
}

// A base address carrying a password or a query is refused, and never
// printed, by the commands and by 'locator config'.
func TestBaseURLWithCredentialsRefused(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	host := strings.TrimPrefix(b.env["LOCATOR_BASE_URL"], "http://")
	for _, raw := range []string{"http://me:hunter2@" + host, "http://" + host + "/?key=hunter2"} {
		for _, args := range [][]string{{"locate", "HTBX", "100", "--yes"}, {"config"}} {
			code, out, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_BASE_URL": raw}, args...)
			if code != exitUsage || strings.Contains(out+errOut, "hunter2") {
				t.Errorf("%v with a secret in the address: exit %d, stdout %q, stderr %q; want 2, the address unprinted", args, code, out, errOut)
			}
		}
	}
	if n := len(b.sim.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// Issue 21: a broker address that redirects to another host (the
// simulator here) receives the key pair once; the target never hears of
// it, and the command says where the redirect pointed.
func TestRedirectingBrokerAddress(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	var keys atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("TZ-API-SECRET-KEY") != "" {
			keys.Add(1)
		}
		http.Redirect(w, r, b.env["LOCATOR_BASE_URL"]+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	code, _, errOut := b.MustRunMain(t, map[string]string{"LOCATOR_BASE_URL": front.URL}, "locate", "HTBX", "100", "--yes")
	simHost := strings.TrimPrefix(b.env["LOCATOR_BASE_URL"], "http://")
	if code == exitOK || !strings.Contains(errOut, "a redirect to "+simHost) {
		t.Errorf("exit %d, stderr %q; want a failure naming the redirect's host", code, errOut)
	}
	if n := keys.Load(); n != 1 {
		t.Errorf("the redirecting address received the key pair %d times, want 1", n)
	}
	if n := len(b.sim.Requests()); n != 0 {
		t.Errorf("the redirect target received %d requests", n)
	}
}
