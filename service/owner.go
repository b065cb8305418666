package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/store"
)

// LeaseTTL is how long a lease lasts without a heartbeat: a dead owner's
// account is taken over this long after its last one. Heartbeats come at a
// third of it.
const LeaseTTL = 10 * time.Second

// Role says what kind of process owns an account: a daemon owns it until
// stopped; a command only for its run.
type Role string

// Roles.
const (
	RoleDaemon  Role = "daemon"
	RoleCommand Role = "command"
)

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
	Role       Role
}

// Owner is the live owner of one account on this machine: it holds the
// account's machine lock (one owner per account per machine, whatever
// database a process opens) and its lease in the database, runs its
// engine, and serves the account API to other processes on its socket.
type Owner struct {
	cfg   OwnerConfig
	eng   *engine.Engine
	local *Local
	st    *store.Store
	lock  *machineLock
	lease store.Lease
	clk   clock.Clock
	log   *slog.Logger
	ln    net.Listener
	srv   *http.Server
	lost  chan struct{} // closed when the lease was lost
	stop  chan struct{}
	wg    sync.WaitGroup

	closeOnce sync.Once
}

// Own makes this process the account's owner: errLocked when another
// process of this machine owns it (dial it), a refusal when the database
// names a live owner of the account at another broker address, and a
// *store.LeaseHeldError when a process of another host holds its lease.
// The engine it starts recovers what an earlier owner left.
func Own(ctx context.Context, cfg OwnerConfig) (*Owner, error) {
	ec := &cfg.Engine
	if ec.Clock == nil {
		ec.Clock = clock.Real{}
	}
	if ec.Logger == nil {
		ec.Logger = slog.New(slog.DiscardHandler)
	}
	lockPath, sockPath, err := paths(cfg.RuntimeDir, ec.Account, cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	lock, err := tryLock(lockPath)
	if err != nil {
		return nil, err
	}
	o := &Owner{cfg: cfg, st: ec.Store, lock: lock, clk: ec.Clock, log: ec.Logger, lost: make(chan struct{}), stop: make(chan struct{})}
	if err := o.start(ctx, sockPath); err != nil {
		lock.unlock()
		return nil, err
	}
	return o, nil
}

func (o *Owner) start(ctx context.Context, sockPath string) error {
	ec := o.cfg.Engine
	host, _ := os.Hostname()
	want := store.Lease{Account: ec.Account, Owner: string(o.cfg.Role) + ":" + uuid.NewString(), PID: os.Getpid(), Host: host, Endpoint: sockPath}
	lease, takenOver, err := o.acquire(ctx, want)
	if err != nil {
		return err
	}
	o.lease = lease
	// The broker's buckets are per key pair and may still hold the requests
	// of the previous owner of this key pair: start the pacer as if emptied
	// when that owner sent its last, or now when it died (it may have sent
	// until then).
	last, err := o.st.LastRequest(ctx, ec.Client.PacingKey())
	if err != nil {
		o.release()
		return err
	}
	if takenOver {
		last = o.clk.Now()
	}
	if !last.IsZero() {
		ec.Client.PaceAfter(last)
	}
	// The machine lock is ours: a socket there was left by a dead owner.
	os.Remove(sockPath)
	ln, err := net.Listen("unix", sockPath)
	if err != nil {
		o.release()
		return fmt.Errorf("service: listen on %s: %w", sockPath, err)
	}
	o.ln = peerListener{ln}
	if err := os.Chmod(sockPath, 0o600); err != nil {
		o.ln.Close()
		o.release()
		return err
	}
	if o.eng, err = engine.New(ec); err != nil {
		o.ln.Close()
		o.release()
		return err
	}
	if err := o.eng.Start(ctx); err != nil {
		o.ln.Close()
		o.release()
		return err
	}
	if o.local, err = NewLocal(context.WithoutCancel(ctx), LocalConfig{Engine: o.eng, Store: o.st, Client: ec.Client, Clock: o.clk, Logger: o.log,
		Account: ec.Account, Env: ec.Env, Lease: o.Lease, Held: o.Held}); err != nil {
		o.eng.Close()
		o.ln.Close()
		o.release()
		return err
	}
	srv := newServer(o.local, o.hello, ec.Client, o.clk)
	o.srv = &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second}
	o.wg.Add(2)
	go func() {
		defer o.wg.Done()
		if err := o.srv.Serve(o.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("owner socket stopped", "err", err)
		}
	}()
	go o.heartbeat()
	if o.cfg.Role == RoleDaemon {
		o.wg.Add(1)
		go o.syncLedger()
	}
	if ec.Client.Partner.Signed() {
		o.wg.Add(1)
		go o.keepRenewed()
	}
	return nil
}

// keepRenewed renews partner tokens on their own schedule while the owner
// lives: an owner may idle for longer than a refresh token lives, and no
// call should wait for a renewal.
func (o *Owner) keepRenewed() {
	defer o.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-o.stop; cancel() }()
	if err := o.cfg.Engine.Client.Partner.KeepRenewed(ctx); err != nil && ctx.Err() == nil {
		o.log.Error("partner token renewal stopped; run 'locator login --partner' again", "account", o.lease.Account, "err", err)
	}
}

// LedgerSyncEvery is how often a daemon owner syncs today's cash ledger
// into its database: what reads the store alone (the dashboard's fees
// panel, its spend and recovery) is then never more than this behind the
// broker's ledger, with no command run.
const LedgerSyncEvery = 2 * time.Minute

// syncLedger syncs and reconciles today's ledger through the account API
// (the Fees operation, as `locator fees` and the reconcile job do) at
// start and every LedgerSyncEvery while the owner lives.
func (o *Owner) syncLedger() {
	defer o.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-o.stop; cancel() }()
	a := o.local.As(account.Caller{Name: "ledger sync"})
	for {
		if _, err := a.Fees(ctx, account.FeesRequest{Window: ledger.Window{Days: 1}, Grace: ledger.FeeGrace}); err != nil && ctx.Err() == nil {
			o.log.Warn("ledger not synced", "account", o.lease.Account, "err", err)
		}
		if clock.Sleep(ctx, o.clk, LedgerSyncEvery) != nil {
			return
		}
	}
}

// acquire takes the account's lease in the database. A lease held by a
// process of this host that does not answer is a dead owner's (this
// process holds the machine lock): taken over at once. One that answers
// serves the account at another broker address: refused.
func (o *Owner) acquire(ctx context.Context, want store.Lease) (store.Lease, bool, error) {
	lease, err := o.st.AcquireLease(ctx, want, LeaseTTL)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		return lease, false, err
	}
	if held.Holder.Host != want.Host {
		return lease, false, err
	}
	c := Dial(held.Holder.Endpoint, account.Caller{Name: "hello"}, nil, "") // hello needs no session
	hello, herr := c.Hello(ctx)
	c.Close()
	if herr == nil {
		return lease, false, account.Errorf(account.KindRefused, fmt.Sprintf("%s at broker address %s; this process uses %s: one owner per account", held.Holder, hello.BaseURL, o.cfg.BaseURL))
	}
	lease, err = o.st.TakeOverLease(ctx, want, held.Holder.Owner, LeaseTTL)
	return lease, err == nil, err
}

func (o *Owner) hello() Hello {
	return Hello{Account: o.lease.Account, BaseURL: o.cfg.BaseURL, DB: o.cfg.DB, Role: o.cfg.Role, Lease: o.lease}
}

// Engine is the account's engine.
func (o *Owner) Engine() *engine.Engine { return o.eng }

// Local is the account API on this owner's engine.
func (o *Owner) Local() *Local { return o.local }

// Lease is the lease this owner holds.
func (o *Owner) Lease() store.Lease { return o.lease }

// Held reports whether this owner still holds its lease: it was neither
// lost to another process nor given up with Close.
func (o *Owner) Held() bool {
	select {
	case <-o.lost:
		return false
	case <-o.stop:
		return false
	default:
		return true
	}
}

// Lost is closed when the lease was lost (this process stalled past its
// expiry and another took the account): the owner must stop.
func (o *Owner) Lost() <-chan struct{} { return o.lost }

// Fatal delivers why this owner can no longer drive the account: its
// lease was lost, or its engine stopped on an error. Nothing comes when
// it is closed.
func (o *Owner) Fatal() <-chan error {
	ch := make(chan error, 1)
	go func() {
		select {
		case <-o.lost:
			ch <- fmt.Errorf("account %s: the lease was lost (this process stalled past it): another process owns it now", o.lease.Account)
		case err := <-o.eng.Err():
			ch <- fmt.Errorf("account %s: the engine stopped: %w", o.lease.Account, err)
		case <-o.stop:
		}
	}()
	return ch
}

// heartbeat renews the lease at a third of its life.
func (o *Owner) heartbeat() {
	defer o.wg.Done()
	for {
		t := o.clk.NewTimer(LeaseTTL / 3)
		select {
		case <-o.stop:
			t.Stop()
			return
		case <-t.C():
		}
		if err := o.st.RenewLease(context.Background(), o.lease.Account, o.lease.Owner, LeaseTTL); err != nil {
			o.log.Error("lease not renewed", "account", o.lease.Account, "err", err)
			if errors.Is(err, store.ErrLeaseLost) {
				close(o.lost)
				return
			}
		}
	}
}

// Close stops taking requests and the engine, and releases the lease and
// the machine lock; the workflows stay in the store for the next owner.
// Closing again does nothing.
func (o *Owner) Close() {
	o.closeOnce.Do(func() {
		close(o.stop)
		// The engine first: a follower's stream cut below is the owner
		// going, not the asker, and must decline nothing.
		o.eng.Close()
		o.srv.Close()
		o.wg.Wait()
		o.release()
	})
}

// release records the pacing, gives the lease up, removes the socket and
// drops the machine lock, in that order: the next owner finds all of it
// done when it gets the lock.
func (o *Owner) release() {
	client := o.cfg.Engine.Client
	if last := client.LastRequest(); !last.IsZero() {
		if err := o.st.SetLastRequest(context.Background(), client.PacingKey(), last); err != nil {
			o.log.Warn("last request time not recorded; the next owner may draw a 429", "err", err)
		}
	}
	if o.lease.Owner != "" {
		if err := o.st.ReleaseLease(context.Background(), o.lease.Account, o.lease.Owner); err != nil {
			o.log.Warn("lease not released; it lapses by itself", "err", err)
		}
		os.Remove(o.lease.Endpoint)
	}
	o.lock.unlock()
}
