package brokerclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// SignIn runs the partner login of a program on this machine (an OAuth
// native app, RFC 8252): it listens on redirect, the registered loopback
// address, hands the authorize address (with this attempt's state and PKCE
// challenge) to show for the person to open in a browser, and exchanges
// the code of the first callback carrying the attempt's state with the
// attempt's verifier, before the browser is told anything. It returns when
// that exchange is done or ctx ends; a callback whose state is not this
// attempt's is answered 400 and ignored (nothing is exchanged), and the
// login goes on waiting for its own.
//
// Spec: Authentication, "Partner OAuth".
func (s *PartnerService) SignIn(ctx context.Context, redirect *url.URL, show func(authorizeURL string)) (*PartnerToken, error) {
	attempt := NewAttempt()
	authURL, err := s.AuthCodeURL(attempt)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", redirect.Host)
	if err != nil {
		return nil, fmt.Errorf("listen on the redirect address %s: %w", redirect.Host, err)
	}
	type callback struct {
		tok *PartnerToken
		err error
	}
	got := make(chan callback, 1)
	var once sync.Once
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != redirect.Path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		// A callback of another login (a forged one, an old tab) is not
		// this login's answer: it is refused and the login goes on waiting
		// for its own, so whoever can reach the loopback port cannot end
		// the login.
		if !attempt.Matches(r.URL.Query()) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "<!doctype html><title>locator</title><p id=\"result\">This is not the answer to the login under way: ignored.</p>")
			return
		}
		answered := false
		var cb callback
		once.Do(func() {
			answered = true
			cb.tok, cb.err = s.ExchangeCallback(ctx, r.URL.Query(), attempt)
			got <- cb
		})
		switch {
		case !answered:
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, "<!doctype html><title>locator</title><p>This login has already been answered.</p>")
		case cb.err != nil:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "<!doctype html><title>locator</title><p id=\"result\">Sign-in refused; see the terminal.</p>")
		default:
			fmt.Fprint(w, "<!doctype html><title>locator</title><p id=\"result\">Signed in. You can close this window.</p>")
		}
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		stop, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer done()
		srv.Shutdown(stop)
	}()
	show(authURL)
	select {
	case cb := <-got:
		return cb.tok, cb.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
