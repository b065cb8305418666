package engine_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
)

// gatedTransport holds each request whose path ends in one of paths until
// release is closed, after saying so on seen.
type gatedTransport struct {
	base    http.RoundTripper
	paths   []string
	seen    chan string
	release chan struct{}
}

func (g *gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	for _, p := range g.paths {
		if strings.HasSuffix(r.URL.Path, p) {
			g.seen <- p
			select {
			case <-g.release:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}
	}
	return g.base.RoundTrip(r)
}

// docs/design.md rule 1: Start settles what it recovers before anything
// steps. An account with nothing to recover has nothing for its history or
// inventory to settle (spec "Short locates": GET .../locates/history and
// .../locates/inventory): an engine a fleet starts from what it read for
// many accounts at once (Config.Recovery) returns without either read,
// even were the broker slow to answer them (a takeover's idle accounts
// serve a second sooner), and the poller's first reads, within their idle
// spacing (poller.Stagger), refresh it.
func TestIdleStartReadsOnceStarted(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{noStart: true})
	gate := &gatedTransport{base: b.sim.HTTPClient().Transport, paths: []string{"/locates/history", "/locates/inventory"},
		seen: make(chan string, 8), release: make(chan struct{})}
	e, err := engine.New(engine.Config{Client: b.sim.Client(t, b.sim.Live, brokerclient.WithHTTPClient(&http.Client{Transport: gate})),
		Store: b.store, Clock: b.sim.Clock, Account: "LV100001", Env: brokerclient.EnvLive, Logger: slog.New(slog.NewTextHandler(tWriter{t}, nil)),
		Recovery: &store.Recovery{}})
	if err != nil {
		t.Fatal(err)
	}
	// A hang guard: Start reading either would wait on the gate until then.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := e.Start(ctx); err != nil {
		t.Fatalf("start with history and inventory held back: %v; want it started without them", err)
	}
	defer e.Close()
	close(gate.release)
	// Past both idle spacings (poller.Cadence: history's 8 s, inventory's
	// 5 s): the virtual clock moves on its own only while two timers wait.
	b.sim.Advance(10 * time.Second)
	for read := map[string]bool{}; len(read) < 2; {
		select {
		case p := <-gate.seen:
			read[p] = true
		case <-ctx.Done():
			t.Fatalf("the poller's first reads after the start: %v; want history and inventory", read)
		}
	}
}
