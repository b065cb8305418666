// Package simtest starts the broker simulator for tests: on an httptest
// server, with the default scenario and a fake clock that the test moves, so
// the spec's time windows are crossed without sleeping.
package simtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
)

// Start is the default fake-clock start: Wednesday 2026-11-25 10:00 ET, inside
// regular trading hours.
var Start = time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)

// Key is an API key pair of the scenario.
type Key struct {
	ID, Secret string
	Paper      bool
	Accounts   []string
}

// Bundle is a running simulator and what a test needs to talk to it.
type Bundle struct {
	Sim    *brokersim.Sim
	Server *httptest.Server
	Clock  *clock.Fake
	// URL is the server's base URL.
	URL string
	// Prefix is the key header prefix ("TZ").
	Prefix string
	// Live owns LV100001 (Active margin) and LV100002 (not Active); Paper owns
	// PP200001; Live2 owns LV300001 (cash, with 12,000 synthetic ledger rows).
	Live, Paper, Live2 Key
	// Partner is the scenario's partner program (nil without one).
	Partner *brokersim.ScenarioPartner

	inflight atomic.Int64 // requests of Client clients awaiting their answer
}

type config struct {
	start  time.Time
	edit   []func(*brokersim.Scenario)
	simOpt []brokersim.Option
}

// Option changes how Start builds the simulator.
type Option func(*config)

// WithStart sets the fake clock's first reading.
func WithStart(t time.Time) Option { return func(c *config) { c.start = t } }

// WithScenario edits the default scenario before the simulator is built.
func WithScenario(edit func(*brokersim.Scenario)) Option {
	return func(c *config) { c.edit = append(c.edit, edit) }
}

// WithSimOption passes an option through to brokersim.New.
func WithSimOption(o brokersim.Option) Option {
	return func(c *config) { c.simOpt = append(c.simOpt, o) }
}

// New starts a simulator of the default scenario on a fake clock, with its
// admin routes, and stops it when the test ends.
func New(tb testing.TB, opts ...Option) *Bundle {
	tb.Helper()
	cfg := config{start: Start}
	for _, o := range opts {
		o(&cfg)
	}
	sc := brokersim.DefaultScenario()
	for _, e := range cfg.edit {
		e(&sc)
	}
	clk := clock.NewFake(cfg.start)
	sim, err := brokersim.New(sc, append([]brokersim.Option{brokersim.WithClock(clk), brokersim.WithAdmin()}, cfg.simOpt...)...)
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	srv := httptest.NewServer(sim)
	tb.Cleanup(srv.Close)
	b := &Bundle{Sim: sim, Server: srv, Clock: clk, URL: srv.URL, Prefix: sc.KeyHeaderPrefix, Partner: sc.Partner}
	for _, k := range sc.Keys {
		key := Key{ID: k.KeyID, Secret: k.Secret, Paper: k.Env == "paper", Accounts: k.Accounts}
		switch {
		case k.KeyID == "SIMLIVEKEY01":
			b.Live = key
		case k.KeyID == "SIMPAPERKEY01":
			b.Paper = key
		case k.KeyID == "SIMLIVEKEY02":
			b.Live2 = key
		}
	}
	return b
}

// Response is a buffered HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("decode %q: %v", r.Body, err)
	}
}

// Do sends one request with key's headers (none when key is the zero Key).
// body is sent as is when it is a string or []byte, else JSON-encoded.
func (b *Bundle) Do(tb testing.TB, key Key, method, path string, body any) *Response {
	tb.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		buf, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, b.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	b.Sign(req, key)
	resp, err := b.Server.Client().Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
}

// Sign sets key's two headers on req (nothing for the zero Key).
func (b *Bundle) Sign(req *http.Request, key Key) {
	if key.ID == "" {
		return
	}
	req.Header.Set(b.Prefix+"-API-KEY-ID", key.ID)
	req.Header.Set(b.Prefix+"-API-SECRET-KEY", key.Secret)
}

// Advance moves the shared fake clock, running every simulator event due.
func (b *Bundle) Advance(d time.Duration) { b.Sim.Advance(d) }
