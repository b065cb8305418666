package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/local"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
)

// Ownership's timing, in real time whatever clock the engine runs on
// (a process stalls in real time; tests run the broker's world on virtual
// time). A lease lasts LeaseTTL from each renewal, by the database's
// clock; the owner renews it every RenewEvery. It trusts itself to own
// the account only until the start of its last successful renewal attempt
// plus LeaseTTL less TrustMargin, by its own monotonic clock (the margin
// covers the two clocks' drift over a TTL): past that it sends nothing,
// and it steps down when renewals keep failing. A stopped owner's account
// is free LeaseTTL after its last renewal, so the standby can take it by
// then, and no request of the old one can still be leaving (its trust
// ended TrustMargin before); a dead one's at once, on Postgres, as its
// database session ends (store.Attend). The lease is as short as a
// renewal's round trip allows on a loaded machine: four renewals a TTL,
// so that a renewal late by a whole round still leaves trust, and one
// statement renews every lease of a process (store.RenewLeases), so that
// renewing often costs a desk of thousands of accounts little. (At 2 s,
// renewed every 0.5 s, 10,000 accounts starting on two loaded cores
// starved the renewals of CPU for longer than the 1.5 s of trust, and
// owners stepped down by the thousand.)
const (
	LeaseTTL    = 3 * time.Second
	RenewEvery  = 750 * time.Millisecond
	TrustMargin = 750 * time.Millisecond
	// AcceptBudget is the trust an accept needs left to start: its
	// answer must come back while this owner still owns the account, or
	// the offer's outcome lands on the next owner unannounced. Less than
	// the trust a renewal on time leaves (LeaseTTL - TrustMargin -
	// RenewEvery), so that an accept never waits for one.
	AcceptBudget = time.Second
)

// roleOf is the role of the process holding l: its owner id starts with
// it (see Owner.start).
func roleOf(l locator.Lease) wire.Role {
	r, _, _ := strings.Cut(l.Owner, ":")
	return wire.Role(r)
}

// process is this run's id in the leases it takes: the accounts of one key
// pair are owned by one process at a time (see store.KeyPairHeldError),
// and a process is known by it across its accounts and hosts.
var process = uuid.NewString()

// OwnerConfig says how a process owns an account.
type OwnerConfig struct {
	// Engine is the engine the owner runs (Client, Store, Account and Env
	// set).
	Engine engine.Config
	// DB is the database's path, as followers compare it with theirs.
	DB string
	// BaseURL is the broker address: with the account, what the owner's
	// lock and socket are named for.
	BaseURL string
	// RuntimeDir holds the lock and the socket (see RuntimeDir).
	RuntimeDir string
	Role       wire.Role
	// Network, when set, serves the account API to other hosts too.
	Network *wire.Network
	// Offers, when set, is told of each offer that starts waiting on a
	// person (see Local.NotifyOffers), by every owner this config makes:
	// a daemon that steps down and owns again keeps telling.
	Offers func(account.Question)
	// renewals is the lease heartbeat the owners of this config join (a
	// fleet's one, shared by its accounts); nil: each owner its own.
	renewals *renewals
	// ledgerSyncs, when set, is the gate the ledger syncs of this
	// config's owners pass one at a time per slot (a fleet's, shared by
	// its accounts): the owners a daemon takes over together would
	// otherwise sync hundreds of ledgers at once and crowd their engines'
	// records out of the database's connections. nil: no gate.
	ledgerSyncs chan struct{}
	// owner, when set, is the owner id of the lease the fleet took for
	// this account with its key pair's others (see reserve): the owner
	// takes it on as its own term. Empty: a new id. tookOver says that
	// lease was taken from an owner that went (see takePair): its pacer
	// starts as after any takeover.
	owner    string
	tookOver bool
	// recovery is what the fleet read for the account once it took that
	// lease (see reserve): the engine starts from it when the owner takes
	// that lease on, in the same term; and checks the account on listed,
	// its row of its key pair's list read then (see list;
	// engine.Config.Listed).
	recovery *store.Recovery
	listed   *brokerclient.Account
}

// Owner is the live owner of one account: it holds the account's lease in
// the database and, on SQLite, its machine lock (one owner per account per
// machine; on Postgres the lease alone decides, see Own), runs its engine,
// and serves the account API to other processes on its socket (and, with
// a Network, over TLS to other hosts).
type Owner struct {
	cfg   OwnerConfig
	eng   *engine.Engine
	local *local.Account
	st    *store.Store
	// fenced is st fenced by this owner's term: every write of the owner
	// (its engine's, its pacing row) goes through it.
	fenced *store.Store
	lock   *machineLock
	lease  locator.Lease
	clk    clock.Clock
	log    *slog.Logger
	ln     net.Listener
	api    *wire.Server // the account API it serves
	srv    *http.Server
	net    *http.Server  // serving other hosts (Network), or nil
	lost   chan struct{} // closed when the lease was lost, after lostWhy is set
	// session is closed when this process's database session ends (see
	// store.Attend; nil on SQLite): other processes may then take the
	// account at once, and this owner holds it no longer.
	session <-chan struct{}
	stop    chan struct{}
	// stopped is done when stop is closed: the context of the owner's own
	// background work (a goroutine each relaying stop to a context cost a
	// desk of thousands of accounts a stack per account).
	stopped  context.Context
	stopWork context.CancelFunc
	wg       sync.WaitGroup

	// trustUntil is when this owner stops trusting itself to own the
	// account (unix nanoseconds, real time): see LeaseTTL.
	trustUntil atomic.Int64
	renewals   *renewals // the process's lease heartbeat this owner is on
	trustMu    sync.Mutex
	renewed    chan struct{} // closed at the next successful renewal
	lostWhy    error
	lostOnce   sync.Once

	closeOnce sync.Once
}

// Own makes this process the account's owner: errLocked when another
// process of this machine owns it (dial it), a refusal when the database
// names a live owner of the account at another broker address, and a
// *store.LeaseHeldError when another live process holds its lease (of
// another host, or of this one on Postgres: follow it). On Postgres the
// lease alone decides, without the machine lock: a stopped process
// would hold that lock for ever, and the lease lets its standby take
// over once it lapses. The engine it starts recovers what an earlier
// owner left.
func Own(ctx context.Context, cfg OwnerConfig) (*Owner, error) {
	ec := &cfg.Engine
	if ec.Clock == nil {
		ec.Clock = clock.Real{}
	}
	if ec.Logger == nil {
		ec.Logger = slog.New(slog.DiscardHandler)
	}
	lockPath, sockPath, err := ownerPaths(cfg)
	if err != nil {
		return nil, err
	}
	var lock *machineLock
	if !ec.Store.Postgres() {
		if lock, err = tryLock(lockPath); err != nil {
			return nil, err
		}
	}
	o := &Owner{cfg: cfg, st: ec.Store, lock: lock, clk: ec.Clock, log: ec.Logger, lost: make(chan struct{}), stop: make(chan struct{}),
		renewals: cfg.renewals}
	o.stopped, o.stopWork = context.WithCancel(context.Background())
	if o.renewals == nil {
		o.renewals = newRenewals()
	}
	if err := o.start(ctx, sockPath); err != nil {
		o.stopWork()
		lock.unlock()
		return nil, err
	}
	return o, nil
}

// ownerPaths are the machine lock and the socket of an owner of cfg's
// account. On Postgres owners of the account follow one another on this
// host without a lock: each has a socket of its own, named in its lease,
// so one that stepped down never removes its successor's.
func ownerPaths(cfg OwnerConfig) (lockPath, sockPath string, err error) {
	lockPath, sockPath, err = paths(cfg.RuntimeDir, cfg.Engine.Account, cfg.BaseURL)
	if err == nil && cfg.Engine.Store.Postgres() {
		sockPath = strings.TrimSuffix(sockPath, ".sock") + fmt.Sprintf("-%x.sock", os.Getpid())
	}
	return lockPath, sockPath, err
}

// servingLease is the lease of cfg's account for its owner in this
// process serving on sock, under owner (empty: a new id of cfg's role):
// what a fleet's take writes for the owner it reserves it for (reserve),
// and what an owner takes (Owner.start), which takes on a reserved lease
// only as written so (renewals.takeOn).
func servingLease(cfg OwnerConfig, owner, sock string) locator.Lease {
	host, _ := os.Hostname()
	if owner == "" {
		owner = string(cfg.Role) + ":" + uuid.NewString()
	}
	return locator.Lease{Account: cfg.Engine.Account, Owner: owner, PID: os.Getpid(), Host: host, Endpoint: sock,
		PacingKey: cfg.Engine.Client.PacingKey(), Process: process}
}

func (o *Owner) start(ctx context.Context, sockPath string) error {
	ec := o.cfg.Engine
	want := servingLease(o.cfg, o.cfg.owner, sockPath)
	var remote net.Listener
	if n := o.cfg.Network; n != nil {
		var err error
		if remote, want.Pin, err = n.Listen(ec.Account); err != nil {
			return err
		}
		want.Address = n.Address()
	}
	// The process's database session before the lease: should it end
	// meanwhile, this owner steps down at once (see Held).
	session, err := o.st.Attend(ctx, process)
	if err != nil {
		if remote != nil {
			remote.Close()
		}
		return err
	}
	// A lease the fleet took for this owner (see reserve) is taken on
	// from its heartbeat, trusted from its last renewal; any other is
	// acquired, and trusted from now.
	attempt := time.Now()
	lease, trusted, takenOn := o.renewals.takeOn(want)
	takenOver := false
	if takenOn {
		attempt = trusted
	} else {
		lease, takenOver, err = o.acquire(ctx, want)
	}
	takenOver = takenOver || o.cfg.tookOver
	if err != nil {
		if remote != nil {
			remote.Close()
		}
		return err
	}
	o.lease, o.session = lease, session
	rec := o.cfg.recovery
	if lease.Owner == o.cfg.owner {
		ec.Listed = o.cfg.listed
	} else {
		rec = nil // not the term it was read in
	}
	o.trust(attempt)
	// The lease is kept from now on, whatever the start below waits for:
	// its reads queue on the key pair's pacer behind the other accounts'
	// (see brokerclient's priorities), and trust must not run out meanwhile.
	o.renewals.join(o)
	if err := o.open(ctx, ec, sockPath, want.Pin, takenOver, rec); err != nil {
		close(o.stop)
		o.wg.Wait()
		o.renewals.leave(o)
		o.release()
		return err
	}
	o.serve(remote)
	o.noteChecked(ctx, rec)
	if o.cfg.Role == wire.RoleDaemon {
		o.wg.Add(1)
		go o.syncLedger()
	}
	if ec.Client.Partner.Signed() {
		o.wg.Add(1)
		go o.keepRenewed()
	}
	return nil
}

// noteChecked records the check of the account's detail its engine
// passed at its start, if it made one, for the owner that takes over
// from this one (see open); a check the store already holds (rec, a
// fleet's start) is not written again, a statement an account at each
// start.
func (o *Owner) noteChecked(ctx context.Context, rec *store.Recovery) {
	ec := o.cfg.Engine
	checked := store.EnvCheck{PacingKey: ec.Client.PacingKey(), Env: string(ec.Env)}
	if o.eng.Detail() == nil || (rec != nil && rec.Checked == checked) {
		return
	}
	if err := o.st.NoteEnvChecked(ctx, o.lease.Account, checked.PacingKey, checked.Env); err != nil {
		o.log.Warn("the account's check not recorded: a takeover will read its detail again", "account", o.lease.Account, "err", err)
	}
}

// open starts what the owner serves once it holds the lease: the pacer
// from where the key pair's last owner left it, the socket, the engine
// (from rec, what the fleet read for the account in this term; nil: read
// here on a takeover, else by the engine) and the account API over them.
// On an error nothing of it is left open.
func (o *Owner) open(ctx context.Context, ec engine.Config, sockPath, pin string, takenOver bool, rec *store.Recovery) error {
	lease := o.lease
	// Every write of this owner carries its term, and no broker request
	// leaves without trust in it (see LeaseTTL).
	o.fenced = o.st.Fenced(store.Fence{Account: lease.Account, Owner: lease.Owner, Term: lease.Term})
	ec.Store = o.fenced
	var gate brokerclient.Gate
	if o.st.Postgres() {
		gate = o.maySend
		ctx = brokerclient.WithGate(ctx, gate)
	}
	// The broker's buckets are per key pair and may still hold the requests
	// of the previous owner of this key pair: start the pacer as if emptied
	// when that owner sent its last, or now when it died (it may have sent
	// until then). A takeover goes on from the check of the account's
	// detail that owner passed (see engine.Config.EnvChecked): that bucket
	// would hold the start of the key pair's second account a second.
	var last time.Time
	var err error
	if takenOver {
		last = o.clk.Now()
		if rec == nil {
			recs, err := o.st.Recoveries(ctx, []string{lease.Account}, engine.RecoverySince(ec, last))
			if err != nil {
				return err
			}
			rec = recs[lease.Account]
		}
		ec.EnvChecked = ec.Env != "" && rec.Checked == store.EnvCheck{PacingKey: ec.Client.PacingKey(), Env: string(ec.Env)}
	} else if last, err = o.st.LastRequest(ctx, ec.Client.PacingKey()); err != nil {
		return err
	}
	ec.Recovery = rec
	if !last.IsZero() {
		ec.Client.PaceAfter(last)
	}
	// The machine lock (or on Postgres the lease) is ours: a socket there
	// was left by a dead or stopped owner.
	os.Remove(sockPath)
	ln, err := net.Listen("unix", sockPath)
	if err != nil {
		return fmt.Errorf("service: listen on %s: %w", sockPath, err)
	}
	o.ln = wire.PeerListener{Listener: ln}
	if err := os.Chmod(sockPath, 0o600); err != nil {
		o.ln.Close()
		return err
	}
	if o.eng, err = engine.New(ec); err != nil {
		o.ln.Close()
		return err
	}
	if err := o.eng.Start(ctx); err != nil {
		o.ln.Close()
		return err
	}
	if o.local, err = local.New(context.WithoutCancel(ctx), local.Config{Engine: o.eng, Store: ec.Store, Client: ec.Client, Clock: o.clk, Logger: o.log,
		Account: ec.Account, Env: ec.Env, Lease: o.Lease, Held: o.Held, Gate: gate}); err != nil {
		o.eng.Close()
		o.ln.Close()
		return err
	}
	o.local.NotifyOffers(o.cfg.Offers)
	o.api = wire.NewServer(o.local, o.hello, ec.Client, pin)
	return nil
}

// serve serves the account API on the owner's socket, and to other hosts
// on remote (nil: none).
func (o *Owner) serve(remote net.Listener) {
	routes := o.api.Routes()
	o.srv = &http.Server{Handler: routes, ReadHeaderTimeout: 10 * time.Second}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		if err := o.srv.Serve(o.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("owner socket stopped", "err", err)
		}
	}()
	if remote != nil {
		// A request the server cannot read is not the owner's error:
		// logged at debug level (handshakes and tokens are the
		// Network's, which admits only connections that proved the
		// token or carry an admitted bearer, which the routes check
		// again on each request: wire.ConnContext tells them which).
		o.net = &http.Server{Handler: routes, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: o.cfg.Network.IdleWait(),
			ErrorLog: slog.NewLogLogger(o.log.Handler(), slog.LevelDebug), ConnContext: wire.ConnContext}
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			if err := o.net.Serve(remote); err != nil && !errors.Is(err, http.ErrServerClosed) {
				o.log.Error("owner's network listener stopped", "err", err)
			}
		}()
	}
}

// keepRenewed renews partner tokens on their own schedule while the owner
// lives: an owner may idle for longer than a refresh token lives, and no
// call should wait for a renewal.
func (o *Owner) keepRenewed() {
	defer o.wg.Done()
	ctx := o.stopped
	if err := o.cfg.Engine.Client.Partner.KeepRenewed(ctx); err != nil && ctx.Err() == nil {
		o.log.Error("partner token renewal stopped; run 'locator login --partner' again", "account", o.lease.Account, "err", err)
	}
}

// helloWait bounds the hello that tells a live owner of this host from a
// dead (or stopped) one: a live one answers in milliseconds.
const helloWait = 2 * time.Second

// LedgerSyncEvery is how often a daemon owner syncs today's cash ledger
// into its database: what reads the store alone (the dashboard's fees
// panel, its spend and recovery) is then never more than this behind the
// broker's ledger, with no command run. A sync reads the broker once
// (the ledger); with the quiet account's history read every 2 minutes
// (poller.DefaultCadence.Quiet), an account with nothing open reads the
// broker three times in 4 minutes. A locate's fee posts later than its
// fill anyway.
const LedgerSyncEvery = 4 * time.Minute

// syncLedger syncs today's ledger (local.Account.SyncLedger) at start and
// every LedgerSyncEvery while the owner lives. It reconciles nothing:
// `locator fees` and the reconcile job do, through the account API (the
// Fees operation), and the dashboard from the store.
func (o *Owner) syncLedger() {
	defer o.wg.Done()
	ctx := o.stopped
	for {
		if o.cfg.ledgerSyncs != nil {
			select {
			case o.cfg.ledgerSyncs <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
		if _, err := o.local.SyncLedger(ctx); err != nil && ctx.Err() == nil {
			o.log.Warn("ledger not synced", "account", o.lease.Account, "err", err)
		}
		if o.cfg.ledgerSyncs != nil {
			<-o.cfg.ledgerSyncs
		}
		if clock.Sleep(ctx, o.clk, LedgerSyncEvery) != nil {
			return
		}
	}
}

func (o *Owner) hello() wire.Hello {
	return wire.Hello{Account: o.lease.Account, BaseURL: o.cfg.BaseURL, DB: store.Redact(o.cfg.DB), Role: o.cfg.Role, Lease: o.lease}
}

// Local is the account API on this owner's engine.
func (o *Owner) Local() *local.Account { return o.local }

// Idle reports whether the owner holds nothing that real time would move
// on before a clock did: no event in its engine's loop (engine.Engine.Idle)
// and no question waiting on a person (a person takes no virtual time to
// answer). A driver of virtual time (the tests, the generated days) moves
// the clock only then.
func (o *Owner) Idle() bool { return o.local.Asking() == 0 && o.eng.Idle() }

// Lease is the lease this owner holds.
func (o *Owner) Lease() locator.Lease { return o.lease }

// Held reports whether this owner still holds its lease: it was neither
// lost to another process nor given up with Close.
func (o *Owner) Held() bool {
	select {
	case <-o.lost:
		return false
	case <-o.session:
		return false
	case <-o.stop:
		return false
	default:
		return true
	}
}

// Wait returns why this owner can no longer drive the account: its lease
// was lost, or its engine stopped on an error; nil once ctx ends or the
// owner is closed. It waits in its caller's goroutine: a fleet's handle
// waits on each of its owners for as long as the owner lives.
func (o *Owner) Wait(ctx context.Context) error {
	select {
	case <-o.lost:
		return o.lostWhy
	case <-o.session:
		return fmt.Errorf("%w: %w", ErrSteppedDown, o.sessionEnded())
	case err := <-o.eng.Err():
		return fmt.Errorf("account %s: the engine stopped: %w", o.lease.Account, err)
	case <-o.stop:
	case <-ctx.Done():
	}
	return nil
}

// Close stops taking requests and the engine, and releases the lease and
// the machine lock; the workflows stay in the store for the next owner.
// Closing again does nothing.
func (o *Owner) Close() {
	o.closeOnce.Do(func() {
		close(o.stop)
		o.stopWork()
		// The engine first: a follower's stream cut below is the owner
		// going, not the asker, and must decline nothing.
		o.eng.Close()
		o.srv.Close()
		if o.net != nil {
			o.net.Close()
		}
		o.wg.Wait()
		o.renewals.leave(o)
		o.release()
	})
}

// release records the pacing, gives the lease up, removes the socket and
// drops the machine lock, in that order: the next owner finds all of it
// done when it gets the lock.
func (o *Owner) release() {
	client := o.cfg.Engine.Client
	if last := client.LastRequest(); !last.IsZero() && o.fenced != nil {
		// Under this owner's term: one that stepped down leaves the row
		// to the owner that followed it.
		switch err := o.fenced.SetLastRequest(context.Background(), client.PacingKey(), last); {
		case errors.Is(err, store.ErrLeaseLost):
			o.log.Info("last request time not recorded: another owner holds the account", "err", err)
		case err != nil:
			o.log.Warn("last request time not recorded; the next owner may draw a 429", "err", err)
		}
	}
	if o.lease.Owner != "" {
		if err := o.st.ReleaseLease(context.Background(), o.lease.Account, o.lease.Owner, o.lease.Term); err != nil {
			o.log.Warn("lease not released; it lapses by itself", "err", err)
		}
		os.Remove(o.lease.Endpoint)
	}
	o.lock.unlock()
}
