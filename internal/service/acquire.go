package service

// How an owner comes to hold its account's lease: taken, taken over from
// an owner that is gone, or left to the owner to follow or the standby
// daemon meant to carry it.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/market"
)

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
