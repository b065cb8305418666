package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locatorhq/locator"
)

// A process's session. On Postgres each process that takes leases holds,
// for as long as it lives, a database session of its own (a connection
// outside the store's pools) with a session-level advisory lock named for
// its process id (locator.Lease.Process), and says so in process_sessions.
// The server ends the session when the process dies (SIGKILL, a crash:
// its socket closes) and the lock goes with it, so another process tells
// a dead owner from a live one at once (Session) instead of waiting for
// its leases to lapse. A stopped process (SIGSTOP, a frozen VM) keeps its
// session: only its leases' time frees its accounts, and by then its
// trust in them has run out.
//
// The lock is not ownership (the lease row is, and every write is fenced
// by its term): it only says that the process lives. Held on a pooled
// connection it could be dropped or leaked as the pool recycles it; held
// here, the process reads the connection all the time, so it learns at
// once that its session ended (the channel Attend returns closes) and its
// owners step down before another process can take their accounts on
// that ground.

// SessionState is what the database knows of a process's session.
type SessionState int

const (
	// SessionUnknown: the process never held one (an older locator, a
	// SQLite file, a lease with no process).
	SessionUnknown SessionState = iota
	// SessionLive: it holds its session (it runs, or is stopped).
	SessionLive
	// SessionEnded: its session ended: the process is gone.
	SessionEnded
)

// sessionLock is the advisory lock the session of the process named by
// the SQL expression process holds.
func sessionLock(process string) string {
	return `hashtextextended('locator process ' || ` + process + `, 0)`
}

// Attend makes sure process holds its session (see above) and returns a
// channel closed when that session ends; on SQLite, or for no process,
// nil (it never ends). The store's lease takes call it, so a lease is
// never taken by a process whose death would go unseen.
func (s *Store) Attend(ctx context.Context, process string) (<-chan struct{}, error) {
	if !s.Postgres() || process == "" {
		return nil, nil
	}
	return attend(ctx, s.db, process)
}

// Session says whether process holds its session, or held one that
// ended (see SessionState).
func (s *Store) Session(ctx context.Context, process string) (SessionState, error) {
	if !s.Postgres() || process == "" {
		return SessionUnknown, nil
	}
	state := SessionUnknown
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM process_sessions WHERE process = ?`, process).Scan(&n); err != nil || n == 0 {
			return err
		}
		// The row is written once the lock is held: a shared lock that
		// can be had now means no session holds the process's any more.
		// It is the transaction's, given back as it ends.
		var free bool
		if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock_shared(`+sessionLock("?")+`)`, process).Scan(&free); err != nil {
			return err
		}
		state = SessionLive
		if free {
			state = SessionEnded
		}
		return nil
	})
	return state, err
}

// endedSessions are the processes, among the holders of leases, whose
// session ended (see Session), in one query; on SQLite none.
func (s *Store) endedSessions(ctx context.Context, leases map[string]*locator.Lease) (map[string]bool, error) {
	if !s.Postgres() {
		return nil, nil
	}
	var ended map[string]bool
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		ended, err = endedIn(ctx, tx, leases)
		return err
	})
	return ended, err
}

// endedIn is endedSessions in tx: the shared locks it takes are held
// until tx ends, so a process found gone cannot take its session again
// (it lived on, and its connection had ended) before tx's writes commit.
func endedIn(ctx context.Context, tx *Tx, leases map[string]*locator.Lease) (map[string]bool, error) {
	var processes []string
	for _, l := range leases {
		if l.Process != "" && !slices.Contains(processes, l.Process) {
			processes = append(processes, l.Process)
		}
	}
	if tx.c.dialect != "postgres" || len(processes) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(processes)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT process FROM process_sessions WHERE `+tx.c.inJSON("process")+
		` AND pg_try_advisory_xact_lock_shared(`+sessionLock("process")+`)`, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ended := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		ended[p] = true
	}
	return ended, rows.Err()
}

// attended are the sessions this process's stores hold, by database
// (its URL) and process id: every store of the process on a database
// shares one (the lock is the process's: a second session could not take
// it), kept while any of them is open.
var attended = struct {
	mu   sync.Mutex
	held map[sessionKey]*session
}{held: map[sessionKey]*session{}}

type sessionKey struct{ dsn, process string }

// session is one process's: the connection, the stores that use it, and
// ended, closed when it ends.
type session struct {
	pc     *pgx.Conn
	users  map[*conn]bool
	ended  chan struct{}
	cancel context.CancelFunc
	done   chan struct{} // closed when watch returned
}

// attend returns the live session of process on c's database, opening
// one when it has none (or its last one ended), and counts c among its
// users.
func attend(ctx context.Context, c *conn, process string) (<-chan struct{}, error) {
	attended.mu.Lock()
	defer attended.mu.Unlock()
	k := sessionKey{c.dsn, process}
	if se := attended.held[k]; se != nil {
		select {
		case <-se.ended:
		default:
			se.users[c] = true
			return se.ended, nil
		}
	}
	pc, err := pgx.Connect(ctx, c.dsn)
	if err != nil {
		return nil, fmt.Errorf("store: the process's own database session: %w", err)
	}
	var got bool
	if err := pc.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+sessionLock("$1")+`)`, process).Scan(&got); err != nil || !got {
		pc.Close(context.Background())
		if err == nil {
			// The server has not yet ended this process's last session.
			err = errors.New("its lock is still held by a session that ended here")
		}
		return nil, fmt.Errorf("store: the process's own database session: %w", err)
	}
	if _, err := pc.Exec(ctx, c.bind(`INSERT INTO process_sessions (process, since) VALUES (?, ?) ON CONFLICT (process) DO NOTHING`),
		process, formatTime(time.Now())); err != nil {
		pc.Close(context.Background())
		return nil, fmt.Errorf("store: the process's own database session: %w", err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	se := &session{pc: pc, users: map[*conn]bool{c: true}, ended: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	attended.held[k] = se
	go se.watch(wctx)
	return se.ended, nil
}

// watch reads the session's connection until it fails (the session
// ended) or the last store using it closes: the connection is idle, and a
// read is what learns at once that the server or the network ended it.
func (se *session) watch(ctx context.Context) {
	defer close(se.done)
	for {
		if _, err := se.pc.WaitForNotification(ctx); err != nil {
			break
		}
	}
	close(se.ended)
	se.pc.Close(context.Background())
}

// leave takes c off the sessions it uses; a session left with no store
// ends, its process's record taken off first: the process leaves the
// database, having given its leases up, and the table keeps no row of it
// (a process that dies keeps its row, which says it is gone).
func leave(c *conn) {
	attended.mu.Lock()
	defer attended.mu.Unlock()
	for k, se := range attended.held {
		if !se.users[c] {
			continue
		}
		delete(se.users, c)
		if len(se.users) > 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), postgresTimeout)
		c.ExecContext(ctx, `DELETE FROM process_sessions WHERE process = ?`, k.process)
		cancel()
		se.cancel()
		<-se.done
		delete(attended.held, k)
	}
}
