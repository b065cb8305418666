package engine_test

import (
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// signalWriter logs to the test and closes seen at the first line holding
// want.
type signalWriter struct {
	t    *testing.T
	want string
	seen chan struct{}
	once atomic.Bool
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	if strings.Contains(string(p), w.want) && w.once.CompareAndSwap(false, true) {
		close(w.seen)
	}
	return len(p), nil
}

// A quote the owner's gate held back (this process was not sure it still
// owned the account: nothing reached the broker) must not leave the
// account's quote turn taken: the next locate quotes, and the held-back
// one, settled from history, is quoted again once (the broker never had
// it). Before, Engine.written dropped the event and the account never
// quoted again.
func TestHeldBackQuoteLeavesTheQuoteTurnFree(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{noStart: true})
	var closed atomic.Bool // open for the engine's start-up reads
	ctx := brokerclient.WithGate(t.Context(), func(bool) error {
		if closed.Load() {
			return errors.New("not sure of the lease")
		}
		return nil
	})
	logw := &signalWriter{t: t, want: "quote held back", seen: make(chan struct{})}
	e, err := engine.New(engine.Config{
		Client: b.sim.Client(t, b.sim.Live), Store: b.store, Clock: b.sim.Clock, Account: "LV100001",
		Env: brokerclient.EnvLive, Logger: slog.New(slog.NewTextHandler(logw, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	b.engine = e

	closed.Store(true)
	held, err := e.Locate(t.Context(), engine.Request{Symbol: "HTBX", Quantity: 300, Policy: auto("")})
	if err != nil {
		t.Fatal(err)
	}
	<-logw.seen
	closed.Store(false)
	if n := len(b.requests("locates/quote")); n != 0 {
		t.Fatalf("%d quotes reached the broker through a closed gate", n)
	}
	next, err := e.Locate(t.Context(), engine.Request{Symbol: "HTBY", Quantity: 300, Policy: auto("")})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, b.wait(t, next.ID), states.Filled)
	// The held-back locate is settled from history like any failed
	// write: the broker never had its quote, so it is quoted again.
	expect(t, b.wait(t, held.ID), states.Filled)
	if n := len(b.requests("locates/quote")); n != 2 {
		t.Errorf("%d quotes at the broker, want 2 (one a locate)", n)
	}
}
