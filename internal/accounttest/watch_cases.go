package accounttest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
)

// watching is one Watch running until the case stops it, its events handed
// over one at a time.
type watching struct {
	events chan account.WatchEvent
	done   chan error
	cancel context.CancelFunc
}

// watch starts r.Watch of stream.
func watch(t *testing.T, r account.Reader, stream account.WatchStream) *watching {
	t.Helper()
	c, cancel := context.WithCancel(ctx(t))
	t.Cleanup(cancel)
	w := &watching{events: make(chan account.WatchEvent), done: make(chan error, 1), cancel: cancel}
	go func() {
		w.done <- r.Watch(c, account.WatchRequest{Stream: stream}, func(e account.WatchEvent) {
			select {
			case w.events <- e:
			case <-c.Done():
			}
		})
	}()
	return w
}

// next returns the next event that matches, failing when the watch ends
// first (or the case's hang guard runs out).
func (w *watching) next(t *testing.T, what string, match func(account.WatchEvent) bool) account.WatchEvent {
	t.Helper()
	for {
		select {
		case e := <-w.events:
			if match(e) {
				return e
			}
		case err := <-w.done:
			t.Fatalf("the watch ended (%v) before %s", err, what)
		case <-ctx(t).Done():
			t.Fatalf("no event of %s", what)
		}
	}
}

// stop cancels the watch, as Ctrl-C does, and returns how it ended.
func (w *watching) stop(t *testing.T) error {
	t.Helper()
	w.cancel()
	select {
	case err := <-w.done:
		return err
	case <-ctx(t).Done():
		t.Fatal("the watch did not end when cancelled")
		return nil
	}
}

func live(e account.WatchEvent) bool { return e.State == account.StreamLive }

// Spec "P&L stream": Watch pnl tells first that the stream is connecting,
// then the account's model once its snapshot is in (the scenario's MSFT
// lot of 100 shares at 400), and the model again after each tick; a
// watcher that goes away (mid-stream) leaves the account served: a read
// answers, and the next watcher gets the model at once.
func watchPnL(t *testing.T, e *Env) {
	a := e.Open(caller("test watch pnl", nil))
	rd := e.reader(a)
	w := watch(t, rd, account.WatchPnL)
	if first := w.next(t, "the first event", func(account.WatchEvent) bool { return true }); first.State != account.StreamConnecting || first.PnL != nil {
		t.Errorf("first event %+v, want connecting and no model", first)
	}
	snap := w.next(t, "the snapshot", live).PnL
	if snap == nil || len(snap.Positions) != 1 || snap.Positions[0].Symbol != "MSFT" {
		t.Fatalf("live model %+v, want the MSFT lot", snap)
	}
	e.Sim.Sim.SetPrice("MSFT", decimal.NewFromInt(450))
	w.next(t, "the tick's model", func(ev account.WatchEvent) bool {
		return live(ev) && ev.PnL != nil && ev.PnL.TotalUnrealized.Equal(decimal.NewFromInt(5000)) // 100 shares from 400 to 450
	})
	if err := w.stop(t); err != context.Canceled {
		t.Errorf("a cancelled watch ended with %v, want context.Canceled", err)
	}

	if _, err := rd.Read(ctx(t), account.ReadRequest{What: account.ReadPositions}); err != nil {
		t.Errorf("a read after the watcher left: %v", err)
	}
	again := watch(t, rd, account.WatchPnL)
	got := again.next(t, "the next watcher's model", live).PnL
	if got == nil || !got.TotalUnrealized.Equal(decimal.NewFromInt(5000)) {
		t.Errorf("the next watcher's model %+v, want the last tick's", got)
	}
	again.stop(t)
}

// Spec "Portfolio stream": Watch orders tells each order of the day's
// book (read once, the stream buffered meanwhile), then each next state
// the stream pushes, of orders placed by anyone on the account: here one
// placed before the watch, and one placed during it and then cancelled,
// each state of it once and in order. Both are good till cancelled and
// under the market, so that they work whatever session the virtual clock
// (which runs on while the owner is idle) has reached.
func watchOrders(t *testing.T, e *Env) {
	rd := e.reader(e.Open(caller("test watch orders", nil)))
	direct := e.Sim.Client(t, e.Sim.Live)
	place := func() *brokerclient.Order {
		t.Helper()
		px := decimal.RequireFromString("150")
		o, _, err := direct.Orders.Place(ctx(t), "LV100001", brokerclient.OrderRequest{Symbol: "AAPL", Side: brokerclient.SideBuy,
			OpenClose: brokerclient.OpenCloseOpen, OrderType: brokerclient.OrderTypeLimit, SecurityType: brokerclient.SecurityTypeStock,
			TimeInForce: brokerclient.TimeInForceGoodTillCancel, OrderQuantity: 10, LimitPrice: &px, Route: "SMART"})
		ok(t, err)
		return o
	}
	before := place()
	w := watch(t, rd, account.WatchOrders)
	// The book is read once the stream is subscribed: what is placed from
	// here on, the stream pushes.
	w.next(t, "the book's order", func(ev account.WatchEvent) bool {
		return ev.Order != nil && ev.Order.ClientOrderID == before.ClientOrderID
	})
	after := place()
	var seen []brokercode.OrderStatus
	of := func(ev account.WatchEvent) bool {
		if ev.Order == nil || ev.Order.ClientOrderID != after.ClientOrderID {
			return false
		}
		if slices.Contains(seen, ev.Order.OrderStatus) {
			t.Errorf("the new order's %s told twice", ev.Order.OrderStatus)
		}
		seen = append(seen, ev.Order.OrderStatus)
		return true
	}
	w.next(t, "the new order's acceptance", func(ev account.WatchEvent) bool {
		return of(ev) && ev.Order.OrderStatus == brokercode.OrderStatusAccepted
	})
	_, _, err := direct.Orders.Cancel(ctx(t), "LV100001", after.ClientOrderID)
	ok(t, err)
	w.next(t, "the new order's cancel", func(ev account.WatchEvent) bool {
		return of(ev) && ev.Order.OrderStatus == brokercode.OrderStatusCanceled
	})
	if err := w.stop(t); err != context.Canceled {
		t.Errorf("a cancelled watch ended with %v, want context.Canceled", err)
	}
}

// Spec "WebSocket streams": a stream Watch does not follow is refused as
// input, and nothing reaches the broker for it.
func watchUnknownStream(t *testing.T, e *Env) {
	rd := e.reader(e.Open(caller("test watch refused", nil)))
	sent := len(e.Sim.Sim.Requests())
	streams, err := e.Sim.Sim.ControlStreams(brokersim.StreamControl{})
	ok(t, err)
	for _, s := range []account.WatchStream{"positions", "", "PNL"} {
		err := rd.Watch(ctx(t), account.WatchRequest{Stream: s}, func(ev account.WatchEvent) { t.Errorf("watch %q told %+v", s, ev) })
		if account.KindOf(err) != account.KindInput {
			t.Errorf("watch %q: %v, want a KindInput refusal", s, err)
		}
	}
	for _, r := range e.Sim.Sim.Requests()[sent:] {
		// The owner's poller reads history and inventory on its own.
		if !strings.HasSuffix(r.Path, "/locates/history") && !strings.HasSuffix(r.Path, "/locates/inventory") {
			t.Errorf("%s %s sent for a refused watch", r.Method, r.Path)
		}
	}
	if now, _ := e.Sim.Sim.ControlStreams(brokersim.StreamControl{}); now > streams {
		t.Errorf("%d stream connections after refused watches, %d before", now, streams)
	}
}
