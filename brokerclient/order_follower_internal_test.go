package brokerclient

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokercode"
)

// Spec "Portfolio stream": "buffer messages while loading REST state".
// Stream updates that arrive during a book read wait until the book is
// applied; then each state reaches the watch once, in order, and a state
// older than what the book said is dropped.
func TestOrderFollowerBuffersWhileLoading(t *testing.T) {
	t.Parallel()
	at := func(ms int) Time {
		return Time{Time: time.Date(2026, 11, 25, 15, 0, 0, ms*int(time.Millisecond), time.UTC)}
	}
	order := func(status brokercode.OrderStatus, ms int) Order {
		return Order{ClientOrderID: "b1", OrderStatus: status, LastUpdated: at(ms)}
	}
	f := &OrderFollower{last: map[string]*Order{}}
	w := f.Watch("b1")
	update := func(o Order) {
		if err := f.message(&OrderUpdate{Order: o}); err != nil {
			t.Fatal(err)
		}
	}
	states := func() []brokercode.OrderStatus {
		var out []brokercode.OrderStatus
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // only what is pending
		for {
			o, err := w.Next(ctx)
			if err != nil {
				return out
			}
			out = append(out, o.OrderStatus)
		}
	}

	f.buffering++ // a book read starts
	update(order(brokercode.OrderStatusAccepted, 50))
	update(order(brokercode.OrderStatusFilled, 60))
	if got := states(); len(got) != 0 {
		t.Fatalf("delivered %v while loading", got)
	}
	f.mu.Lock()
	f.loadLocked([]Order{order(brokercode.OrderStatusPendingNew, 0)}) // the book was read before the pushes
	f.flushLocked()
	f.mu.Unlock()
	if got := states(); !slices.Equal(got, []brokercode.OrderStatus{"PendingNew", "Accepted", "Filled"}) {
		t.Errorf("states %v, want the book's then the buffered ones", got)
	}

	f.buffering++
	update(order(brokercode.OrderStatusFilled, 60)) // a repeat
	f.mu.Lock()
	f.loadLocked([]Order{order(brokercode.OrderStatusAccepted, 50)}) // older than what was seen
	f.flushLocked()
	f.mu.Unlock()
	if got := states(); len(got) != 0 {
		t.Errorf("states %v, want nothing new", got)
	}
}
