package service

import (
	"context"
	"errors"
	"io/fs"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/local"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
)

// Read is one Read of the broker's records about account s for a read
// command (its name in the callers the owner records): through the
// account's live owner when one runs (FollowOwner: its request is on the
// owner's pacer and this process sends the broker nothing), and only when
// none does on d's own client (ReadAlone). It opens the database only to
// find the owner's lease, read-only, and never creates it. A read of no
// account (the list of accounts) goes through no owner. A client that
// cannot be made is refused (KindRefused): nothing was sent.
func (d *Dialer) Read(ctx context.Context, s config.Settings, command string, req account.ReadRequest) (*account.ReadResult, error) {
	client, err := d.Shared(s)
	if err != nil {
		return nil, account.Wrap(account.KindRefused, err.Error(), err)
	}
	if s.Account != "" {
		owner, err := d.liveOwner(ctx, s, command)
		if err != nil {
			return nil, err
		}
		if owner != nil {
			defer owner.Close()
			return owner.Read(ctx, req)
		}
	}
	return local.ReadAlone(ctx, client, s.Account, d.Time().Now(), req)
}

// liveOwner is account s's live owner as a follower reaches it, or nil
// when no live process owns the account (or there is no database yet).
func (d *Dialer) liveOwner(ctx context.Context, s config.Settings, command string) (*wire.Client, error) {
	st, err := store.OpenReader(ctx, s.DB, d.Time())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
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
