package local

import (
	"context"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/workflow"
)

// Alone is the account's reads (account.Reader) in a process that found no
// live owner of it (service.Dialer.Reader): the code an owner runs for
// them, run here on this process's own client, whose requests no owner
// paces, and on the database opened for reading (store.OpenReader: never
// created nor migrated). With no Account it reads the whole database
// (every account's records) and of the broker only the list of accounts.
//
// Its errors are the session's, but that the broker's stay the client's
// (a refusal of the keys stays a brokerclient.ErrNotFound), for the
// command to say in its words.
type Alone struct {
	Account string
	Clock   clock.Clock
	// Client is the client of the account's key pair, made on first need
	// (status and jobs read only the database, and need no keys).
	Client func() (*brokerclient.Client, error)
	// Store is the database; nil when there is none yet, and then NoStore
	// says so (Size then knows no last offer).
	Store   *store.Store
	NoStore error
	// Budget is the account's locate budget as the reader's own settings
	// say (the owner keeps its own; this reads the same day's records).
	Budget func() (workflow.Budget, error)
}

var _ account.Reader = (*Alone)(nil)

// client is a's client, or why there is none (KindRefused: nothing was
// sent).
func (a *Alone) client() (*brokerclient.Client, error) {
	c, err := a.Client()
	if err != nil {
		return nil, account.Wrap(account.KindRefused, err.Error(), err)
	}
	return c, nil
}

// Read: see account.Reader; the read is on a's own client.
func (a *Alone) Read(ctx context.Context, req account.ReadRequest) (*account.ReadResult, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	return readBroker(ctx, c, a.Account, a.Clock.Now(), req)
}

// Records: see account.Reader; a reader of no account reads every
// account's.
func (a *Alone) Records(ctx context.Context, req account.RecordsRequest) (*account.Records, error) {
	if a.Store == nil {
		return nil, a.NoStore
	}
	r, err := records(ctx, a.Store, a.Account, req, func(ctx context.Context) (*workflow.BudgetLeft, error) {
		b, err := a.Budget()
		if err != nil {
			return nil, account.Wrap(account.KindRefused, err.Error(), err)
		}
		return engine.BudgetLeftOn(ctx, a.Store, a.Account, b, a.Clock.Now())
	})
	return r, kinded(err)
}

// Audit: see account.Reader.
func (a *Alone) Audit(ctx context.Context, req account.AuditRequest) (*locator.AuditTrail, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	if a.Store == nil {
		return nil, a.NoStore
	}
	return audit(ctx, c, a.Store, a.Account, a.Clock.Now(), req)
}

// Plan: see account.Reader.
func (a *Alone) Plan(ctx context.Context, req account.PlanRequest) (*account.PlanResult, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	if a.Store == nil {
		return nil, a.NoStore
	}
	return plan(ctx, c, a.Store, a.Account, a.Clock.Now(), req)
}

// Size: see account.Reader; with no database, the last offer is not
// known.
func (a *Alone) Size(ctx context.Context, req account.SizeRequest) (*locator.Sizing, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	return ledger.Size(ctx, c, a.Store, a.Account, req.Symbol, req.Price, req.Target)
}
