package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Issue 26: a process that hands a batch of 300 locates to the owner over
// its socket and follows them (account.FollowAll, as `locator locate`
// does: one follow stream per workflow) and the whole account (Subscribe,
// as a dashboard that follows the owner does) sees every workflow to its
// end, even when it reads nothing until the owner has ended them all: the
// owner's streams wait on the socket, and the subscriptions behind them
// queue rather than drop (the account's stream used to lose what did not
// fit 256 slots, here most of the 300 ends).
func TestFollowerOfBigBatchSeesEveryEnd(t *testing.T) {
	t.Parallel()
	const n = 300
	var symbols []string
	o := ownOn(t, filepath.Join(t.TempDir(), "locator.db"), nil, simtest.WithScenario(func(sc *brokersim.Scenario) {
		for i := range n {
			sym := fmt.Sprintf("FW%03d", i)
			symbols = append(symbols, sym)
			sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: sym, LocateType: 1, Shares: 10000, Price: brokersim.Dec(decimal.RequireFromString("0.01"))})
		}
	}))
	cl := service.Dial(o.owner.Lease().Endpoint, account.Caller{Name: "batch follower", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	items := make([]account.LocateItem, n)
	for i, sym := range symbols {
		items[i] = account.LocateItem{Symbol: sym, Quantity: 500, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.02")}}
	}
	updates, err := cl.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.Locate(ctx, account.LocateRequest{Items: items})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}

	// The follower shows nothing until the owner has ended every workflow:
	// its first update holds every stream up (FollowAll shows one at a
	// time) while the batch runs.
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for _, s := range res.Started {
			if _, err := o.owner.Engine().Wait(ctx, s.ID); err != nil {
				t.Errorf("the owner's wait for %s: %v", s.ID, err)
			}
		}
	}()
	var mu sync.Mutex
	shown := map[string]states.State{}
	ws, err := account.FollowAll(ctx, cl, res.Started, func(u account.Update) {
		<-ended
		if u.Workflow != nil {
			mu.Lock()
			shown[u.Workflow.ID] = u.Workflow.State
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("follow: %v", err)
	}
	for i, w := range ws {
		if w == nil || w.State != states.Filled {
			t.Errorf("%s: followed to %+v, want filled", res.Started[i].ID, w)
			continue
		}
		if s, ok := shown[w.ID]; ok && s != states.Filled {
			t.Errorf("%s: last update shown %s, want its end (filled)", w.ID, s)
		}
	}

	// The account's stream, read only now, has every end.
	open := map[string]bool{}
	for _, s := range res.Started {
		open[s.ID] = true
	}
	for len(open) > 0 {
		select {
		case u, ok := <-updates:
			if !ok {
				t.Fatalf("the account's stream closed with %d ends unseen", len(open))
			}
			if u.Workflow != nil && u.Workflow.Terminal() {
				delete(open, u.Workflow.ID)
			}
		case <-ctx.Done():
			t.Fatalf("the account's stream never brought %d of %d ends", len(open), n)
		}
	}
}
