package engine

import (
	"context"
	"sync"
)

// DefaultBacklog is how many updates a subscriber may leave unread before
// its subscription ends (Config.Backlog).
const DefaultBacklog = 1 << 16

// feed is one subscriber's queue of updates. The loop puts an update in
// without ever waiting; a goroutine of the feed's own hands them to the
// subscriber's channel in order, as fast as it reads. Nothing is dropped,
// replaced or reordered: every update put is handed over, until the
// subscriber leaves backlog updates unread. Then the feed takes no more:
// it hands over what it holds, then one update with FellBehind set, and
// closes, so a reader learns exactly where its lossless stream ended (its
// last update read before the FellBehind one) and reads the rest from the
// store (as Follow does) instead of waiting on a change it will never see.
// The memory a stuck reader holds is bounded by backlog.
type feed struct {
	ctx     context.Context
	ch      chan Update
	wake    chan struct{} // something was queued, or the feed closed
	backlog int

	mu     sync.Mutex
	queue  []Update
	unread int  // updates put and not yet read: those queued and the one in hand
	closed bool // no more updates: ch is closed once the queue is handed over
	behind bool // closed because the reader fell backlog updates behind
}

// newFeed starts the feed of a subscriber until ctx ends; ch is closed
// then, or once the feed was closed and its queue handed over.
func newFeed(ctx context.Context, backlog int) *feed {
	f := &feed{ctx: ctx, ch: make(chan Update), wake: make(chan struct{}, 1), backlog: backlog}
	go f.run()
	return f
}

// put queues u; it never waits.
func (f *feed) put(u Update) {
	f.mu.Lock()
	if !f.closed && f.ctx.Err() == nil {
		if f.unread >= f.backlog {
			f.closed, f.behind = true, true
		} else {
			f.queue = append(f.queue, u)
			f.unread++
		}
	}
	f.mu.Unlock()
	f.signal()
}

// close ends the feed once what is queued has been handed over.
func (f *feed) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.signal()
}

func (f *feed) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *feed) run() {
	defer close(f.ch)
	for {
		f.mu.Lock()
		var u Update
		next := len(f.queue) > 0
		if next {
			u, f.queue = f.queue[0], f.queue[1:]
		}
		closed, behind := f.closed, f.behind
		f.mu.Unlock()
		if next {
			if !f.hand(u) {
				return
			}
			f.mu.Lock()
			f.unread--
			f.mu.Unlock()
			continue
		}
		if closed {
			if behind {
				f.hand(Update{FellBehind: true})
			}
			return
		}
		select {
		case <-f.wake:
		case <-f.ctx.Done():
			return
		}
	}
}

// hand gives u to the reader; false when the subscription ended first.
func (f *feed) hand(u Update) bool {
	select {
	case f.ch <- u:
		return true
	case <-f.ctx.Done():
		return false
	}
}
