package engine

import (
	"sync"
	"sync/atomic"
)

// mailbox is an unbounded FIFO: a push never blocks, so the poller, the
// workers and callers hand events to the loop without ever waiting on it
// (and the loop can post to itself), and one slow consumer never stalls a
// producer.
type mailbox[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{} // has a value while items is non-empty
	// inHand counts the items pushed and not yet done: waiting, or taken
	// and being handled (see done).
	inHand atomic.Int64
}

func newMailbox[T any]() *mailbox[T] { return &mailbox[T]{ready: make(chan struct{}, 1)} }

func (m *mailbox[T]) push(v T) {
	m.inHand.Add(1)
	m.mu.Lock()
	m.items = append(m.items, v)
	m.mu.Unlock()
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// drain hands the queued items, oldest first, to handle, emptying the
// box, and counts them out of inHand once handle has returned (for the
// loop: committed, and the effects handed to the workers).
func (m *mailbox[T]) drain(handle func([]T)) {
	m.mu.Lock()
	items := m.items
	m.items = nil
	m.mu.Unlock()
	handle(items)
	m.inHand.Add(-int64(len(items)))
}

// pool runs the jobs pushed to it, in order, on at most limit goroutines
// (start makes one, which runs them): a goroutine is started when a job
// comes and none is free, and ends when no job is left, so an idle
// engine holds none. Until begin, jobs only queue.
type pool struct {
	mu      sync.Mutex
	jobs    []job
	running int
	limit   int
	start   func(*pool)
}

// begin runs the jobs from now on, each goroutine made by start.
func (p *pool) begin(start func(*pool)) {
	p.mu.Lock()
	p.start = start
	n := min(len(p.jobs), p.limit-p.running)
	p.running += n
	p.mu.Unlock()
	for range n {
		start(p)
	}
}

// push queues j, starting a goroutine for it when fewer than limit run.
func (p *pool) push(j job) {
	p.mu.Lock()
	p.jobs = append(p.jobs, j)
	start := p.start
	if start != nil && p.running < p.limit {
		p.running++
	} else {
		start = nil
	}
	p.mu.Unlock()
	if start != nil {
		start(p)
	}
}

// next is the oldest job, or false when none is left (or stop is set): the
// goroutine asking then ends, counted off under the lock, so a push
// after it starts another.
func (p *pool) next(stop bool) (job, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.jobs) == 0 || stop {
		p.running--
		return nil, false
	}
	j := p.jobs[0]
	p.jobs[0] = nil
	p.jobs = p.jobs[1:]
	return j, true
}
