package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/store"
)

// LeaseTTL is how long a lease lasts without a heartbeat: a dead owner's
// account is taken over this long after its last one. Heartbeats come at a
// third of it.
const LeaseTTL = 10 * time.Second

// Owner is the live owner of one account.
type Owner struct {
	eng   *engine.Engine
	st    *store.Store
	lease store.Lease
	clk   clock.Clock
	log   *slog.Logger
	ln    net.Listener
	srv   *http.Server
	lost  chan struct{} // closed when the lease was lost
	stop  chan struct{}
	wg    sync.WaitGroup

	closeOnce sync.Once

	client *brokerclient.Client // the engine's: job runs make their reads with it

	mu        sync.Mutex
	followers map[string]*follower          // who follows a workflow and answers its offer
	jobs      map[string]context.CancelFunc // job runs handed over, by their follower's ref
}

// Role says what kind of process owns an account: a daemon owns it until
// stopped; a command only for its run.
type Role string

// Roles.
const (
	RoleDaemon  Role = "daemon"
	RoleCommand Role = "command"
)

// RoleOf is the role of the process holding lease.
func RoleOf(lease store.Lease) Role {
	role, _, _ := strings.Cut(lease.Owner, ":")
	return Role(role)
}

// Own takes account's lease for a process of role (a *store.LeaseHeldError
// names the live owner otherwise), starts the engine cfg describes — which
// recovers what an earlier owner left — and serves other processes'
// requests on a socket beside the database at dbPath. Close gives it all
// up.
func Own(ctx context.Context, cfg engine.Config, dbPath string, role Role) (*Owner, error) {
	return own(ctx, cfg, dbPath, role, "")
}

// OwnAsDaemon takes account for a daemon: a command that owns it for its
// run is waited out (a killed one replaced at once); another daemon is
// refused with a *store.LeaseHeldError naming it.
func OwnAsDaemon(ctx context.Context, cfg engine.Config, dbPath string) (*Owner, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	for {
		o, err := Own(ctx, cfg, dbPath, RoleDaemon)
		var held *store.LeaseHeldError
		switch {
		case err == nil || !errors.As(err, &held) || RoleOf(held.Holder) == RoleDaemon:
			return o, err
		case !Reachable(ctx, held.Holder):
			if o, err := TakeOver(ctx, cfg, dbPath, RoleDaemon, held.Holder); err == nil {
				return o, nil
			}
		}
		if cfg.Logger != nil {
			cfg.Logger.Info("waiting for a command's run to give the account up", "account", cfg.Account, "pid", held.Holder.PID)
		}
		if err := clock.Sleep(ctx, clk, 500*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// TakeOver is Own when the lease's holder is gone (Reachable is false)
// before its lease lapsed: a killed owner is replaced at once.
func TakeOver(ctx context.Context, cfg engine.Config, dbPath string, role Role, dead store.Lease) (*Owner, error) {
	if Reachable(ctx, dead) {
		return nil, &store.LeaseHeldError{Holder: dead}
	}
	return own(ctx, cfg, dbPath, role, dead.Owner)
}

// Reachable reports whether the owner holding lease takes connections: a
// live process does even when it is busy; a killed one's socket refuses.
func Reachable(ctx context.Context, lease store.Lease) bool {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "unix", lease.Endpoint)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func own(ctx context.Context, cfg engine.Config, dbPath string, role Role, dead string) (*Owner, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	o := &Owner{st: cfg.Store, clk: cfg.Clock, log: cfg.Logger, lost: make(chan struct{}), stop: make(chan struct{}), followers: map[string]*follower{}, jobs: map[string]context.CancelFunc{}, client: cfg.Client}
	want := store.Lease{Account: cfg.Account, Owner: string(role) + ":" + uuid.NewString(), PID: os.Getpid(), Host: host, Endpoint: socketPath(dbPath, cfg.Account)}
	var lease store.Lease
	var err error
	if dead != "" {
		lease, err = cfg.Store.TakeOverLease(ctx, want, dead, LeaseTTL)
	} else {
		lease, err = cfg.Store.AcquireLease(ctx, want, LeaseTTL)
	}
	if err != nil {
		return nil, err
	}
	o.lease = lease
	// The broker's buckets are per key pair and may still hold the requests
	// of the previous owner of this key pair: start the pacer as if emptied
	// when that owner sent its last, or now when it died (it may have sent
	// until then).
	last, err := cfg.Store.LastRequest(ctx, cfg.Client.PacingKey())
	if err != nil {
		o.release()
		return nil, err
	}
	if dead != "" {
		last = o.clk.Now()
	}
	if !last.IsZero() {
		cfg.Client.PaceAfter(last)
	}
	// The lease is ours: a socket left by a dead owner can go.
	os.Remove(lease.Endpoint)
	if o.ln, err = net.Listen("unix", lease.Endpoint); err != nil {
		o.release()
		return nil, fmt.Errorf("service: listen on %s: %w", lease.Endpoint, err)
	}
	os.Chmod(lease.Endpoint, 0o600)
	if o.eng, err = engine.New(cfg); err != nil {
		o.ln.Close()
		o.release()
		return nil, err
	}
	if err := o.eng.Start(ctx); err != nil {
		o.ln.Close()
		o.release()
		return nil, err
	}
	o.srv = &http.Server{Handler: o.routes(), ReadHeaderTimeout: 10 * time.Second}
	o.wg.Add(2)
	go func() {
		defer o.wg.Done()
		if err := o.srv.Serve(o.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("owner socket stopped", "err", err)
		}
	}()
	go o.heartbeat()
	return o, nil
}

// socketPath is the owner's socket for account: beside the database, or
// under the temporary directory when that path is too long for a socket.
func socketPath(dbPath, account string) string {
	p := filepath.Join(filepath.Dir(dbPath), "locator-"+account+".sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(p))
	return filepath.Join(os.TempDir(), "locator-"+hex.EncodeToString(sum[:8])+".sock")
}

// Engine is the account's engine, for the owner's own requests.
func (o *Owner) Engine() *engine.Engine { return o.eng }

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

// clockSleep waits d on the owner's clock, or until ctx ends.
func clockSleep(ctx context.Context, o *Owner, d time.Duration) error {
	return clock.Sleep(ctx, o.clk, d)
}

// Close stops taking requests and the engine, and releases the lease; the
// workflows stay in the store for the next owner. Closing again does
// nothing.
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

func (o *Owner) release() {
	if last := o.client.LastRequest(); !last.IsZero() {
		if err := o.st.SetLastRequest(context.Background(), o.client.PacingKey(), last); err != nil {
			o.log.Warn("last request time not recorded; the next owner may draw a 429", "err", err)
		}
	}
	if err := o.st.ReleaseLease(context.Background(), o.lease.Account, o.lease.Owner); err != nil {
		o.log.Warn("lease not released; it lapses by itself", "err", err)
	}
	os.Remove(o.lease.Endpoint)
}
