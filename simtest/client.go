package simtest

import (
	"testing"

	"github.com/locatorhq/locator/brokerclient"
)

// Client returns a brokerclient for key, on the simulator's fake clock.
// Calls that pace or back off sleep on that clock: start RunClock, or move
// the clock yourself, or they wait for ever.
func (b *Bundle) Client(tb testing.TB, key Key, opts ...brokerclient.Option) *brokerclient.Client {
	tb.Helper()
	base := []brokerclient.Option{
		brokerclient.WithBaseURL(b.URL),
		brokerclient.WithCredentials(key.ID, key.Secret),
		brokerclient.WithHTTPClient(b.Server.Client()),
		brokerclient.WithClock(b.Clock),
		brokerclient.WithRandSeed(1),
	}
	c, err := brokerclient.NewClient(append(base, opts...)...)
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	return c
}

// RunClock drives the fake clock as virtual time (see clock.Fake.Run) until
// the test ends.
func (b *Bundle) RunClock(tb testing.TB) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); b.Clock.Run(stop) }()
	tb.Cleanup(func() { close(stop); <-done })
}

// RunClockWhen drives the fake clock as virtual time, jumping only while at
// least minTimers timers are pending: use it with code whose goroutines all
// sleep on the clock when idle (the engine's poller and dispatcher: 2).
func (b *Bundle) RunClockWhen(tb testing.TB, minTimers int) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); b.Clock.RunWhen(stop, minTimers) }()
	tb.Cleanup(func() { close(stop); <-done })
}
