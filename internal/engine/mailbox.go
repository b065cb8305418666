package engine

import "sync"

// mailbox is an unbounded FIFO: a push never blocks, so the poller, the
// workers and callers hand events to the loop without ever waiting on it
// (and the loop can post to itself), and one slow consumer never stalls a
// producer.
type mailbox[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{} // has a value while items is non-empty
}

func newMailbox[T any]() *mailbox[T] { return &mailbox[T]{ready: make(chan struct{}, 1)} }

func (m *mailbox[T]) push(v T) {
	m.mu.Lock()
	m.items = append(m.items, v)
	m.mu.Unlock()
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// take returns the queued items, oldest first, emptying the box.
func (m *mailbox[T]) take() []T {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.items
	m.items = nil
	return out
}

// pop returns the oldest item, if any, re-arming ready for the rest.
func (m *mailbox[T]) pop() (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var zero T
	if len(m.items) == 0 {
		return zero, false
	}
	v := m.items[0]
	m.items[0] = zero
	m.items = m.items[1:]
	if len(m.items) > 0 {
		select {
		case m.ready <- struct{}{}:
		default:
		}
	}
	return v, true
}
