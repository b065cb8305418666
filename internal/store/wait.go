package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
)

// leasePoll is how often a standby looks at a lease it waits on when
// nothing else wakes it: on Postgres a release is notified at once, so
// the poll only covers a lost notification.
const (
	leasePollSQLite   = 250 * time.Millisecond
	leasePollPostgres = time.Second
)

// WaitLease returns when held, a lease seen held by another process, may
// be free: it lapsed, was released, or passed to another owner or term.
// It looks again at the lease's expiry, at a release notified on
// Postgres (LISTEN on LeaseChannel), and every poll interval. An error
// reading the lease is returned (the database may be unreachable: the
// caller waits and tries again).
func (s *Store) WaitLease(ctx context.Context, held locator.Lease) error {
	clk, poll := clock.Real{}, leasePollSQLite // lease times are real (see leaseNow)
	if s.Postgres() {
		poll = leasePollPostgres
	}
	for {
		released := s.db.notices.next(s.db)
		cur, err := getLease(ctx, s.db, held.Account)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		now, err := s.leaseNow(ctx, s.db)
		if err != nil {
			return err
		}
		if cur.Owner != held.Owner || cur.Term != held.Term || !cur.Expires.After(now) {
			return nil
		}
		t := clk.NewTimer(min(cur.Expires.Sub(now)+time.Millisecond, poll))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-released:
		case <-t.C():
		}
		t.Stop()
	}
}

// notices wakes the standbys of a Postgres store when a lease is
// released: one LISTEN connection per store, started on first use, and a
// channel closed at each notification (and at each reconnection, since
// one may have been missed meanwhile).
type notices struct {
	once sync.Once
	stop context.CancelFunc
	done chan struct{}

	mu sync.Mutex
	ch chan struct{}
}

// next is closed at the next notification; nil (never) on SQLite.
func (n *notices) next(c *conn) <-chan struct{} {
	if c.dialect != "postgres" {
		return nil
	}
	n.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		n.stop, n.done = cancel, make(chan struct{})
		go n.listen(ctx, c.dsn)
	})
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notices) wake() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// listen holds the LISTEN connection until ctx ends, reconnecting.
func (n *notices) listen(ctx context.Context, dsn string) {
	defer close(n.done)
	for ctx.Err() == nil {
		pc, err := pgx.Connect(ctx, dsn)
		if err == nil {
			_, err = pc.Exec(ctx, `LISTEN `+LeaseChannel)
			for err == nil {
				if _, err = pc.WaitForNotification(ctx); err == nil {
					n.wake()
				}
			}
			pc.Close(context.Background())
		}
		n.wake()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// close stops the listener, if it was started (and keeps it from
// starting later).
func (n *notices) close() {
	n.once.Do(func() {})
	if n.stop != nil {
		n.stop()
		<-n.done
	}
}
