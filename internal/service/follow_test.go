package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// A process that hands a batch of 300 locates to the owner over
// its socket and follows them (account.FollowAll, as `locator locate`
// does: one follow stream per workflow) and the whole account (Subscribe,
// as a dashboard that follows the owner does) sees every workflow to its
// end, even when it reads nothing until the owner has ended them all: the
// owner's streams wait on the socket, and the subscriptions behind them
// queue rather than drop (the account's stream used to lose what did not
// fit 256 slots, here most of the 300 ends).
func TestFollowerOfBigBatchSeesEveryEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: follows a batch of 300 (CI runs it)")
	}
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
	cl := wire.Dial(o.owner.Lease().Endpoint, account.Caller{Name: "batch follower", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
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
			if _, err := o.owner.Local().As(account.Caller{Name: "wait"}).Follow(ctx, account.FollowRequest{ID: s.ID}, nil); err != nil {
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

// A follower whose subscription falls behind still gets every
// change of its workflow, in order, none skipped and no seam shown:
// Follow takes the changes logged since the last one it delivered from
// the store, on a new subscription made before that read. Here the
// follower of an offer waiting on a person shows nothing while a batch of
// 40 locates runs (far more updates than the backlog of 20) and the offer
// ends unanswered; its changes shown then equal the workflow's log in the
// store. Over the socket the owner runs this same Follow for
// wire.Client and `locator locate`.
func TestFollowerThatFellBehindResumesFromTheLog(t *testing.T) {
	t.Parallel()
	const n, backlog = 40, 20
	var symbols []string
	var published atomic.Int64
	o := ownTuned(t, filepath.Join(t.TempDir(), "locator.db"), nil, func(c *service.OwnerConfig) {
		c.Engine.Backlog = backlog
		c.Engine.OnUpdate = func(account.Update) { published.Add(1) }
	}, simtest.WithScenario(func(sc *brokersim.Scenario) {
		for i := range n + 1 {
			sym := fmt.Sprintf("FB%03d", i)
			symbols = append(symbols, sym)
			sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: sym, LocateType: 1, Shares: 10000, Price: brokersim.Dec(decimal.RequireFromString("0.01"))})
		}
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// A person's locate: no cap, a caller that can answer and never does.
	person := o.owner.Local().As(account.Caller{ID: "desk", Name: "desk", Env: brokerclient.EnvLive, Ask: func(context.Context, account.Question) bool { return false }})
	res, err := person.Locate(ctx, account.LocateRequest{Ask: true, Items: []account.LocateItem{{Symbol: symbols[n], Quantity: 500}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	id := res.Started[0].ID

	following, release := make(chan struct{}), make(chan struct{})
	var before int64
	var first sync.Once
	var shown []string
	type end struct {
		w   *workflow.Workflow
		err error
	}
	followed := make(chan end, 1)
	go func() {
		w, err := person.Follow(ctx, account.FollowRequest{ID: id, FromStart: true}, func(u account.Update) {
			first.Do(func() {
				before = published.Load()
				close(following)
				<-release
			})
			if u.FellBehind {
				t.Errorf("the follower was shown the seam: %+v", u)
			}
			if u.Workflow != nil && u.Event != "" {
				shown = append(shown, fmt.Sprintf("%s-%s>%s", u.From, u.Event, u.Workflow.State))
			}
		})
		followed <- end{w, err}
	}()
	<-following

	items := make([]account.LocateItem, n)
	for i, sym := range symbols[:n] {
		items[i] = account.LocateItem{Symbol: sym, Quantity: 500, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.02")}}
	}
	batch, err := o.owner.Local().As(account.Caller{Name: "batch", Env: brokerclient.EnvLive}).Locate(ctx, account.LocateRequest{Items: items})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(batch.Started, res.Started...) {
		if _, err := o.owner.Local().As(account.Caller{Name: "wait"}).Follow(ctx, account.FollowRequest{ID: s.ID}, nil); err != nil {
			t.Fatalf("the owner's wait for %s: %v", s.ID, err)
		}
	}
	if got := published.Load() - before; got <= backlog+1 {
		t.Fatalf("%d updates published while the follower showed nothing: too few to put it behind", got)
	}
	close(release)
	e := <-followed
	if e.err != nil || e.w == nil || !e.w.Terminal() {
		t.Fatalf("followed to %+v, %v; want its end", e.w, e.err)
	}
	log, err := o.st.Transitions(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tr := range log {
		if tr.From != "" {
			want = append(want, fmt.Sprintf("%s-%s>%s", tr.From, tr.Event, tr.To))
		}
	}
	if fmt.Sprint(shown) != fmt.Sprint(want) {
		t.Errorf("shown %v, logged %v", shown, want)
	}
	t.Logf("%d changes shown across the seam, ending %s", len(shown), e.w.State)
}
