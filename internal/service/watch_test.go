package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/wire"
)

// watcher is one Watch through the owner's socket, its events handed
// over one at a time, until the test cancels it.
type watcher struct {
	events chan account.WatchEvent
	done   chan error
	cancel context.CancelFunc
}

func startWatch(t *testing.T, r account.Reader, stream account.WatchStream) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	w := &watcher{events: make(chan account.WatchEvent), done: make(chan error, 1), cancel: cancel}
	go func() {
		w.done <- r.Watch(ctx, account.WatchRequest{Stream: stream}, func(e account.WatchEvent) {
			select {
			case w.events <- e:
			case <-ctx.Done():
			}
		})
	}()
	return w
}

// until returns the next event that matches, failing when the watch ends
// first; a minute of real time is a hang guard.
func (w *watcher) until(t *testing.T, what string, match func(account.WatchEvent) bool) {
	t.Helper()
	guard := time.After(time.Minute)
	for {
		select {
		case e := <-w.events:
			if match(e) {
				return
			}
		case err := <-w.done:
			t.Fatalf("the watch ended (%v) before %s", err, what)
		case <-guard:
			t.Fatalf("no event of %s", what)
		}
	}
}

// ended waits for the watch's end, taking the events that come before
// it: a watch whose handler still waits to hand one over (a P&L tick
// after the test's last look, say) never returns to see its end.
func (w *watcher) ended(t *testing.T) error {
	t.Helper()
	guard := time.After(time.Minute) // a hang guard
	for {
		select {
		case err := <-w.done:
			return err
		case <-w.events:
		case <-guard:
			t.Fatal("the watch did not end")
			return nil
		}
	}
}

// Spec "WebSocket streams" ("P&L stream", "Portfolio stream"): the owner
// relays the streams it follows to every watcher, over one connection of
// each kind to the broker however many watch; a watcher cancelled
// mid-stream leaves the owner's streams and the other watchers going;
// and when the owner stops, a watch still open ends with KindOwnerGone.
func TestWatchRelaysTheOwnersStreams(t *testing.T) {
	t.Parallel()
	o := own(t)
	open := func(name string) *wire.Client {
		cl := wire.Dial(o.owner.Lease().Endpoint, account.Caller{Name: name, Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
		t.Cleanup(cl.Close)
		return cl
	}
	first, second := open("first watcher"), open("second watcher")
	live := func(e account.WatchEvent) bool { return e.State == account.StreamLive }
	var ws []*watcher
	for _, cl := range []*wire.Client{first, second} {
		for _, s := range []account.WatchStream{account.WatchPnL, account.WatchOrders} {
			w := startWatch(t, cl, s)
			w.until(t, string(s)+" live", live)
			ws = append(ws, w)
		}
	}
	conns := func(kind string) int {
		n, err := o.sim.Sim.ControlStreams(brokersim.StreamControl{Stream: kind})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if p, q := conns("pnl"), conns("portfolio"); p != 1 || q != 1 {
		t.Errorf("%d P&L and %d portfolio connections for two watchers of each, want the owner's one of each", p, q)
	}

	ws[0].cancel() // the first watcher's P&L, mid-stream
	if err := ws[0].ended(t); err != context.Canceled {
		t.Errorf("the cancelled watch ended with %v", err)
	}
	o.sim.Sim.SetPrice("MSFT", decimal.NewFromInt(450))
	ws[2].until(t, "the tick at the other watcher", func(e account.WatchEvent) bool {
		return e.PnL != nil && e.PnL.TotalUnrealized.Equal(decimal.NewFromInt(5000))
	})
	if p := conns("pnl"); p != 1 {
		t.Errorf("%d P&L connections after a watcher left, want the owner's one", p)
	}

	o.owner.Close()
	for _, w := range ws[1:] {
		if err := w.ended(t); account.KindOf(err) != account.KindOwnerGone {
			t.Errorf("a watch when its owner stopped: %v, want KindOwnerGone", err)
		}
	}
}
