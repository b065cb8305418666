package brokerclient

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
)

// OrderFollower learns the fate of an account's orders from the portfolio
// stream, in milliseconds instead of polls, and falls back to the order
// book only while the stream cannot be trusted (spec: "Portfolio stream":
// subscribe before placing, buffer while loading REST state, REST polling
// as the fallback).
//
// It subscribes to Order updates when started. While the connection is
// down it reads the order book every poll interval for the orders being
// watched; after a reconnection it reads the book once more, buffering the
// stream meanwhile, to settle what it missed, and only then reports
// Connected. Every state of an order reaches its watches once, in order:
// repeated pushes, a book row older than a push, or a push older than the
// book are dropped.
type OrderFollower struct {
	orders  *OrdersService
	account string
	sess    session
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu        sync.Mutex
	up        bool // subscribed and settled: the stream is the source of truth
	resync    int  // connection generation awaiting its settling read; 0 none
	gen       int  // current connection generation
	err       error
	buffering int      // loads in progress: stream updates wait in buffer
	buffer    []*Order // stream updates received while loading
	last      map[string]*Order
	watches   []*OrderWatch
	sig       stateSignal
}

// FollowOrders starts following accountID's orders until ctx ends or
// Close. It returns once the first connection is subscribed, or has
// failed: an authentication or subscribe error, or a message over the
// client's bounds (ErrAnswerTooLarge, ErrTooManyRows), is returned; a transient
// failure is not (the follower keeps reconnecting and Connected says false
// meanwhile).
func (s *StreamsService) FollowOrders(ctx context.Context, accountID string, opts ...StreamOption) (*OrderFollower, error) {
	if _, err := accountBase(accountID); err != nil {
		return nil, err
	}
	f := &OrderFollower{orders: s.client.Orders, account: strings.ToUpper(accountID), last: map[string]*Order{}}
	f.sess = session{svc: s, kind: StreamPortfolio, cfg: newStreamConfig(opts), h: f}
	first := f.sig.changed()
	runCtx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	f.wg.Add(2)
	go func() { defer f.wg.Done(); f.sess.run(runCtx) }()
	go func() { defer f.wg.Done(); f.poll(runCtx) }()
	select {
	case <-first:
	case <-ctx.Done():
		f.Close()
		return nil, ctx.Err()
	}
	if err := f.Err(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (f *OrderFollower) connected(ctx context.Context, conn *StreamConn) error {
	f.mu.Lock()
	f.gen++
	f.mu.Unlock()
	return conn.Subscribe(ctx, f.account, "Order")
}

func (f *OrderFollower) message(msg StreamMessage) error {
	switch m := msg.(type) {
	case *SubscribedMessage:
		f.mu.Lock()
		if len(f.watches) == 0 || f.sess.cfg.pollInterval == 0 {
			f.up = true // nothing to settle, or the caller settles
		} else {
			f.resync = f.gen
			f.buffering++
		}
		f.mu.Unlock()
		f.sig.notify()
	case *OrderUpdate:
		f.mu.Lock()
		if f.buffering > 0 {
			f.buffer = append(f.buffer, &m.Order)
		} else {
			f.deliverLocked(&m.Order)
		}
		f.mu.Unlock()
	case *SubscriptionError:
		return &StreamSubscribeError{Kind: StreamPortfolio, Account: m.Account, Status: "error", Message: m.Message}
	case *SystemMessage:
		if m.Status == StatusTerminated || m.Status == StatusInvalidData {
			return &StreamSubscribeError{Kind: StreamPortfolio, Account: f.account, Status: string(m.Status), Message: m.Message}
		}
	}
	return nil
}

func (f *OrderFollower) disconnected(error) {
	f.mu.Lock()
	f.up = false
	if f.resync != 0 {
		f.resync = 0
		f.flushLocked()
	}
	f.mu.Unlock()
	f.sig.notify()
}

func (f *OrderFollower) failed(err error) {
	f.mu.Lock()
	f.up, f.err = false, err
	f.mu.Unlock()
	f.sig.notify()
}

// poll is the REST side: the settling read after each (re)subscription,
// and a book read every poll interval while the stream is down and some
// order is watched.
func (f *OrderFollower) poll(ctx context.Context) {
	clk := f.sess.svc.client.clock
	for ctx.Err() == nil && f.sess.cfg.pollInterval > 0 {
		changed := f.sig.changed()
		f.mu.Lock()
		resync, down, watched, failed := f.resync, !f.up, len(f.watches) > 0, f.err != nil
		f.mu.Unlock()
		switch {
		case resync != 0:
			book, _, err := f.orders.Book(ctx, f.account)
			f.mu.Lock()
			if f.resync == resync {
				if err == nil {
					f.loadLocked(book)
					f.resync = 0
					f.flushLocked()
					f.up = true
				}
			}
			f.mu.Unlock()
			f.sig.notify()
			if err != nil && clock.Sleep(ctx, clk, f.sess.cfg.pollInterval) != nil {
				return
			}
		case down && watched && !failed:
			if book, _, err := f.orders.Book(ctx, f.account); err == nil {
				f.mu.Lock()
				f.loadLocked(book)
				f.mu.Unlock()
			}
			t := clk.NewTimer(f.sess.cfg.pollInterval)
			select {
			case <-ctx.Done():
			case <-t.C():
			case <-changed:
			}
			t.Stop()
		default:
			select {
			case <-ctx.Done():
			case <-changed:
			}
		}
	}
}

// Load reads the order book once while the stream keeps arriving, holding
// the stream's updates back until the book is applied (spec: "buffer
// messages while loading REST state"). Watches see the book's rows for
// their orders, then whatever the stream brought meanwhile, each state
// once.
func (f *OrderFollower) Load(ctx context.Context) error {
	f.mu.Lock()
	f.buffering++
	f.mu.Unlock()
	book, _, err := f.orders.Book(ctx, f.account)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		f.loadLocked(book)
	}
	f.flushLocked()
	return err
}

func (f *OrderFollower) loadLocked(book []Order) {
	for i := range book {
		f.deliverLocked(&book[i])
	}
}

// flushLocked ends one buffering load and delivers the buffer when none is left.
func (f *OrderFollower) flushLocked() {
	if f.buffering--; f.buffering > 0 {
		return
	}
	f.buffering = 0
	for _, o := range f.buffer {
		f.deliverLocked(o)
	}
	f.buffer = nil
}

// deliverLocked passes a state of an order to the watches that want it,
// unless it is one they have seen or older than one they have.
func (f *OrderFollower) deliverLocked(o *Order) {
	id := o.ClientOrderID
	if !newer(o, f.last[id]) {
		return
	}
	cp := *o
	f.last[id] = &cp
	for _, w := range f.watches {
		if w.wants(id) {
			w.push(&cp)
		}
	}
}

// newer reports whether o is a later state of an order than last: not a
// repeat, not earlier by lastUpdated, and never a step back from a
// terminal state.
func newer(o, last *Order) bool {
	switch {
	case last == nil:
		return true
	case last.IsTerminal() && !o.IsTerminal():
		return false
	case o.LastUpdated.Before(last.LastUpdated.Time):
		return false
	case o.LastUpdated.Equal(last.LastUpdated.Time) && (progress(o) < progress(last) || o.Executed < last.Executed):
		return false // one instant can hold Accepted then Filled: never step back
	}
	return o.OrderStatus != last.OrderStatus || !o.LastUpdated.Equal(last.LastUpdated.Time) || o.Executed != last.Executed ||
		o.CanceledQuantity != last.CanceledQuantity || !equalText(o.Text, last.Text)
}

// progress orders the statuses an order passes through.
func progress(o *Order) int {
	switch {
	case o.IsTerminal():
		return 3
	case o.OrderStatus == brokercode.OrderStatusPartiallyFilled:
		return 2
	case o.OrderStatus == brokercode.OrderStatusAccepted:
		return 1
	}
	return 0
}

func equalText(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Connected reports whether the stream is subscribed and settled, so that
// order states arrive from it; when false the follower is reading the
// order book instead. The channel is closed at the next change.
func (f *OrderFollower) Connected() (bool, <-chan struct{}) {
	ch := f.sig.changed()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.up, ch
}

// Err returns the error that stopped the follower for good (an
// authentication or subscribe error, or the context's once it ended or
// Close was called), or nil.
func (f *OrderFollower) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Watch starts following one order by client order id, or every order of
// the account when the id is "". Call it before placing the order, so no
// update can slip between the placement and the watch.
func (f *OrderFollower) Watch(clientOrderID string) *OrderWatch {
	w := &OrderWatch{f: f, id: clientOrderID, wake: make(chan struct{}, 1)}
	f.mu.Lock()
	f.watches = append(f.watches, w)
	f.mu.Unlock()
	f.sig.notify() // a first watch may start polling while down
	return w
}

// Close stops following and waits for the follower's goroutines.
func (f *OrderFollower) Close() {
	f.cancel()
	f.wg.Wait()
}

// OrderWatch yields the distinct states of one order (or of every order),
// oldest first.
type OrderWatch struct {
	f    *OrderFollower
	id   string
	wake chan struct{}

	mu      sync.Mutex
	pending []*Order
}

// wants reports whether an order id is the watched one: the id itself, or
// the id the service rewrote on an R118 rejection with a route.
func (w *OrderWatch) wants(id string) bool {
	return w.id == "" || id == w.id || strings.HasPrefix(id, w.id+"INVALID")
}

func (w *OrderWatch) push(o *Order) {
	w.mu.Lock()
	w.pending = append(w.pending, o)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Observe feeds a state learnt elsewhere (the placement's response, a REST
// read) through the same de-duplication, so the watch and the stream agree.
// The placement's response matters: R118 with a route rejects at once and
// may push nothing.
func (w *OrderWatch) Observe(o *Order) {
	if o == nil {
		return
	}
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	w.f.deliverLocked(o)
}

// ErrFollowerStopped is Next's error once the follower failed for good.
var ErrFollowerStopped = errors.New("order follower stopped")

// Next returns the order's next state, waiting for the stream (or, while
// it is down, the book). It fails when ctx ends or the follower stopped
// for good (wrapping its error).
func (w *OrderWatch) Next(ctx context.Context) (*Order, error) {
	for {
		w.mu.Lock()
		if len(w.pending) > 0 {
			o := w.pending[0]
			w.pending = w.pending[1:]
			w.mu.Unlock()
			return o, nil
		}
		w.mu.Unlock()
		_, changed := w.f.Connected()
		if err := w.f.Err(); err != nil {
			return nil, errors.Join(ErrFollowerStopped, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.wake:
		case <-changed:
		}
	}
}

// Final returns the order's first terminal state (Filled, Canceled,
// Expired, Rejected).
func (w *OrderWatch) Final(ctx context.Context) (*Order, error) {
	for {
		o, err := w.Next(ctx)
		if err != nil || o.IsTerminal() {
			return o, err
		}
	}
}

// Close stops the watch.
func (w *OrderWatch) Close() {
	w.f.mu.Lock()
	w.f.watches = slices.DeleteFunc(w.f.watches, func(x *OrderWatch) bool { return x == w })
	w.f.mu.Unlock()
}
