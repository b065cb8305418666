package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// bundle is the simulator, a store on a temp file, the owner of LV100001
// and a follower's line to it.
type bundle struct {
	sim    *simtest.Bundle
	db     string
	st     *store.Store
	client *brokerclient.Client
	owner  *service.Owner
	remote *service.Remote
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{sim: simtest.New(t), db: filepath.Join(t.TempDir(), "locator.db")}
	st, err := store.Open(t.Context(), b.db, b.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b.st, b.client = st, b.sim.Client(t, b.sim.Live)
	b.sim.RunClockWhen(t, 3) // the engine's poller and dispatcher, the owner's heartbeat
	cfg := engine.Config{Client: b.client, Store: st, Clock: b.sim.Clock, Account: "LV100001", Env: brokerclient.EnvLive}
	if b.owner, err = service.Own(t.Context(), cfg, b.db, service.RoleCommand); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.owner.Close)
	lease, err := st.LiveLease(t.Context(), "LV100001")
	if err != nil || lease.Owner != b.owner.Lease().Owner {
		t.Fatalf("live lease %+v %v, want the owner's", lease, err)
	}
	b.remote = service.Dial(*lease)
	return b
}

// A follower's locate runs on the owner's engine; following it streams its
// changes and ends with its final record.
func TestFollowerLocate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	id, err := b.remote.Locate(ctx, service.LocateRequest{Symbol: "HTBX", Quantity: 300,
		Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("1")}, Asker: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var changes int
	w, err := b.remote.Follow(ctx, id, false, func(m service.Message) {
		if m.Update != nil {
			changes++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.State != states.Filled || w.Quantity != 300 || w.Asker != "test" || changes == 0 {
		t.Errorf("end %s %d asked by %q after %d changes, want filled 300 asked by test", w.State, w.Quantity, w.Asker, changes)
	}
	// Following an ended workflow answers its end at once.
	if again, err := b.remote.Follow(ctx, id, false, func(service.Message) {}); err != nil || again.State != states.Filled {
		t.Errorf("follow again: %v %v", again, err)
	}
}

// The owner's errors come back as the engine's: bad input, not open.
func TestRemoteErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	if _, err := b.remote.Locate(ctx, service.LocateRequest{Symbol: "NOT A SYMBOL", Quantity: 100}); !errors.Is(err, workflow.ErrInput) {
		t.Errorf("bad symbol: %v, want an input error", err)
	}
	if err := b.remote.Cancel(ctx, "no-such-workflow"); !errors.Is(err, engine.ErrNotOpen) {
		t.Errorf("cancel unknown: %v, want ErrNotOpen", err)
	}
	if _, err := b.remote.CancelOrder(ctx, "no-such-order"); !errors.Is(err, engine.ErrNotOpen) {
		t.Errorf("cancel unknown order: %v, want ErrNotOpen", err)
	}
	for _, req := range []service.JobRequest{
		{Config: []byte(`{"jobs": [`), Job: "loc"},
		{Config: []byte(`{"jobs": []}`), Job: "loc"},
	} {
		if _, err := b.remote.RunJob(ctx, req); !errors.Is(err, workflow.ErrInput) {
			t.Errorf("job %s: %v, want an input error", req.Config, err)
		}
	}
}

// Issue 9 item 1: `run --once` in a process that does not own the account
// hands the run to the owner, which records it and answers its outcome.
func TestRunJobOnTheOwner(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	config := []byte(`{"jobs": [
		{"name": "loc", "kind": "locate", "schedule": "@every 1h", "holidays": "run", "symbols": ["HTBX"], "quantity": 300, "policy": {"maxPrice": 1}},
		{"name": "cheap", "kind": "locate", "schedule": "@every 1h", "holidays": "run", "symbols": ["HTBY"], "quantity": 300, "policy": {"maxPrice": 0.0001}}]}`)
	run, err := b.remote.RunJob(ctx, service.JobRequest{Config: config, Job: "loc", Grace: time.Second})
	if err != nil || run == nil || run.Outcome != store.JobOK || run.Job != "loc" {
		t.Fatalf("run %+v: %v", run, err)
	}
	run, err = b.remote.RunJob(ctx, service.JobRequest{Config: config, Job: "cheap", Grace: time.Second})
	var f *jobs.Failure
	if run == nil || run.Outcome != store.JobFailed || !errors.As(err, &f) || f.Worst != states.Declined {
		t.Fatalf("run %+v: %v, want failed with the policy's decline as its worst", run, err)
	}
}

// A follower whose owner went away learns it as ErrOwnerGone (it then takes
// the account over). The owner leaves the time of its last request on the
// key pair for the next owner's pacer.
func TestOwnerGone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.owner.Close()
	if at, err := b.st.LastRequest(t.Context(), b.client.PacingKey()); err != nil || at.IsZero() || !at.Equal(b.client.LastRequest()) {
		t.Errorf("recorded last request %v %v, want the client's %v", at, err, b.client.LastRequest())
	}
	if _, err := b.remote.Locate(t.Context(), service.LocateRequest{Symbol: "HTBX", Quantity: 100}); !errors.Is(err, service.ErrOwnerGone) {
		t.Errorf("after Close: %v, want ErrOwnerGone", err)
	}
	if service.Reachable(t.Context(), b.remote.Owner()) {
		t.Error("a closed owner is reachable")
	}
}
