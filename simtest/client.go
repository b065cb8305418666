package simtest

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
)

// Client returns a brokerclient for key, on the simulator's fake clock.
// Calls that pace or back off sleep on that clock: start RunClock, or move
// the clock yourself, or they wait for ever.
func (b *Bundle) Client(tb testing.TB, key Key, opts ...brokerclient.Option) *brokerclient.Client {
	tb.Helper()
	return b.newClient(tb, append([]brokerclient.Option{brokerclient.WithCredentials(key.ID, key.Secret)}, opts...))
}

// PartnerClient returns a brokerclient of the scenario's partner program on
// clientID, on the simulator's fake clock. It can sign a user in; add
// brokerclient.WithPartnerToken to call the REST interface as that user.
func (b *Bundle) PartnerClient(tb testing.TB, clientID string, opts ...brokerclient.Option) *brokerclient.Client {
	tb.Helper()
	if b.Partner == nil {
		tb.Fatal("simtest: the scenario has no partner program")
	}
	cfg := brokerclient.PartnerConfig{
		ClientID: clientID, ClientSecret: b.Partner.ClientSecret,
		LoginURL: b.URL + b.Partner.LoginPath, RedirectURI: b.Partner.RedirectURI,
	}
	return b.newClient(tb, append([]brokerclient.Option{brokerclient.WithPartner(cfg)}, opts...))
}

// HTTPClient is the HTTP client of Client's clients: to the simulator,
// counting its requests in flight for RunClock, which moves virtual time
// only while none is. A client made elsewhere (package connect's, say)
// sends through it to run on virtual time.
func (b *Bundle) HTTPClient() *http.Client {
	return &http.Client{Transport: InFlight(b.Server.Client().Transport, &b.inflight)}
}

func (b *Bundle) newClient(tb testing.TB, opts []brokerclient.Option) *brokerclient.Client {
	tb.Helper()
	base := []brokerclient.Option{
		brokerclient.WithBaseURL(b.URL),
		brokerclient.WithHTTPClient(b.HTTPClient()),
		brokerclient.WithClock(b.Clock),
		brokerclient.WithRandSeed(1),
	}
	c, err := brokerclient.NewClient(append(base, opts...)...)
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	return c
}

// RunClock drives the fake clock as virtual time until the test ends: it
// jumps to the next timer whenever some code sleeps on the clock and no
// request of a Client is in flight.
func (b *Bundle) RunClock(tb testing.TB) { b.RunClockWhen(tb, 1) }

// RunClockWhen drives the fake clock as virtual time (clock.Drive), jumping
// only while at least minTimers timers are pending, no request of a Client
// is in flight and the process is quiet: use it with code whose goroutines
// all sleep on the clock when idle (the engine's poller and dispatcher: 2).
// Time then never moves between a request leaving and its answer, so the
// simulator sees requests at the instants the client paced them, nor
// under a goroutine woken but not yet run.
func (b *Bundle) RunClockWhen(tb testing.TB, minTimers int) { b.RunClockWhile(tb, minTimers, nil) }

// RunClockWhile is RunClockWhen that moves time only while run, when given,
// reports true: a test holds the clock still while a person's part plays
// out (an offer on a page, say), and lets it go on after.
func (b *Bundle) RunClockWhile(tb testing.TB, minTimers int, run func() bool) {
	tb.Cleanup(b.Clock.Drive(minTimers, func() bool { return b.inflight.Load() == 0 && (run == nil || run()) }))
}

// InFlight counts in n the requests sent through base from send until their
// body is closed, so that virtual time can wait for every answer to be read
// before it moves (a request and its answer take no virtual time).
func InFlight(base http.RoundTripper, n *atomic.Int64) http.RoundTripper {
	return &countingTransport{base: base, n: n}
}

// countingTransport counts requests from send until their body is closed.
type countingTransport struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.n.Add(1)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.n.Add(-1)
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, n: t.n}
	return resp, nil
}

type countedBody struct {
	io.ReadCloser
	n    *atomic.Int64
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.n.Add(-1) })
	return b.ReadCloser.Close()
}
