package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
)

// Watch: see account.Reader. The owner relays the streams it follows
// itself, never a connection per watcher: the P&L watch Today reads
// (started now if no Today started it) and its engine's portfolio stream
// (engine.Engine.OrderStream), whose order book the watch reads on the
// owner's pacer.
func (s *session) Watch(ctx context.Context, req account.WatchRequest, on func(account.WatchEvent)) error {
	if err := checkStream(req.Stream); err != nil {
		return err
	}
	ctx = s.l.gated(ctx)
	r := relay{account: s.l.account, clk: s.l.clk, stopped: s.l.eng.Done(), on: on}
	r.begin()
	if req.Stream == account.WatchPnL {
		pw, err := s.l.watchPnL(ctx)
		if err != nil {
			return streamFailed(s.l.account, err)
		}
		return r.pnl(ctx, pw)
	}
	f, err := s.l.eng.OrderStream()
	if err != nil {
		return streamFailed(s.l.account, err)
	}
	// The engine's follower reads no order book by itself: what the
	// stream missed while down is read again once it is back.
	return r.orders(ctx, f, true)
}

// Watch: see account.Reader; the stream is opened on a's own client, for
// this watch alone, and its follower of the orders reads the order book
// while it is down.
func (a *Alone) Watch(ctx context.Context, req account.WatchRequest, on func(account.WatchEvent)) error {
	if err := checkStream(req.Stream); err != nil {
		return err
	}
	if a.Account == "" {
		return account.Errorf(account.KindInput, "watch: no account named (--account or LOCATOR_ACCOUNT); nothing was sent")
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	r := relay{account: a.Account, clk: a.Clock, on: on}
	r.begin()
	if req.Stream == account.WatchPnL {
		pw, err := c.Streams.WatchPnL(ctx, []string{a.Account})
		if err != nil {
			return streamFailed(a.Account, err)
		}
		defer pw.Close()
		return r.pnl(ctx, pw)
	}
	f, err := c.Streams.FollowOrders(ctx, a.Account)
	if err != nil {
		return streamFailed(a.Account, err)
	}
	defer f.Close()
	return r.orders(ctx, f, false)
}

// checkStream refuses a stream Watch does not follow, before anything is
// sent.
func checkStream(s account.WatchStream) error {
	if s == account.WatchPnL || s == account.WatchOrders {
		return nil
	}
	return account.Errorf(account.KindInput, fmt.Sprintf("watch %q: not a stream (pnl or orders); nothing was sent", s))
}

// streamFailed is why a stream of account stopped for good, as the
// account API's error: the broker's refusal of the keys or of the account
// on it is KindRefused; the owner's watch ending with its engine,
// KindOwnerGone.
func streamFailed(acct string, err error) error {
	switch {
	case errors.Is(err, brokerclient.ErrStreamAuth):
		return account.Wrap(account.KindRefused, "the broker refused these keys on the stream: check LOCATOR_KEY_ID and LOCATOR_SECRET", err)
	case errors.Is(err, brokerclient.ErrStreamSubscribe):
		return account.Wrap(account.KindRefused, fmt.Sprintf("account %s not found for these keys on the stream; nothing was sent", acct), err)
	case errors.Is(err, context.Canceled), errors.Is(err, errOwnerStopped):
		return account.Wrap(account.KindOwnerGone, "the owner stopped: its streams are no longer followed", err)
	}
	return kinded(err)
}

// errOwnerStopped is the cause of a watch the owner's engine ended.
var errOwnerStopped = errors.New("the owner's engine stopped")

// relay hands a stream's changes to a watcher as account.WatchEvents: the
// one reading of a P&L watch and of an order follower, for the owner and
// for a reader alone.
type relay struct {
	account string
	clk     clock.Clock
	// stopped is closed when the streams' owner stops (nil: never; a
	// reader's streams are its own).
	stopped <-chan struct{}
	on      func(account.WatchEvent)
	state   account.StreamState // the last one told
}

// begin tells the watcher the stream is being reached, before anything
// is awaited (a broker out of reach shows as connecting, not as nothing).
func (r *relay) begin() {
	r.state = account.StreamConnecting
	r.on(account.WatchEvent{Time: r.clk.Now(), State: r.state})
}

// at is the stream's state now that it is up or not: connecting until it
// was first live, down after.
func (r *relay) at(up bool) account.StreamState {
	switch {
	case up:
		return account.StreamLive
	case r.state == account.StreamConnecting:
		return account.StreamConnecting
	}
	return account.StreamDown
}

// tell hands ev to the watcher and keeps its state.
func (r *relay) tell(ev account.WatchEvent) {
	r.state = ev.State
	r.on(ev)
}

// pnl relays pw's model of the account: each change of it while live,
// and each change of the connection's state.
func (r *relay) pnl(ctx context.Context, pw *brokerclient.PnLWatcher) error {
	for {
		changed := pw.Changed()
		if err := pw.Err(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return streamFailed(r.account, err)
		}
		snap, up := pw.Snapshot(r.account)
		ev := account.WatchEvent{Time: r.clk.Now(), State: r.at(up)}
		if up {
			ev.PnL = &snap
		}
		if up || ev.State != r.state {
			r.tell(ev)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.stopped:
			return streamFailed(r.account, errOwnerStopped)
		case <-changed:
		}
	}
}

// orders relays f's orders of the account: the order book read once, then
// each state of an order the stream (or, while it is down, f's reads of
// the book) brings, and each change of the connection's state; settle
// reads the book again each time the stream is back, for a follower that
// does not (engine.Engine.OrderStream's).
func (r *relay) orders(ctx context.Context, f *brokerclient.OrderFollower, settle bool) error {
	ow := f.Watch("")
	defer ow.Close()
	up, changed := f.Connected()
	if r.at(up) != r.state {
		r.tell(account.WatchEvent{Time: r.clk.Now(), State: r.at(up)})
	}
	if err := f.Load(ctx); err != nil {
		return readFailed(ctx, err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	next, failed := make(chan *brokerclient.Order), make(chan error, 1)
	go func() {
		for {
			o, err := ow.Next(ctx)
			if err != nil {
				failed <- err
				return
			}
			select {
			case next <- o:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.stopped:
			return streamFailed(r.account, errOwnerStopped)
		case err := <-failed:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return streamFailed(r.account, err)
		case o := <-next:
			r.tell(account.WatchEvent{Time: r.clk.Now(), State: r.state, Order: o})
		case <-changed:
			var now bool
			now, changed = f.Connected()
			if state := r.at(now); state != r.state {
				r.tell(account.WatchEvent{Time: r.clk.Now(), State: state})
				if settle && now {
					// A read that fails leaves the states the stream
					// brings from now on; the next return reads again.
					f.Load(ctx)
				}
			}
		}
	}
}

// readFailed is a failed read of the order book, or ctx's end.
func readFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return kinded(fmt.Errorf("order book: %w", err))
}
