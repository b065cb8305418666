package service

import (
	"context"
	"sync"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
)

// A fleet takes the leases of whole key pairs at once: the pairs it opens
// at its start (openPair), and those its standbys find free, in passes
// (takeovers).

// reserve takes, in one statement, the leases of those of handles'
// accounts (whole key pairs, of one store) that are free, lapsed or held
// by a process that died (store.AcquireLeases: a key pair another live
// process holds is left to it), each under the owner id its handle then
// owns it with, keeping the term and fenced as any other take: a process
// owns all of a key pair's accounts at once. over says they are taken
// over from an owner that went (see takePair). It returns the terms
// taken, and why each other account was not (see AcquireLeases; none
// when the take failed); an account not taken is opened as a single take
// would. What the accounts taken start from is read for all of them at
// once (store.Recoveries: after the take, so that an earlier owner can
// write nothing of it any more), not by each engine on its own.
func reserve(ctx context.Context, handles []*Handle, over bool) (map[*Handle]store.Term, map[*Handle]error) {
	var leases []locator.Lease
	byAccount := map[string]*Handle{}
	for _, h := range handles {
		_, sock, err := ownerPaths(h.cfg.OwnerConfig)
		if err != nil {
			continue // Own says why
		}
		byAccount[h.cfg.Engine.Account] = h
		leases = append(leases, servingLease(h.cfg.OwnerConfig, "", sock))
	}
	out, refusals := map[*Handle]store.Term{}, map[*Handle]error{}
	if len(leases) < 2 {
		return out, refusals // one account: the single take
	}
	attempt := time.Now()
	taken, refused, err := handles[0].cfg.Engine.Store.AcquireLeases(ctx, leases, LeaseTTL)
	if err != nil {
		if ctx.Err() == nil { // not the fleet closing
			handles[0].cfg.Engine.Logger.Warn("cannot take the accounts' leases at once; taking them one by one", "accounts", len(leases), "err", err)
		}
		return out, refusals
	}
	for account, err := range refused {
		refusals[byAccount[account]] = err
	}
	// Kept until each account's owner takes its lease on (see
	// renewals.reserve).
	handles[0].cfg.renewals.reserve(handles[0].cfg.Engine.Store, taken, attempt)
	accounts := make([]string, len(taken))
	for i, l := range taken {
		accounts[i] = l.Account
	}
	ec := handles[0].cfg.Engine
	recs, err := ec.Store.Recoveries(ctx, accounts, engine.RecoverySince(ec, ec.Clock.Now()))
	if err != nil && ctx.Err() == nil {
		ec.Logger.Warn("cannot read what the accounts start from at once; each reads its own", "accounts", len(accounts), "err", err)
	}
	for _, l := range taken {
		h := byAccount[l.Account]
		h.mu.Lock()
		h.reserved, h.reservedOver, h.recovery = l.Owner, over, recs[l.Account]
		h.mu.Unlock()
		out[h] = store.TermOf(l)
	}
	return out, refusals
}

// keyPair is a fleet's handles of one key pair (and store), and the
// fleet's takeovers, which take its free accounts (see takePair).
type keyPair struct {
	handles []*Handle
	takes   *takeovers
}

// takePair has the accounts of h's key pair that no handle of the fleet
// owns, has reserved or leaves to another daemon taken, once h stood by
// and its lease may be free: it lapsed, was released, or its process's
// database session ended. A dead process's key pair so moves whole,
// rather than account by account as each handle took its own lease over,
// and each handle then owns its account under the term taken for it. It
// returns once the fleet's next takeover, which takes h's key pair with
// every other one found free meanwhile, is done (see takeovers), holding
// one of the fleet's takeoverOpens places for the open that follows,
// which opened gives back; nil when another daemon took h's key pair in
// the race, and h stands by for it (see takeover.run). The accounts taken open from what reserve read
// for all of them: each owner takes its lease on in one statement
// (store.TakeOnLease), and its engine, with nothing to recover, starts
// without a broker read (the dead owner may have emptied its key pair's
// buckets: see engine.Config.EnvChecked and Engine.Start). Outside a
// fleet, nothing.
func (h *Handle) takePair(ctx context.Context) (opened func()) {
	if h.pair == nil {
		return func() {}
	}
	t := h.pair.takes
	t.take(ctx, h.pair)
	if h.watching() != nil {
		return nil // left to the daemon that took it (see takeover.run)
	}
	select {
	case t.opening <- struct{}{}:
		return func() { <-t.opening }
	case <-ctx.Done():
		return func() {}
	}
}

// takeovers are a fleet's takes of the key pairs its standbys found
// free: one at a time, each of every key pair found free while the one
// before ran, in statements of takeoverBatch accounts. A process that
// died frees its thousands of accounts at once: taken one key pair per
// transaction, each standby's take queued for the database's few
// connections behind the others' and behind the accounts' start-up
// reads, and the last was owned seconds later (and, at 10,000 accounts
// on four processes, the statements timed out and were tried again);
// one pass takes them all within a few statements.
type takeovers struct {
	fleet *Fleet
	// opening holds takeoverOpens of the accounts taken over opening at
	// once (see takePair).
	opening chan struct{}
	mu      sync.Mutex
	next    *takeover // gathering, taken once the one running is done
	running bool
	wg      sync.WaitGroup // the running passes' goroutine
}

// takeover is one pass of takeovers: its key pairs, and done, closed once
// they were taken (or could not be).
type takeover struct {
	pairs map[*keyPair]bool
	done  chan struct{}
}

// takeoverOpens is how many accounts a fleet opens at once after taking
// them over (their leases are kept meanwhile, renewals.reserve): with no
// broker read to wait for, a dead process's 2,500 accounts opened all at
// once on three processes loaded the database until their own renewals
// ran late, and 263 of their own leases went; 64 at a time, 3
// (docs/benchmarks.md).
const takeoverOpens = 64

// takeoverBatch is the most accounts one statement of a takeover takes
// (whole key pairs), so that each transaction, which holds its key
// pairs' locks until it ends, stays short.
const takeoverBatch = 256

// take has p taken in the next pass and waits for it.
func (t *takeovers) take(ctx context.Context, p *keyPair) {
	t.mu.Lock()
	if t.next == nil {
		t.next = &takeover{pairs: map[*keyPair]bool{}, done: make(chan struct{})}
	}
	next := t.next
	next.pairs[p] = true
	if !t.running {
		t.running = true
		t.wg.Go(func() { t.run(ctx) }) // the fleet's (see Wait)
	}
	t.mu.Unlock()
	select {
	case <-next.done:
	case <-ctx.Done():
	}
}

// run runs the passes gathered, one after another, until none is left.
func (t *takeovers) run(ctx context.Context) {
	for {
		t.mu.Lock()
		pass := t.next
		t.next = nil
		if pass == nil {
			t.running = false
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
		pass.run(ctx, t.fleet)
		close(pass.done)
	}
}

// run takes the free accounts of the pass's key pairs (see takePair), by
// store, takeoverBatch accounts a statement at most (see reserve). An
// account another daemon took first (each of a dead process's standbys
// races for it) stands by for that daemon's lease at once (see
// Fleet.standByHolders), as a claim would have it after reading the lease
// and its holder's session: the 2,500 accounts of a process killed at
// 10,000 went to one of three survivors each, and the other two made
// those two reads for each, holding the places of the winner's opens.
func (pass *takeover) run(ctx context.Context, f *Fleet) {
	byStore := map[*store.Store][]*Handle{}
	var stores []*store.Store
	for p := range pass.pairs {
		var free []*Handle
		for _, x := range p.handles {
			x.mu.Lock()
			if x.owner == nil && x.reserved == "" && x.yielded == nil && !x.closed {
				free = append(free, x)
			}
			x.mu.Unlock()
		}
		if len(free) == 0 {
			continue
		}
		st := free[0].cfg.Engine.Store
		if byStore[st] == nil {
			stores = append(stores, st)
		}
		if n := len(byStore[st]); n > 0 && n+len(free) > takeoverBatch {
			pass.take(ctx, f, byStore[st])
			byStore[st] = nil
		}
		byStore[st] = append(byStore[st], free...)
	}
	for _, st := range stores {
		if len(byStore[st]) > 0 {
			pass.take(ctx, f, byStore[st])
		}
	}
}

// take is one statement of run: handles' accounts taken, and those
// another daemon holds stood by for.
func (pass *takeover) take(ctx context.Context, f *Fleet, handles []*Handle) {
	_, refused := reserve(ctx, handles, true)
	f.standByHolders(ctx, handles, refused)
}
