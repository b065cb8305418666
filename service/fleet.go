package service

import (
	"context"
	"errors"

	"github.com/locatorhq/locator/account"
)

// Fleet is the accounts one process owns as a daemon (`locator serve`
// with several): each with its own engine and lease, those sharing a key
// pair sharing its client, and so its pacer.
type Fleet struct {
	handles []*Handle
}

// OpenFleet owns every account of cfgs as a daemon, in order (see Open);
// when one cannot be owned, it gives up those it owned and says why.
func OpenFleet(ctx context.Context, cfgs []Config) (*Fleet, error) {
	f := &Fleet{}
	for _, cfg := range cfgs {
		cfg.Role = RoleDaemon
		h, err := Open(ctx, cfg)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.handles = append(f.handles, h)
	}
	return f, nil
}

// Handles are the fleet's accounts, in the order given.
func (f *Fleet) Handles() []*Handle { return f.handles }

// Accounts are the fleet's accounts as the account API (the dashboard's).
func (f *Fleet) Accounts() []account.Account {
	out := make([]account.Account, len(f.handles))
	for i, h := range f.handles {
		out[i] = h
	}
	return out
}

// Wait returns when ctx ends (its error) or when one of the accounts can
// no longer be driven: its lease was lost, or its engine stopped.
func (f *Fleet) Wait(ctx context.Context) error {
	fatal := make(chan error, len(f.handles))
	for _, h := range f.handles {
		o := h.Owner()
		if o == nil {
			return errors.New("service: a fleet account is not owned here")
		}
		go func() {
			select {
			case err, ok := <-o.Fatal():
				if ok {
					fatal <- err
				}
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-fatal:
		return err
	}
}

// Close gives every account up.
func (f *Fleet) Close() {
	for _, h := range f.handles {
		h.Close()
	}
}
