package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/local"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/workflow"
)

// ownerWait bounds how long a process looks for an owner that holds the
// account's lock but does not answer yet (it is starting, or stopping).
// errClosed is returned by a handle used after Close.
var errClosed = errors.New("service: the account handle is closed")

const ownerWait = 30 * time.Second

// Config opens an account for one process.
type Config struct {
	OwnerConfig
	// Caller is this process, as the owner records and asks it.
	Caller account.Caller
	// OwnerToken is what this process presents to an owner of another
	// host (its OwnerTokenEnv): see Network.
	OwnerToken string
	// NoDump, when set, is called each time this process becomes the
	// account's owner, before it serves anything: an owner may run for
	// hours with the key pair's work, so it is made non-dumpable
	// (proc.NoDump) as the daemons are.
	NoDump func() error
	// Standby makes a daemon that finds another daemon owning the account
	// follow it and stand by to take over (see Fleet), rather than be
	// refused.
	Standby bool
}

// Handle is the account as one process holds it: the account API of the
// owner, which is this process (its engine runs here) or another one,
// followed over its socket (of this host) or over TLS (of another host,
// found in the lease). When the owner of the moment
// goes away, the handle follows the next one or becomes it, and carries
// the request in flight over to it intact: requests carry ids made up
// here, so nothing is started twice.
type Handle struct {
	cfg Config

	mu      sync.Mutex
	closed  bool
	owner   *Owner          // while this process owns the account
	client  *wire.Client    // while it follows another
	cur     account.Account // the one of the two in use
	release func()          // stops putting the owner's questions to Caller.Ask
	// notOpened is why a daemon's fleet could not open the account the
	// last time it tried (nil: it could), told by Fleet.Say, Status and
	// the fleet's standby record; notSince is when it first could not
	// (since it last could), retryAt when it tries again.
	notOpened         error
	notSince, retryAt time.Time
	// reserved is the owner id of the lease a fleet took for the
	// account (see reserve), until the next attempt to own it,
	// reservedOver whether it was taken over (see takePair), recovery
	// what the account's engine starts from in that term (nil: the
	// engine reads it), and listed the account's row of its key pair's
	// list, read for it then (see list; nil: the engine reads its
	// detail).
	reserved     string
	reservedOver bool
	recovery     *store.Recovery
	listed       *brokerclient.Account
	// pair is the fleet's handles of the account's key pair (see
	// takePair); nil outside a fleet.
	pair *keyPair
	// rank is where the fleet lists the account's key pair (0: first);
	// yielded is the daemon that lists it before, the account is left to
	// (see yieldTo).
	rank    int
	yielded *locator.Standby
	// watched is the lease of another daemon this daemon stands by for
	// without following it (see claim), until it may be free.
	watched *locator.Lease
	// steppedDown says that keep recorded this process as the account's
	// next owner as its owner stepped down: the fleet's announce takes
	// that record off once it owns the account again.
	steppedDown bool
	// connecting holds one connect at a time: a fleet's keep and a call
	// in flight (Status, say) finding no account API at once would
	// otherwise both own it, or one follow the other's socket.
	connecting chan struct{}
}

var _ account.Account = (*Handle)(nil)

// Open opens the account: as its owner when no live process owns it
// (of this host or, through the lease, of another), else as a follower of
// the owner. A daemon (Config.Role RoleDaemon)
// always owns: it waits out a command that owns the account for its run,
// and is refused when another daemon owns it.
func Open(ctx context.Context, cfg Config) (*Handle, error) {
	h := newHandle(cfg)
	if _, err := h.current(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// newHandle is cfg's handle, not connected yet (see Open).
func newHandle(cfg Config) *Handle {
	if cfg.Caller.ID == "" {
		cfg.Caller.ID = uuid.NewString()
	}
	if cfg.Caller.Env == "" {
		cfg.Caller.Env = cfg.Engine.Env
	}
	if cfg.Engine.Logger == nil {
		cfg.Engine.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Engine.Clock == nil {
		cfg.Engine.Clock = clock.Real{}
	}
	return &Handle{cfg: cfg, connecting: make(chan struct{}, 1)}
}

// Owner is this process's ownership of the account, nil while it follows
// another.
func (h *Handle) Owner() *Owner {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.owner
}

// Followed is the hello of the owner this process follows, nil while it
// owns the account.
func (h *Handle) Followed(ctx context.Context) (*wire.Hello, error) {
	h.mu.Lock()
	c := h.client
	h.mu.Unlock()
	if c == nil {
		return nil, nil
	}
	return c.Hello(ctx)
}

// Close gives the account up: as its owner, it stops the engine and
// releases the account for the next; as a follower, it stops listening.
func (h *Handle) Close() {
	h.mu.Lock()
	h.closed = true
	reserved := h.reserved
	h.mu.Unlock()
	if reserved != "" && h.cfg.renewals != nil {
		h.cfg.renewals.unreserve(reserved) // it lapses
	}
	h.drop(nil)
}

// current is the account API in use, connecting first when there is none
// (one connect at a time: a call that waited for another's uses what it
// connected).
func (h *Handle) current(ctx context.Context) (account.Account, error) {
	if cur, err := h.inUse(); cur != nil || err != nil {
		return cur, err
	}
	select {
	case h.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.connecting }()
	if cur, err := h.inUse(); cur != nil || err != nil {
		return cur, err
	}
	return h.connect(ctx)
}

// inUse is the account API in use (nil: none yet), or errClosed.
func (h *Handle) inUse() (account.Account, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	return h.cur, nil
}

// connect owns the account, or follows its owner.
func (h *Handle) connect(ctx context.Context) (account.Account, error) {
	clk := h.cfg.Engine.Clock
	deadline := clk.Now().Add(ownerWait)
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		a, retry, err := h.try(ctx)
		if err == nil || !retry {
			return a, err
		}
		if errors.Is(err, errStandby) || errors.Is(err, errBusyOwner) {
			// A live daemon is to own the account (it stands by, or is
			// starting, its accounts' start-up under way), or a live
			// owner keeps its lease but has not answered yet: waited for
			// as long as it says so (a stopped owner's lease lapses, and
			// the next look owns the account).
			deadline = clk.Now().Add(ownerWait)
		}
		if clk.Now().After(deadline) {
			if errors.Is(err, store.ErrKeyPairHeld) {
				return nil, err
			}
			return nil, fmt.Errorf("account %s: another process holds it but does not answer: %w", h.cfg.Engine.Account, err)
		}
		if err := clock.Sleep(ctx, clk, wait); err != nil {
			return nil, err
		}
	}
}

// try makes one attempt to own or follow; retry says whether to look
// again (the owner is starting or stopping, or a command owns what a
// daemon waits for).
func (h *Handle) try(ctx context.Context) (account.Account, bool, error) {
	if h.yieldedTo() != nil {
		// The fleet leaves the account to a daemon that lists its key
		// pair first (see yieldTo): a call meanwhile waits for that
		// daemon to own it and follows it, as a command would.
		return nil, true, errStandby
	}
	o, err := h.own(ctx)
	if err == nil {
		a, err := h.takeOwnership(o)
		return a, false, err
	}
	c, retry, err := h.dialOwner(err)
	if err != nil {
		return nil, retry, err
	}
	return h.followOwner(ctx, c)
}

// own makes an attempt to own the account (Own), on the lease reserved
// for it, if any, which is then no longer reserved: taken on by the owner,
// or, when the attempt fails, no longer renewed (see renewals.reserve).
func (h *Handle) own(ctx context.Context) (*Owner, error) {
	cfg := h.cfg.OwnerConfig
	h.mu.Lock()
	cfg.owner, cfg.tookOver, cfg.recovery, cfg.listed = h.reserved, h.reservedOver, h.recovery, h.listed
	h.reserved, h.reservedOver, h.recovery, h.listed = "", false, nil, nil
	h.mu.Unlock()
	o, err := Own(ctx, cfg)
	if err != nil && cfg.owner != "" && cfg.renewals != nil {
		cfg.renewals.unreserve(cfg.owner)
	}
	return o, err
}

// claim owns the account for a standby daemon's fleet, or, when another
// live daemon holds it, records that daemon's lease as the one this
// process stands by for (watched, see Handle.standBy) without following
// it: a desk's daemons stand by for thousands of accounts each, and a
// connection, a handshake and an update stream per account and standby
// cost them more than their owners' work. A call on the account follows
// its owner then (current). Any other outcome is current's.
func (h *Handle) claim(ctx context.Context) error {
	if !h.cfg.Standby || h.yieldedTo() != nil {
		_, err := h.current(ctx)
		return err
	}
	select {
	case h.connecting <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	o, err := h.own(ctx)
	var held *store.LeaseHeldError
	switch {
	case err == nil:
		_, err = h.takeOwnership(o)
		<-h.connecting
		return err
	case errors.As(err, &held) && roleOf(held.Holder) == wire.RoleDaemon:
		h.mu.Lock()
		h.watched = &held.Holder
		h.mu.Unlock()
		<-h.connecting
		return nil
	}
	<-h.connecting
	_, err = h.current(ctx)
	return err
}

// watching is the lease this daemon stands by for without following its
// owner (see claim), or nil.
func (h *Handle) watching() *locator.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.watched
}

// errBusyOwner: the owner holds the account's lease but did not answer
// within helloWait (it is starting its accounts, their start-up reads
// queued on their key pairs' pacers).
var errBusyOwner = errors.New("service: the owner has not answered yet")

// busyOwner is err, marked errBusyOwner when the wait for the owner's
// answer (hctx) ran out while the caller's own (ctx) did not.
func busyOwner(ctx, hctx context.Context, err error) error {
	if hctx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %w", errBusyOwner, err)
	}
	return err
}

// takeOwnership makes the handle use o, the account's ownership this
// process just took, unless the handle was closed meanwhile or the process
// cannot be made non-dumpable (then o is given up).
func (h *Handle) takeOwnership(o *Owner) (account.Account, error) {
	if h.cfg.NoDump != nil {
		if err := h.cfg.NoDump(); err != nil {
			go o.Close()
			return nil, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		go o.Close()
		return nil, errClosed
	}
	h.owner, h.cur = o, o.Local().As(h.cfg.Caller)
	if h.cfg.Caller.Ask != nil {
		h.release = o.Local().Listen(h.cfg.Caller.ID, h.cfg.Caller.Ask)
	}
	return h.cur, nil
}

// dialOwner reads why Own failed (ownErr) and dials the process that owns
// the account, when there is one to follow; otherwise it returns an error
// and whether to look again.
func (h *Handle) dialOwner(ownErr error) (*wire.Client, bool, error) {
	var held *store.LeaseHeldError
	var pair *store.KeyPairHeldError
	switch {
	case errors.Is(ownErr, errStandby):
		return nil, true, ownErr
	case errors.As(ownErr, &pair):
		// A command waits out another command's run on the key pair; a
		// daemon's accounts are its own until it stops (a Fleet looks
		// again by itself).
		if h.cfg.Role == wire.RoleDaemon || roleOf(pair.Holder) == wire.RoleDaemon {
			return nil, false, account.Wrap(account.KindRefused, ownErr.Error()+
				fmt.Sprintf(": serve %s in that process (add it to its accounts), or stop it; nothing was sent", pair.Account), ownErr)
		}
		return nil, true, account.Wrap(account.KindRefused, ownErr.Error()+"; nothing was sent", ownErr)
	case errors.Is(ownErr, errLocked):
		_, sock, _ := paths(h.cfg.RuntimeDir, h.cfg.Engine.Account, h.cfg.BaseURL)
		return wire.Dial(sock, h.cfg.Caller, h.cfg.Engine.Client, h.cfg.BaseURL), false, nil
	case errors.As(ownErr, &held):
		c, err := h.dialHolder(held.Holder)
		return c, false, err
	}
	return nil, false, ownError(h.cfg.Engine.Account, ownErr)
}

// followOwner makes the handle use c, the dialed owner, once it answers,
// may be followed, and accepts this process's credentials; a daemon
// follows only another daemon it stands by for. c is closed when it is
// not used.
func (h *Handle) followOwner(ctx context.Context, c *wire.Client) (account.Account, bool, error) {
	// A live owner answers at once; a stopped one never does, and is not
	// waited for: its lease lapses meanwhile, and the next look owns the
	// account.
	hctx, cancel := context.WithTimeout(ctx, helloWait)
	defer cancel()
	hello, err := c.Hello(hctx)
	if err != nil {
		// An owner that does not answer yet is looked for again; one that
		// refuses this process (another host's owner, without its token)
		// is not.
		c.Close()
		return nil, account.KindOf(err) != account.KindRefused, busyOwner(ctx, hctx, err)
	}
	if err := h.followable(hello); err != nil {
		c.Close()
		return nil, false, err
	}
	// The owner serves only a process holding the account's credentials:
	// proven now, so a refusal ends the command before it does anything.
	if _, err := c.Authenticate(hctx); err != nil {
		c.Close()
		return nil, errors.Is(err, account.ErrOwnerGone) || hctx.Err() != nil, busyOwner(ctx, hctx, err)
	}
	if h.cfg.Role == wire.RoleDaemon && !(h.cfg.Standby && hello.Role == wire.RoleDaemon) {
		c.Close()
		if hello.Role == wire.RoleDaemon {
			return nil, false, account.Errorf(account.KindRefused, hello.Lease.String()+" (another daemon): stop it first, or stand by with serve --standby")
		}
		h.cfg.Engine.Logger.Info("waiting for a command's run to give the account up", "account", hello.Account, "pid", hello.Lease.PID)
		return nil, true, errLocked
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		c.Close()
		return nil, false, errClosed
	}
	h.client, h.cur = c, c
	return c, false, nil
}

// dialHolder reaches the live owner a lease names: over its socket when
// it is of this host (in this user's runtime folder, served by a process
// of this user), else over the network, with the owner's token.
func (h *Handle) dialHolder(l locator.Lease) (*wire.Client, error) {
	host, _ := os.Hostname()
	switch {
	case l.Host == host && l.Endpoint != "":
		if err := checkSocketPath(h.cfg.RuntimeDir, l.Endpoint); err != nil {
			return nil, err
		}
		return wire.Dial(l.Endpoint, h.cfg.Caller, h.cfg.Engine.Client, h.cfg.BaseURL), nil
	case l.Address == "":
		return nil, account.Errorf(account.KindRefused, l.String()+", which serves no other host (start it with --owner-listen); nothing was sent")
	}
	return wire.DialRemote(l.Account, l.Address, l.Pin, h.cfg.OwnerToken, h.cfg.Caller, h.cfg.Engine.Client, h.cfg.BaseURL)
}

// ownError is why this process could not own the account, with the kind
// its callers branch on: the start-up checks of the account (its
// environment, its status, the keys reaching it) refuse before anything
// is sent.
func ownError(acct string, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, brokerclient.ErrNotFound):
		return account.Errorf(account.KindRefused, fmt.Sprintf("account %s not found for these keys (or the keys are invalid); nothing was sent", acct))
	}
	return local.Classify(err)
}

// followable refuses an owner that opened another database than this
// process: two databases would give the account two records. A Postgres
// database is the same when its address, user and name are (the owner
// tells them without the password).
func (h *Handle) followable(hello *wire.Hello) error {
	if store.IsPostgres(h.cfg.DB) && store.Redact(h.cfg.DB) == hello.DB {
		return nil
	}
	mine, err1 := os.Stat(h.cfg.DB)
	theirs, err2 := os.Stat(hello.DB)
	if err1 == nil && err2 == nil && os.SameFile(mine, theirs) {
		return nil
	}
	return account.Errorf(account.KindRefused, fmt.Sprintf("%s through the database %s, not %s: use --db %s (one owner per account on a machine)",
		hello.Lease, hello.DB, store.Redact(h.cfg.DB), hello.DB))
}

// drop forgets the account API in use (gone is it, or nil for any): the
// next call connects again.
func (h *Handle) drop(gone account.Account) {
	h.mu.Lock()
	if gone != nil && h.cur != gone {
		h.mu.Unlock()
		return
	}
	owner, client, release := h.owner, h.client, h.release
	h.owner, h.client, h.cur, h.release, h.watched = nil, nil, nil, nil, nil
	h.mu.Unlock()
	if release != nil {
		release()
	}
	if owner != nil {
		owner.Close()
	}
	if client != nil {
		client.Close()
	}
}

// do runs op on the owner of the moment, and again on the next one when
// that owner went away.
func (h *Handle) do(ctx context.Context, op func(account.Account) error) error {
	for {
		a, err := h.current(ctx)
		if err != nil {
			return err
		}
		err = op(a)
		if !errors.Is(err, account.ErrOwnerGone) || ctx.Err() != nil {
			return err
		}
		h.drop(a)
	}
}

// Locate: see account.Account. Items without an id get one here, so the
// request carried to the next owner is not started twice.
func (h *Handle) Locate(ctx context.Context, req account.LocateRequest) (res *account.LocateResult, err error) {
	req.Items = append([]account.LocateItem(nil), req.Items...)
	for i := range req.Items {
		if req.Items[i].ID == "" {
			req.Items[i].ID = workflow.NewID()
		}
	}
	err = h.do(ctx, func(a account.Account) error { res, err = a.Locate(ctx, req); return err })
	return res, err
}

// Quote: see account.Account (ids are made up here, as for Locate).
func (h *Handle) Quote(ctx context.Context, req account.QuoteRequest) (res *account.LocateResult, err error) {
	req.Items = append([]account.QuoteItem(nil), req.Items...)
	for i := range req.Items {
		if req.Items[i].ID == "" {
			req.Items[i].ID = workflow.NewID()
		}
	}
	err = h.do(ctx, func(a account.Account) error { res, err = a.Quote(ctx, req); return err })
	return res, err
}

// CreditBack: see account.Account (an id is made up here, as for Locate,
// but for the unused shares: the owner starts one credit-back a row).
func (h *Handle) CreditBack(ctx context.Context, req account.CreditBackRequest) (s *account.CreditBackResult, err error) {
	if req.ID == "" && !req.Unused {
		req.ID = workflow.NewID()
	}
	err = h.do(ctx, func(a account.Account) error { s, err = a.CreditBack(ctx, req); return err })
	return s, err
}

// Short: see account.Account (the ids are made up here, as for Locate).
func (h *Handle) Short(ctx context.Context, req account.ShortRequest) (res *account.ShortResult, err error) {
	if req.LocateID == "" {
		req.LocateID = workflow.NewID()
	}
	if req.ClientOrderID == "" {
		req.ClientOrderID = workflow.NewOrderID()
	}
	err = h.do(ctx, func(a account.Account) error { res, err = a.Short(ctx, req); return err })
	return res, err
}

// PlaceOrder: see account.Account (the clientOrderId is made up here when
// empty).
func (h *Handle) PlaceOrder(ctx context.Context, req account.PlaceOrderRequest) (o *workflow.Order, err error) {
	if req.Order.ClientOrderID == "" {
		req.Order.ClientOrderID = workflow.NewOrderID()
	}
	err = h.do(ctx, func(a account.Account) error { o, err = a.PlaceOrder(ctx, req); return err })
	return o, err
}

// CancelOrder: see account.Account.
func (h *Handle) CancelOrder(ctx context.Context, req account.CancelOrderRequest) (o *workflow.Order, err error) {
	err = h.do(ctx, func(a account.Account) error { o, err = a.CancelOrder(ctx, req); return err })
	return o, err
}

// Answer: see account.Account.
func (h *Handle) Answer(ctx context.Context, req account.AnswerRequest) error {
	return h.do(ctx, func(a account.Account) error { return a.Answer(ctx, req) })
}

// Cancel: see account.Account.
func (h *Handle) Cancel(ctx context.Context, req account.CancelRequest) error {
	return h.do(ctx, func(a account.Account) error { return a.Cancel(ctx, req) })
}

// Follow: see account.Account. When the owner goes away, it follows the
// workflow on the next owner (this process, perhaps).
func (h *Handle) Follow(ctx context.Context, req account.FollowRequest, on func(account.Update)) (w *workflow.Workflow, err error) {
	err = h.do(ctx, func(a account.Account) error {
		w, err = a.Follow(ctx, req, on)
		req.FromStart = false // shown already, if the next owner is followed
		return err
	})
	return w, err
}

// Subscribe: see account.Account. The channel outlives a change of owner:
// it is fed by each owner in turn until ctx ends.
func (h *Handle) Subscribe(ctx context.Context) (<-chan account.Update, error) {
	out := make(chan account.Update, 256)
	first := make(chan error, 1)
	go func() {
		defer close(out)
		subscribed := false
		for ctx.Err() == nil {
			var in <-chan account.Update
			err := h.do(ctx, func(a account.Account) error {
				var err error
				in, err = a.Subscribe(ctx)
				return err
			})
			if !subscribed {
				subscribed = true
				first <- err
			}
			if err != nil {
				return
			}
			for u := range in { // closed when ctx ends
				select {
				case out <- u:
				case <-ctx.Done():
				}
			}
			// The owner stopped: on to the next.
			h.mu.Lock()
			cur := h.cur
			h.mu.Unlock()
			if cur != nil && ctx.Err() == nil {
				h.drop(cur)
			}
		}
	}()
	return out, <-first
}

// RunJob: see account.Account. When the owner goes away mid-run, the run
// is made again on the next owner: a job adopts what an earlier run left
// open.
func (h *Handle) RunJob(ctx context.Context, req account.JobRequest) (res *account.JobResult, err error) {
	err = h.do(ctx, func(a account.Account) error { res, err = a.RunJob(ctx, req); return err })
	return res, err
}

// Status: see account.Account. An account a daemon lists but cannot
// serve now is answered at once with why (Status.NotServed), without
// trying to own it: from this process's fleet when it is that daemon,
// else from the daemon's standby record (see Fleet.announce).
func (h *Handle) Status(ctx context.Context, req account.StatusRequest) (st *account.Status, err error) {
	if st, err := h.notServed(ctx); st != nil || err != nil {
		return st, err
	}
	err = h.do(ctx, func(a account.Account) error { st, err = a.Status(ctx, req); return err })
	return st, err
}

// notServed is the account's status when it has no owner this handle uses
// and a daemon that lists it says it cannot serve it (nil otherwise):
// this process's fleet (notOpened), or another process's, from its
// standby record while no live lease names an owner.
func (h *Handle) notServed(ctx context.Context) (*account.Status, error) {
	acct := h.cfg.Engine.Account
	h.mu.Lock()
	cur, why, since, retry := h.cur, h.notOpened, h.notSince, h.retryAt
	h.mu.Unlock()
	switch {
	case cur != nil:
		return nil, nil
	case why != nil:
		host, _ := os.Hostname()
		return &account.Status{Account: acct, NotServed: &account.NotServed{PID: os.Getpid(), Host: host, Reason: why.Error(), Since: since, Retry: retry}}, nil
	}
	st := h.cfg.Engine.Store
	sbs, err := st.Standbys(ctx, acct)
	if err != nil {
		return nil, local.Classify(err)
	}
	i := slices.IndexFunc(sbs, func(sb locator.Standby) bool { return sb.NotServed != "" })
	if i < 0 {
		return nil, nil
	}
	if _, err := st.LiveLease(ctx, acct); !errors.Is(err, store.ErrNotFound) {
		return nil, nil // an owner serves it (or the database does not say): asked
	}
	sb := sbs[i]
	return &account.Status{Account: acct, Standbys: sbs,
		NotServed: &account.NotServed{PID: sb.PID, Host: sb.Host, Reason: sb.NotServed, Since: sb.NotServedSince, Retry: sb.Retry}}, nil
}

// Fees: see account.Account.
func (h *Handle) Fees(ctx context.Context, req account.FeesRequest) (r *account.FeesResult, err error) {
	err = h.do(ctx, func(a account.Account) error { r, err = a.Fees(ctx, req); return err })
	return r, err
}

// Today: see account.Account.
func (h *Handle) Today(ctx context.Context, req account.TodayRequest) (t *account.Today, err error) {
	err = h.do(ctx, func(a account.Account) error { t, err = a.Today(ctx, req); return err })
	return t, err
}

// Read: see account.Account.
func (h *Handle) Read(ctx context.Context, req account.ReadRequest) (r *account.ReadResult, err error) {
	err = h.do(ctx, func(a account.Account) error { r, err = a.Read(ctx, req); return err })
	return r, err
}

// Watch: see account.Account. When the owner goes away, it watches the
// stream on the next owner (this process, perhaps), whose first event
// says it is connecting.
func (h *Handle) Watch(ctx context.Context, req account.WatchRequest, on func(account.WatchEvent)) error {
	return h.do(ctx, func(a account.Account) error { return a.Watch(ctx, req, on) })
}

// Records: see account.Account.
func (h *Handle) Records(ctx context.Context, req account.RecordsRequest) (r *account.Records, err error) {
	err = h.do(ctx, func(a account.Account) error { r, err = a.Records(ctx, req); return err })
	return r, err
}

// Report: see account.Account.
func (h *Handle) Report(ctx context.Context, req account.ReportRequest) (r *locator.Report, err error) {
	err = h.do(ctx, func(a account.Account) error { r, err = a.Report(ctx, req); return err })
	return r, err
}

// Audit: see account.Account.
func (h *Handle) Audit(ctx context.Context, req account.AuditRequest) (t *locator.AuditTrail, err error) {
	err = h.do(ctx, func(a account.Account) error { t, err = a.Audit(ctx, req); return err })
	return t, err
}

// Plan: see account.Account.
func (h *Handle) Plan(ctx context.Context, req account.PlanRequest) (p *account.PlanResult, err error) {
	err = h.do(ctx, func(a account.Account) error { p, err = a.Plan(ctx, req); return err })
	return p, err
}

// Size: see account.Account.
func (h *Handle) Size(ctx context.Context, req account.SizeRequest) (z *locator.Sizing, err error) {
	err = h.do(ctx, func(a account.Account) error { z, err = a.Size(ctx, req); return err })
	return z, err
}
