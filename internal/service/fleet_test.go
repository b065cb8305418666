package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/engine"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Issue 27 item 2: an account that cannot start is retried and reported,
// never a reason for the process to exit. A daemon's fleet of two
// accounts, the first (LV300001) with a secret the broker does not know
// (spec "Failure behavior": foreign credentials read 404, so the account
// is not found for these keys): the fleet opens, tells that it does not
// serve LV300001 yet and why, serves LV100001 (a locate on it fills),
// tries LV300001 again (its keys reach the broker once more after the
// fleet opened) and keeps waiting; only a fleet whose every account is
// refused does not open.
func TestFleetServesPastARefusedAccount(t *testing.T) {
	t.Parallel()
	o := newOpener(t)
	st, err := store.Open(t.Context(), o.db, o.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	bad := o.sim.Live2
	bad.Secret = "not-the-secret"
	refusals := make(chan struct{}, 1000)
	badClient := o.sim.Client(t, bad, brokerclient.WithObserver(func(_ string, status int, _ time.Duration) {
		if status == 404 {
			refusals <- struct{}{}
		}
	}))
	cfg := func(c *brokerclient.Client, acct string) service.Config {
		return service.Config{
			OwnerConfig: service.OwnerConfig{
				Engine: engine.Config{Client: c, Store: st, Clock: o.sim.Clock, Account: acct, Env: brokerclient.EnvLive},
				DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run,
			},
			Caller: account.Caller{Name: "serve"},
		}
	}
	if f, err := service.OpenFleet(t.Context(), []service.Config{cfg(badClient, "LV300001")}); account.KindOf(err) != account.KindRefused {
		if f != nil {
			f.Close()
		}
		t.Fatalf("a fleet of one refused account: %v, want refused", err)
	}
	f, err := service.OpenFleet(t.Context(), []service.Config{cfg(badClient, "LV300001"), cfg(o.sim.Client(t, o.sim.Live), "LV100001")})
	if err != nil {
		t.Fatalf("a fleet with one refused account of two: %v, want it open", err)
	}
	defer f.Close()
	var said strings.Builder
	f.Say(t.Context(), &said)
	if !strings.Contains(said.String(), "not serving LV300001 yet") || !strings.Contains(said.String(), "not found for these keys") {
		t.Errorf("the fleet says %q; want LV300001 reported as not served yet, and why", said.String())
	}
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 1)
	go func() { waited <- f.Wait(ctx) }()
	good := f.ByAccount()["LV100001"]
	res, err := good.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 300,
		Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05")}}}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := good.Follow(t.Context(), account.FollowRequest{ID: res.Started[0].ID}, nil)
	if err != nil || w.State != states.Filled {
		t.Fatalf("the locate on LV100001: %v, %v; want filled", w, err)
	}
	for len(refusals) > 0 { // those of the fleet opening it, and any retry meanwhile
		<-refusals
	}
	select {
	case <-refusals: // tried again
	case err := <-waited:
		t.Fatalf("the fleet ended (%v) with LV100001 served; want it kept", err)
	}
	select {
	case err := <-waited:
		t.Fatalf("the fleet ended (%v) with LV100001 served; want it kept", err)
	default:
	}
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after its context ended: %v, want context.Canceled", err)
	}
}
