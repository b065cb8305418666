package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	"github.com/locatorhq/locator/market"
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

// acquire takes the account's lease in the database. A lease held by a
// process of this host that does not answer is a dead owner's (or a
// stopped one's, whose trust in its lease is running out): taken over at
// once. One that answers serves the account at another broker address
// (refused), or, on Postgres, is the owner to follow (its
// *store.LeaseHeldError is returned).
func (o *Owner) acquire(ctx context.Context, want locator.Lease) (locator.Lease, bool, error) {
	if o.cfg.owner != "" {
		// The lease the fleet took for it (see reserve), live and this
		// process's, with what this owner serves at to write (another
		// host's address; else renewals.takeOn took it on): taken on in
		// one statement. One that lapsed or moved meanwhile is taken as
		// any other.
		lease, err := o.st.TakeOnLease(ctx, want, LeaseTTL)
		if !errors.Is(err, store.ErrLeaseLost) {
			return lease, false, err
		}
	}
	cur, err := o.st.LiveLease(ctx, want.Account)
	if errors.Is(err, store.ErrNotFound) {
		if err := o.leaveToStandby(ctx); err != nil {
			return locator.Lease{}, false, err
		}
	}
	lease := want
	if err == nil && cur.Owner != want.Owner {
		// Another owner's live lease, which AcquireLease would refuse
		// naming it, in a transaction of its own (for each of the
		// thousands of accounts a desk's daemons stand by for).
		err = &store.LeaseHeldError{Holder: *cur}
	} else {
		lease, err = o.st.AcquireLease(ctx, want, LeaseTTL)
	}
	if errors.Is(err, store.ErrKeyPairHeld) {
		// A daemon that lists the account may have announced itself and
		// taken its key pair's accounts since leaveToStandby looked (a
		// command started with the serve): the command waits for it, as
		// it would have a moment later, rather than being refused.
		if serr := o.leaveToStandby(ctx); serr != nil {
			return locator.Lease{}, false, serr
		}
		return lease, false, err
	}
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		return lease, false, err
	}
	return o.fromHolder(ctx, want, held)
}

// fromHolder is acquire's outcome for an account whose lease another
// owner holds live (held): taken over when that owner is gone, else held
// returned (the owner to follow), or a refusal.
func (o *Owner) fromHolder(ctx context.Context, want locator.Lease, held *store.LeaseHeldError) (locator.Lease, bool, error) {
	// The holder's database session says at once whether its process
	// lives, on any host (a process stopped keeps it: its lease's time
	// frees the account then, by which its trust has run out).
	session, serr := o.st.Session(ctx, held.Holder.Process)
	switch {
	case serr == nil && session == store.SessionEnded:
		return o.takeOver(ctx, want, held.Holder)
	case serr == nil && session == store.SessionLive:
		// The owner to follow (following it checks what it serves): a
		// stopped one is not waited for here (its hello never comes).
		return want, false, held
	}
	if held.Holder.Host != want.Host || held.Holder.Endpoint == "" || checkSocketPath(o.cfg.RuntimeDir, held.Holder.Endpoint) != nil {
		// A socket outside the runtime folder is never dialled nor
		// removed: following the lease then says why.
		return want, false, held
	}
	if hello, herr := wire.HelloAt(ctx, held.Holder.Endpoint, helloWait); herr == nil {
		if o.st.Postgres() && hello.BaseURL == o.cfg.BaseURL {
			return want, false, held
		}
		return want, false, account.Errorf(account.KindRefused, fmt.Sprintf("%s at broker address %s; this process uses %s: one owner per account", held.Holder, hello.BaseURL, o.cfg.BaseURL))
	}
	if o.st.Postgres() && !refused(held.Holder.Endpoint) {
		// Without a machine lock, a holder that does not answer may be one
		// that has just taken the lease and listens a moment later (its
		// socket is not there yet), or one stopped: one of a locator that
		// holds no session is taken for dead once it has missed two
		// renewals. A socket that refuses connections is a dead
		// process's: taken over at once.
		if serr != nil {
			return want, false, held
		}
		if now, nerr := o.st.LeaseNow(ctx); nerr != nil || now.Sub(held.Holder.Heartbeat) < 2*RenewEvery || o.processLives(ctx, held.Holder, now) {
			return want, false, held
		}
	}
	return o.takeOver(ctx, want, held.Holder)
}

// takeOver takes the account from dead, the holder of its lease, found
// gone (see acquire).
func (o *Owner) takeOver(ctx context.Context, want, dead locator.Lease) (locator.Lease, bool, error) {
	if err := o.leaveToStandby(ctx); err != nil {
		return locator.Lease{}, false, err
	}
	lease, err := o.st.TakeOverLease(ctx, want, dead.Owner, LeaseTTL)
	if err == nil && dead.Endpoint != want.Endpoint && dead.Host == want.Host && checkSocketPath(o.cfg.RuntimeDir, dead.Endpoint) == nil {
		os.Remove(dead.Endpoint) // the dead owner's
	}
	return lease, err == nil, err
}

// processLives reports whether the process holding l renews another lease
// of its key pair: it lives (l's account is starting there, or its
// renewal is late), and its accounts are not taken from it one by one.
func (o *Owner) processLives(ctx context.Context, l locator.Lease, now time.Time) bool {
	if l.Process == "" {
		return false
	}
	ls, err := o.st.Leases(ctx)
	if err != nil {
		return true // unknown: not taken for dead
	}
	for _, x := range ls {
		if x.Process == l.Process && x.Account != l.Account && x.PacingKey == l.PacingKey && now.Sub(x.Heartbeat) < 2*RenewEvery {
			return true
		}
	}
	return false
}

// refused reports whether the unix socket at path refuses connections: it
// is there, but no process listens on it any more.
func refused(path string) bool {
	c, err := net.DialTimeout("unix", path, helloWait)
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED)
	}
	c.Close()
	return false
}

// errStandby: a daemon stands by to take the account over; a command
// waits for it rather than taking the account for its run.
var errStandby = errors.New("service: a standby daemon takes the account over")

// leaveToStandby is errStandby for a command about to take an account
// whose owner is gone, when a live standby daemon waits for it: the
// account goes to the daemon meant to carry it, and the command follows
// it once it owns. A daemon that lists the account but was refused it
// (its keys rejected: see Fleet.announce) is not waited for: when every
// standby says so, the command is refused with why, at once. One that
// cannot serve it for a while (its database down) is waited for.
func (o *Owner) leaveToStandby(ctx context.Context) error {
	if o.cfg.Role != wire.RoleCommand {
		return nil
	}
	sbs, err := o.st.Standbys(ctx, o.cfg.Engine.Account)
	if err != nil {
		return err
	}
	switch {
	case len(sbs) == 0:
		return nil
	case !slices.ContainsFunc(sbs, func(sb locator.Standby) bool { return sb.NotServed == "" }):
		sb := sbs[0]
		return account.Errorf(account.KindRefused, fmt.Sprintf("account %s: pid %d on %s serves it but cannot now: %s (not served since %s, tried again at %s); nothing was sent",
			sb.Account, sb.PID, sb.Host, sb.NotServed, market.DateTime(sb.NotServedSince), market.TimeOfDay(sb.Retry)))
	}
	return errStandby
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

// term is the term of the owner's lease, as renewals renew it.
func (o *Owner) term() store.Term {
	return store.Term{Account: o.lease.Account, Owner: o.lease.Owner, Term: o.lease.Term}
}

// trust extends this owner's trust from a successful renewal attempt
// that started at attempt (time.Now: see LeaseTTL), and wakes whoever
// waits for it (see maySend). Trust never moves back: an attempt older
// than one trusted already (a reservation's, see renewals.join) tells
// nothing more.
func (o *Owner) trust(attempt time.Time) {
	until := attempt.Add(LeaseTTL - TrustMargin).UnixNano()
	for cur := o.trustUntil.Load(); until > cur && !o.trustUntil.CompareAndSwap(cur, until); {
		cur = o.trustUntil.Load()
	}
	o.trustMu.Lock()
	defer o.trustMu.Unlock()
	if o.renewed != nil {
		close(o.renewed)
		o.renewed = nil
	}
}

// awaitRenewal asks the heartbeat to renew now and waits at most d for a
// successful renewal; it reports whether one came.
func (o *Owner) awaitRenewal(d time.Duration) bool {
	o.trustMu.Lock()
	if o.renewed == nil {
		o.renewed = make(chan struct{})
	}
	renewed := o.renewed
	o.trustMu.Unlock()
	o.renewals.now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-renewed:
		return true
	case <-t.C:
	case <-o.stop:
	}
	return false
}

// trusted is how much longer this owner trusts itself to own the account.
func (o *Owner) trusted() time.Duration {
	return time.Until(time.Unix(0, o.trustUntil.Load()))
}

// maySend is the owner's brokerclient.Gate on Postgres: a request of its
// engine leaves only while the owner trusts its lease, an accept only with
// AcceptBudget of trust left, waiting for a renewal asked for at once when
// less is left. (On SQLite the machine lock alone makes the owner: no
// other process can take the account while it lives.)
func (o *Owner) maySend(accept bool) error {
	select {
	case <-o.session:
		o.stepDown(o.sessionEnded()) // the reason, before any other
	default:
	}
	need := time.Duration(0)
	if accept {
		need = AcceptBudget
	}
	if left := o.trusted(); left <= need && o.Held() {
		// Trust runs out with the time since the last renewal, not with
		// the requests' wait for the key pair's pacer: a renewal is asked
		// for at once, and waited for while trust lasts, or, when none is
		// left, for as long as trust from a renewal lasts (the lease may
		// live on in the database: an owner just started, whose taking of
		// the lease waited for the database, has none; and a round on a
		// database a takeover loads takes longer than the renewals'
		// spacing, which it was waited for until 52 owners just taken
		// over stepped down at one kill of 10,000 accounts). Nothing is
		// sent meanwhile.
		o.awaitRenewal(max(left, LeaseTTL-TrustMargin))
	}
	if left := o.trusted(); left <= need || !o.Held() {
		err := fmt.Errorf("account %s: this process is no longer sure it owns the account (%s of trust in its lease left, %s needed)", o.lease.Account, max(left, 0).Round(time.Millisecond), need)
		// A request held back is work this owner cannot finish: it steps
		// down, and the next owner takes the workflow up from the store.
		o.stepDown(fmt.Errorf("%w: a request to the broker was held back", err))
		return err
	}
	return nil
}

// sessionEnded is why an owner whose process's database session ended
// holds its account no longer.
func (o *Owner) sessionEnded() error {
	return fmt.Errorf("account %s: this process's database session ended, and with it the proof that it lives: another process may take the account at once", o.lease.Account)
}

// ErrSteppedDown is matched by the error Wait returns when the owner
// stepped down (its lease lost, or not sure of it any more), as opposed to
// its engine stopping on an error.
var ErrSteppedDown = errors.New("stepped down")

// stepDown gives the account up for why: Held turns false and Fatal
// says why. Only the first reason counts.
func (o *Owner) stepDown(why error) {
	o.lostOnce.Do(func() {
		o.lostWhy = fmt.Errorf("%w: %w", ErrSteppedDown, why)
		close(o.lost)
	})
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
