package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
)

// leasePoll is how often a standby looks at a lease it waits on when
// nothing else wakes it: on Postgres a release is notified at once, and
// the poll covers a lost notification and a holder's session that ended
// (a death notifies nobody).
const (
	leasePollSQLite   = 250 * time.Millisecond
	leasePollPostgres = 500 * time.Millisecond
)

// WaitLease returns when held, a lease seen held by another process, may
// be free: it lapsed, was released, or passed to another owner or term,
// or (on Postgres) its process's session ended (see Session: the process
// died). The leases waited on are looked at again at the soonest expiry
// among them, at a release notified on Postgres (LISTEN on LeaseChannel),
// and every poll interval, in one query for all the standbys of the store
// (a daemon standing by for thousands of accounts reads their leases once
// a poll, not once per account), and their holders' sessions in one more. An error reading the leases is returned
// (the database may be unreachable: the caller waits and tries again).
func (s *Store) WaitLease(ctx context.Context, held locator.Lease) error {
	w := &leaseWait{held: held, done: make(chan error, 1)}
	s.db.waits.add(s, w)
	select {
	case <-ctx.Done():
		s.db.waits.remove(w)
		return ctx.Err()
	case err := <-w.done:
		return err
	}
}

// leaseWait is one WaitLease: the lease held, and where its end is told.
type leaseWait struct {
	held locator.Lease
	done chan error // one value
}

// leaseWaits is the one look at the leases a store's standbys wait on: a
// goroutine that runs while any wait.
type leaseWaits struct {
	mu      sync.Mutex
	waits   map[*leaseWait]bool
	running bool
	kick    chan struct{}
}

// add starts w, looked at in the next round, at once.
func (lw *leaseWaits) add(s *Store, w *leaseWait) {
	lw.mu.Lock()
	if lw.waits == nil {
		lw.waits, lw.kick = map[*leaseWait]bool{}, make(chan struct{}, 1)
	}
	lw.waits[w] = true
	if !lw.running {
		lw.running = true
		go lw.loop(s)
	}
	lw.mu.Unlock()
	select {
	case lw.kick <- struct{}{}:
	default:
	}
}

// remove ends w, its caller gone.
func (lw *leaseWaits) remove(w *leaseWait) {
	lw.mu.Lock()
	delete(lw.waits, w)
	lw.mu.Unlock()
}

// finish tells w how its wait ended, and forgets it.
func (lw *leaseWaits) finish(w *leaseWait, err error) {
	lw.remove(w)
	w.done <- err
}

// loop looks at the leases waited on, round after round, until none is.
func (lw *leaseWaits) loop(s *Store) {
	clk, poll := clock.Real{}, leasePollSQLite // lease times are real (see leaseNow)
	if s.Postgres() {
		poll = leasePollPostgres
	}
	for {
		released := s.db.notices.next(s.db)
		lw.mu.Lock()
		if len(lw.waits) == 0 {
			lw.running = false
			lw.mu.Unlock()
			return
		}
		waits := make([]*leaseWait, 0, len(lw.waits))
		for w := range lw.waits {
			waits = append(waits, w)
		}
		lw.mu.Unlock()
		t := clk.NewTimer(min(lw.look(s, waits), poll))
		select {
		case <-released:
		case <-lw.kick:
		case <-t.C():
		}
		t.Stop()
	}
}

// look reads the leases of waits and ends the waits whose lease may be
// free (or all of them, on an error). It returns how long until the
// soonest expiry of the leases still held. A round in which every lease is
// held as its wait saw it, by a process whose session lives, reads one row
// (see unchanged); only one in which something may have changed reads the
// leases themselves (a standby of thousands of accounts, looking twice a
// second, spent most of its idle CPU reading rows that had not changed).
func (lw *leaseWaits) look(s *Store, waits []*leaseWait) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), postgresTimeout)
	defer cancel()
	holders := make(map[string]*locator.Lease, len(waits))
	for _, w := range waits {
		holders[w.held.Owner] = &w.held
	}
	ended, err := s.endedSessions(ctx, holders)
	if err == nil && len(ended) == 0 {
		soonest, same, uerr := s.unchanged(ctx, waits)
		if uerr == nil && same {
			return soonest
		}
		err = uerr
	}
	var cur map[string]*locator.Lease
	var now time.Time
	if err == nil {
		cur, now, err = s.waitedLeases(ctx, waits)
	}
	if err == nil {
		ended, err = s.endedSessions(ctx, cur)
	}
	soonest := time.Duration(math.MaxInt64)
	for _, w := range waits {
		l, ok := cur[w.held.Account]
		switch {
		case err != nil:
			lw.finish(w, err)
		case !ok || l.Owner != w.held.Owner || l.Term != w.held.Term || !l.Expires.After(now) || ended[l.Process]:
			lw.finish(w, nil)
		default:
			soonest = min(soonest, l.Expires.Sub(now)+time.Millisecond)
		}
	}
	return soonest
}

// unchanged says whether every lease waits wait on is held as its wait
// saw it (its account, owner and term) and live by the database's clock,
// from one row (how many are, and the soonest expiry among them), and if
// so how long until that expiry.
func (s *Store) unchanged(ctx context.Context, waits []*leaseWait) (time.Duration, bool, error) {
	keys := make(map[string]bool, len(waits))
	for _, w := range waits {
		keys[fmt.Sprintf("%s %s %d", w.held.Account, w.held.Owner, w.held.Term)] = true
	}
	list, err := json.Marshal(slices.Sorted(maps.Keys(keys)))
	if err != nil {
		return 0, false, err
	}
	var n int
	var soonest sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), MIN(expires) FROM leases WHERE `+s.db.inJSONKeys("(account || ' ' || owner || ' ' || term)")+
		` AND expires > `+s.db.leaseNowSQL(), string(list)).Scan(&n, &soonest); err != nil || n != len(keys) {
		return 0, false, err
	}
	expires, err := parseTime(soonest.String)
	if err != nil {
		return 0, false, err
	}
	now, err := s.leaseNow(ctx, s.db)
	if err != nil {
		return 0, false, err
	}
	return expires.Sub(now) + time.Millisecond, true, nil
}

// waitedLeases reads the current leases of the accounts waits wait on, by
// account (one query: the accounts are one parameter, a JSON array), and
// the database's now.
func (s *Store) waitedLeases(ctx context.Context, waits []*leaseWait) (map[string]*locator.Lease, time.Time, error) {
	accounts := map[string]bool{}
	for _, w := range waits {
		accounts[w.held.Account] = true
	}
	list, err := json.Marshal(slices.Sorted(maps.Keys(accounts)))
	if err != nil {
		return nil, time.Time{}, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+leaseColumns+` FROM leases WHERE `+s.db.inJSON("account"), string(list))
	if err != nil {
		return nil, time.Time{}, err
	}
	defer rows.Close()
	out := make(map[string]*locator.Lease, len(accounts))
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, time.Time{}, err
		}
		out[l.Account] = l
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, err
	}
	now, err := s.leaseNow(ctx, s.db)
	return out, now, err
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
