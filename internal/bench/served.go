package bench

// What a fleet run waits on: the accounts owned by the serve processes,
// and each owner answering on its socket (after the start, and after
// each failover's signal).

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
)

// awaitOwned waits, within bound, until n accounts have a live owner
// among procs and each of those owners answers on its account's socket
// (awaitLeased, then awaitServed).
func awaitOwned(ctx context.Context, st *store.Store, procs []*FleetProcess, n int, bound, poll time.Duration) error {
	deadline := time.Now().Add(bound)
	if err := awaitLeased(ctx, st, procs, n, deadline, poll); err != nil {
		return err
	}
	return awaitServed(ctx, st, procs, nil, deadline, poll)
}

// awaitLeased polls the database every poll until n accounts have a live
// lease held by one of procs, or the deadline passes.
func awaitLeased(ctx context.Context, st *store.Store, procs []*FleetProcess, n int, deadline time.Time, poll time.Duration) error {
	for {
		owned, err := st.LiveLeasesByPID(ctx)
		if err != nil {
			return err
		}
		total := 0
		for _, p := range procs {
			total += owned[p.PID]
		}
		if total >= n {
			return nil
		}
		for _, p := range procs {
			if p.cmd.ProcessState != nil {
				return fmt.Errorf("serve process %d ended: %v", p.PID, p.cmd.ProcessState)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d accounts owned by the deadline", total, n)
		}
		if err := clock.Sleep(ctx, clock.Real{}, poll); err != nil {
			return err
		}
	}
}

// awaitServed waits, until deadline, for the owner of each account that
// procs own to answer a hello on the socket its lease names, as the
// account's followers reach it: a lease is taken before its owner opens
// (a fleet takes a key pair's leases at once, a takeover's thousands
// before any of them opens), and a lease counted owned whose owner does
// not answer yet serves nobody. Only the accounts of only are asked (nil:
// every one procs own as it begins): after a failover, those that moved,
// not the thousands the other processes kept serving (at 10,000
// accounts, a round of hellos to all of them took 8 s of the 2 cores the
// takeover had). servedAtOnce askers each take the next account not
// answered yet and ask its owner, an account whose owner did not answer
// going to the back of the line, no sooner than poll later; the leases
// are read again every leasesEvery, in case one moved (every poll, they
// were a read of every lease 20 times a second on the database the
// failover measured loads). Asked in rounds, each waiting for its slowest
// hello and asking every account again, the failover's last owners were
// seen answering two seconds after they did.
func awaitServed(ctx context.Context, st *store.Store, procs []*FleetProcess, only map[string]bool, deadline time.Time, poll time.Duration) error {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	w := &servedWait{procs: procs, leases: map[string]locator.Lease{}}
	if err := w.read(ctx, st); err != nil {
		return err
	}
	var line []string
	for account := range w.leases {
		if only == nil || only[account] {
			line = append(line, account)
		}
	}
	for account := range only {
		if _, ok := w.leases[account]; !ok {
			line = append(line, account) // not owned by procs yet
		}
	}
	if len(line) == 0 {
		return nil
	}
	queue := make(chan string, len(line))
	for _, account := range line {
		queue <- account
	}
	left := int64(len(line))
	done := make(chan struct{})
	var answered atomic.Int64
	var wg sync.WaitGroup
	for range min(servedAtOnce, len(line)) {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-done:
					return
				case account := <-queue:
					if l, ok := w.lease(account); ok {
						if h, err := wire.HelloAt(ctx, l.Endpoint, helloWait); err == nil && h.Account == l.Account {
							if answered.Add(1) == left {
								close(done)
							}
							continue
						}
					}
					time.AfterFunc(poll, func() { queue <- account })
				}
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			if answered.Load() == left {
				return nil
			}
			return fmt.Errorf("%d accounts owned whose owner does not answer on its socket", left-answered.Load())
		case <-time.After(leasesEvery):
			if err := w.read(ctx, st); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

// servedWait is what awaitServed's askers share: the live leases of the
// accounts procs own, as last read.
type servedWait struct {
	procs  []*FleetProcess
	mu     sync.Mutex
	leases map[string]locator.Lease
}

// read reads the leases again.
func (w *servedWait) read(ctx context.Context, st *store.Store) error {
	owned, err := ownedBy(ctx, st)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.leases)
	for _, p := range w.procs {
		for _, l := range owned[p.PID] {
			w.leases[l.Account] = l
		}
	}
	return nil
}

// lease is account's live lease held by one of procs, as last read.
func (w *servedWait) lease(account string) (locator.Lease, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, ok := w.leases[account]
	return l, ok
}

// servedAtOnce is how many owners awaitServed asks at once, and
// helloWait how long it waits for each: an owner that listens but is
// still opening answers once it serves. leasesEvery is how often it reads
// the leases again.
const (
	servedAtOnce = 64
	helloWait    = 2 * time.Second
	leasesEvery  = time.Second
)

// ownedBy is the live leases by owning pid.
func ownedBy(ctx context.Context, st *store.Store) (map[int][]locator.Lease, error) {
	ls, err := st.Leases(ctx)
	if err != nil {
		return nil, err
	}
	now, err := st.LeaseNow(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int][]locator.Lease{}
	for _, l := range ls {
		if l.Expires.After(now) {
			out[l.PID] = append(out[l.PID], l)
		}
	}
	return out, nil
}
