package service

import (
	"context"
	"errors"
	"io/fs"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/store"
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
	return ReadAlone(ctx, client, s.Account, d.Time().Now(), req)
}

// liveOwner is account s's live owner as a follower reaches it, or nil
// when no live process owns the account (or there is no database yet).
func (d *Dialer) liveOwner(ctx context.Context, s config.Settings, command string) (*Client, error) {
	st, err := store.OpenReader(ctx, s.DB, d.Time())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	cfg, err := d.Config(s, st, command, nil, RoleCommand, false)
	if err != nil {
		return nil, err
	}
	owner, err := FollowOwner(ctx, cfg)
	if errors.Is(err, ErrNoOwner) {
		return nil, nil
	}
	return owner, err
}
