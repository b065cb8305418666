package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/local"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
)

// Reading is an account as a read command holds it (Dialer.Reader): its
// live owner's reads, or this process's own; Close ends it.
type Reading struct {
	account.Reader
	// Followed says the reads go through the account's live owner (its
	// broker client, its streams), not this process's own.
	Followed bool
	close    func()
}

// Close ends the reading: the connection to the owner, or the database
// opened for reading.
func (r *Reading) Close() { r.close() }

// Reader is account s's reads for a read command (its name in the callers
// the owner records): through the account's live owner when one runs
// (FollowOwner: its reads are on the owner's pacer and this process sends
// the broker nothing of its own), and, only when none does, here, on d's
// own client and the database opened for reading (local.Alone): never
// created, never migrated, and its absence refused (KindRefused) only by
// a read that needs it. Settings that name no account read alone (the
// list of accounts; status and jobs: the whole database), and so do those
// that cannot prove the account's key pair to an owner (no keys: status
// and jobs need none); the budget they read is their own settings'.
func (d *Dialer) Reader(ctx context.Context, s config.Settings, command string) (*Reading, error) {
	st, err := store.OpenReader(ctx, s.DB, d.Time())
	var noStore error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		noStore = account.Errorf(account.KindRefused, fmt.Sprintf("no database at %s yet (run a locate first, or pass --db)", filepath.Clean(s.DB)))
	case errors.Is(err, store.ErrSchemaBehind):
		return nil, account.Wrap(account.KindRefused, err.Error(), err)
	case err != nil:
		return nil, err
	}
	if st != nil && s.Account != "" && s.Check(true) == nil {
		owner, err := d.liveOwner(ctx, s, st, command)
		if owner != nil || err != nil {
			st.Close()
			if err != nil {
				return nil, err
			}
			return &Reading{Reader: owner, Followed: true, close: owner.Close}, nil
		}
	}
	alone := &local.Alone{Account: s.Account, Clock: d.Time(), Store: st, NoStore: noStore, Budget: s.LocateBudget,
		Client: func() (*brokerclient.Client, error) { return d.Shared(s) }}
	return &Reading{Reader: alone, close: func() {
		if st != nil {
			st.Close()
		}
	}}, nil
}

// liveOwner is account s's live owner as a follower reaches it, whose
// lease st names, or nil when no live process owns the account. A client
// that cannot be made is refused (KindRefused): nothing was sent.
func (d *Dialer) liveOwner(ctx context.Context, s config.Settings, st *store.Store, command string) (*wire.Client, error) {
	cfg, err := d.Config(s, st, command, nil, wire.RoleCommand, false)
	if err != nil {
		return nil, err
	}
	owner, err := FollowOwner(ctx, cfg)
	if errors.Is(err, ErrNoOwner) {
		return nil, nil
	}
	return owner, err
}

// ErrNoOwner is FollowOwner's answer when no live process owns the
// account.
var ErrNoOwner = errors.New("service: no live process owns the account")

// FollowOwner reaches the account's live owner as a follower, never
// owning it: what a read command does, so that beside a running owner its
// reads go through the owner (Read, on the owner's pacer) and it sends the
// broker nothing of its own. The owner is the one cfg's store names in the
// account's lease (cfg.Engine.Store may be a reader's, see
// store.OpenReader), reached over its socket or over TLS as Open reaches
// it; ErrNoOwner when the account has no live lease.
func FollowOwner(ctx context.Context, cfg Config) (*wire.Client, error) {
	l, err := cfg.Engine.Store.LiveLease(ctx, cfg.Engine.Account)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNoOwner
	}
	if err != nil {
		return nil, err
	}
	h := newHandle(cfg)
	c, err := h.dialHolder(*l)
	if err != nil {
		return nil, err
	}
	hello, err := c.Hello(ctx)
	if err == nil {
		err = h.followable(hello)
	}
	if err == nil {
		_, err = c.Authenticate(ctx)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
