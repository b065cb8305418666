package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// locateAll makes one locate per account of accounts, on its symbol of
// round r (100 shares, accepted at up to $0.02 a share, as `locator
// locate SYMBOL 100 --max-price 0.02 --yes`), through the account API of
// the account's owner: its socket, named in its lease, dialled as a
// follower dials it, proving the account's key pair. o.Parallel run at
// once. A locate not yet started whose owner is gone or moving (no live
// lease, its socket gone) is made again through the owner the lease then
// names, as a follower follows the next owner, for up to ownerMoves. It
// counts those filled. A desk of thousands of accounts cannot
// start a `locator locate` process for each on two cores (each is a Go
// binary starting, reading its settings and opening the database), so
// the bench is the follower itself, as a helper of the desk would be.
func (o FleetOptions) locateAll(ctx context.Context, st *store.Store, baseURL string, accounts []int, r int) (int, error) {
	provers := make([]*brokerclient.Client, o.KeyPairs) // one per key pair, made as needed
	var mu sync.Mutex
	prover := func(k int) (*brokerclient.Client, error) {
		mu.Lock()
		defer mu.Unlock()
		if provers[k] == nil {
			id, secret := fleetKey(k)
			c, err := brokerclient.NewClient(brokerclient.WithBaseURL(baseURL), brokerclient.WithCredentials(id, secret))
			if err != nil {
				return nil, err
			}
			provers[k] = c
		}
		return provers[k], nil
	}
	filled := 0
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for _, i := range accounts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := o.locateOne(ctx, st, prover, baseURL, i, r)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				o.Logf("locate on %s: %v", FleetAccount(i), err)
				return
			}
			filled++
		})
	}
	wg.Wait()
	return filled, ctx.Err()
}

// ownerMoves bounds how long a locate waits for its account's next owner
// (see locateAll).
const ownerMoves = 30 * time.Second

// locateOne makes account i's locate of round r through its owner and
// follows it to its end: nil when it filled.
func (o FleetOptions) locateOne(ctx context.Context, st *store.Store, prover func(int) (*brokerclient.Client, error), baseURL string, i, r int) error {
	keys, err := prover(i % o.KeyPairs)
	if err != nil {
		return err
	}
	policy := workflow.Policy{MaxPrice: decimal.RequireFromString("0.02"), AutoAccept: true}
	req := account.LocateRequest{Items: []account.LocateItem{{Symbol: fleetSymbol(i, r), Quantity: 100, Policy: policy}}}
	var c *wire.Client
	var res *account.LocateResult
	for deadline := time.Now().Add(ownerMoves); ; {
		l, lerr := st.LiveLease(ctx, FleetAccount(i))
		if lerr == nil {
			c = wire.Dial(l.Endpoint, account.Caller{Name: "bench", ID: "bench-" + FleetAccount(i), Env: brokerclient.EnvLive}, keys, baseURL)
			if res, err = c.Locate(ctx, req); err == nil {
				break
			}
			c.Close()
		} else {
			err = lerr
		}
		if (lerr == nil && account.KindOf(err) != account.KindOwnerGone) || time.Now().After(deadline) {
			return err
		}
		if err := clock.Sleep(ctx, clock.Real{}, 250*time.Millisecond); err != nil {
			return err
		}
	}
	defer c.Close()
	if err := res.Err(); err != nil {
		return err
	}
	ws, err := account.FollowAll(ctx, c, res.Started, nil)
	switch {
	case err != nil:
		return err
	case len(ws) != 1 || ws[0] == nil:
		return fmt.Errorf("%d workflows followed, want 1", len(ws))
	case ws[0].State != states.Filled:
		return fmt.Errorf("ended %s: %s", ws[0].State, account.OutcomeOf(ws[0]).Words)
	}
	return nil
}
