package engine

import (
	"context"
	"slices"
	"sync"
)

// feedBehind is how many updates a subscriber's queue holds before each
// new update replaces the older ones queued of its workflow or order.
const feedBehind = 1024

// feed is one subscriber's queue of updates. The loop puts an update in
// without ever waiting; a goroutine of the feed's own hands them to the
// subscriber's channel in order, as fast as it reads. Nothing is dropped:
// once feedBehind updates wait, a new update of a workflow or order
// replaces those of it still queued, so a reader that falls behind skips
// intermediate changes but still gets each one's newest, its final one
// included, and the queue holds at most feedBehind updates plus one per
// workflow and order.
type feed struct {
	ctx  context.Context
	ch   chan Update
	wake chan struct{} // something was queued, or the feed closed

	mu     sync.Mutex
	queue  []Update
	closed bool // no more updates: ch is closed once the queue is handed over
}

// newFeed starts the feed of a subscriber until ctx ends; ch is closed
// then, or once the feed was closed and its queue handed over.
func newFeed(ctx context.Context) *feed {
	f := &feed{ctx: ctx, ch: make(chan Update), wake: make(chan struct{}, 1)}
	go f.run()
	return f
}

// put queues u; it never waits.
func (f *feed) put(u Update) {
	f.mu.Lock()
	if !f.closed && f.ctx.Err() == nil {
		if len(f.queue) >= feedBehind {
			k := updateKey(u)
			f.queue = slices.DeleteFunc(f.queue, func(q Update) bool { return updateKey(q) == k })
		}
		f.queue = append(f.queue, u)
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
		batch, closed := f.queue, f.closed
		f.queue = nil
		f.mu.Unlock()
		for _, u := range batch {
			select {
			case f.ch <- u:
			case <-f.ctx.Done():
				return
			}
		}
		if len(batch) > 0 {
			continue
		}
		if closed {
			return
		}
		select {
		case <-f.wake:
		case <-f.ctx.Done():
			return
		}
	}
}

// updateKey names what u is a change of: its workflow, or its order.
func updateKey(u Update) string {
	if u.Order != nil {
		return "order " + u.Order.ClientOrderID
	}
	if u.Workflow != nil {
		return "workflow " + u.Workflow.ID
	}
	return ""
}
