package service_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// opener opens LV100001 as processes of one machine would: each its own
// store on one database, one runtime folder.
type opener struct {
	sim *simtest.Bundle
	db  string
	run string
}

func newOpener(t *testing.T, opts ...simtest.Option) *opener {
	t.Helper()
	run, err := os.MkdirTemp("", "lr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	o := &opener{sim: simtest.New(t, opts...), db: filepath.Join(t.TempDir(), "locator.db"), run: run}
	o.sim.RunClock(t)
	return o
}

func (o *opener) open(t *testing.T, db string, role wire.Role, name string) (*service.Handle, error) {
	t.Helper()
	st, err := store.Open(t.Context(), db, o.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return service.Open(t.Context(), service.Config{
		OwnerConfig: service.OwnerConfig{
			Engine: engine.Config{Client: o.sim.Client(t, o.sim.Live), Store: st, Clock: o.sim.Clock, Account: "LV100001", Env: brokerclient.EnvLive},
			DB:     db, BaseURL: o.sim.URL, RuntimeDir: o.run, Role: role,
		},
		Caller: account.Caller{Name: name},
	})
}

// The first process owns the account, the second follows it; when the
// owner exits, the follower's next call takes the account over and finds
// the workflow it had handed to the first one, which ends filled.
func TestOpenOwnsFollowsAndHandsOver(t *testing.T) {
	t.Parallel()
	o := newOpener(t)
	first, err := o.open(t, o.db, wire.RoleCommand, "first")
	if err != nil {
		t.Fatal(err)
	}
	second, err := o.open(t, o.db, wire.RoleCommand, "second")
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if first.Owner() == nil || second.Owner() != nil {
		t.Fatalf("owners: first %v, second %v; want the first to own and the second to follow", first.Owner() != nil, second.Owner() != nil)
	}
	res, err := second.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 300,
		Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05")}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Started[0].ID
	first.Close() // the owner of the moment exits, the locate under way
	w, err := second.Follow(t.Context(), account.FollowRequest{ID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.State != states.Filled || w.Asker != "second" || second.Owner() == nil {
		t.Errorf("%s asked by %q, second owns %v; want filled, asked by second, the second owning", w.State, w.Asker, second.Owner() != nil)
	}
	quotes := 0
	for _, r := range o.sim.Sim.Requests() {
		if r.Method == "POST" && r.Path == "/v1/api/accounts/locates/quote" {
			quotes++
		}
	}
	if quotes != 1 {
		t.Errorf("%d quotes, want 1", quotes)
	}
}

// Calls that find a handle not connected yet connect once: a daemon's
// keep and a status asked meanwhile, say, do not both own the account, nor
// does one follow the other's socket in this process.
func TestFirstCallsConnectOnce(t *testing.T) {
	t.Parallel()
	o := newOpener(t)
	st, err := store.Open(t.Context(), o.db, o.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := service.NewHandle(service.Config{
		OwnerConfig: service.OwnerConfig{
			Engine: engine.Config{Client: o.sim.Client(t, o.sim.Live), Store: st, Clock: o.sim.Clock, Account: "LV100001", Env: brokerclient.EnvLive},
			DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run, Role: wire.RoleDaemon,
		},
		Caller: account.Caller{Name: "serve"},
	})
	defer h.Close()
	const calls = 8
	errs := make(chan error, calls)
	for range calls {
		go func() {
			_, err := h.Status(t.Context(), account.StatusRequest{})
			errs <- err
		}()
	}
	for range calls {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if h.Owner() == nil {
		t.Fatal("the handle does not own the account after its first calls")
	}
	hello, err := h.Followed(t.Context())
	if err != nil || hello != nil {
		t.Errorf("the handle follows %v (%v) besides owning the account; want it to own it alone", hello, err)
	}
}

// One owner per account per machine whatever database a process opens:
// another database is refused, naming the owner and its database; a
// daemon is refused while another daemon owns the account.
func TestOpenRefusals(t *testing.T) {
	t.Parallel()
	o := newOpener(t)
	owner, err := o.open(t, o.db, wire.RoleDaemon, "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	other := filepath.Join(t.TempDir(), "other.db")
	if _, err := o.open(t, other, wire.RoleCommand, "other"); account.KindOf(err) != account.KindRefused || console.ExitOf(err) != console.ExitUsage {
		t.Errorf("another database: %v, want refused (exit 2)", err)
	}
	if _, err := o.open(t, o.db, wire.RoleDaemon, "second serve"); account.KindOf(err) != account.KindRefused {
		t.Errorf("a second daemon: %v, want refused", err)
	}
	if !owner.Owner().Held() {
		t.Error("the owner lost the account to a refused process")
	}
}
