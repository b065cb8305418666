package service_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/accounttest"
	"github.com/locatorhq/locator/internal/local"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/workflow"
)

// owned is the simulator, a store and this process owning LV100001 (live)
// in a private runtime folder.
type owned struct {
	sim   *simtest.Bundle
	st    *store.Store
	owner *service.Owner
	cfg   service.OwnerConfig
}

// own owns the account on a SQLite file.
func own(t *testing.T) *owned {
	t.Helper()
	return ownOn(t, filepath.Join(t.TempDir(), "locator.db"), nil)
}

// testToken is the owner token of the tests' network owners.
const testToken = "0123456789abcdef0123456789abcdef"

// ownOn owns the account on the database db (a path or a Postgres URL),
// serving other hosts too when network is set, on a simulator started with
// opts.
func ownOn(t *testing.T, db string, network *wire.Network, opts ...simtest.Option) *owned {
	t.Helper()
	return ownTuned(t, db, network, nil, opts...)
}

// ownTuned is ownOn with the owner's configuration changed by tune first
// (when set).
func ownTuned(t *testing.T, db string, network *wire.Network, tune func(*service.OwnerConfig), opts ...simtest.Option) *owned {
	t.Helper()
	sim := simtest.New(t, opts...)
	st, err := store.Open(t.Context(), db, sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// A short folder: a socket's path is at most 108 bytes.
	run, err := os.MkdirTemp("", "lr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	// Virtual time runs while the engine's poller and dispatcher wait on
	// it (the owner's heartbeat keeps real time), and stands still while a
	// question waits on a person (who takes no virtual time to answer, even
	// when the question crosses the socket) and while the engine's loop has
	// an event in hand (an offer's row, say: real time never runs past it).
	var owner atomic.Pointer[service.Owner]
	sim.RunClockWhile(t, 2, func() bool {
		o := owner.Load()
		return o == nil || o.Idle()
	})
	cfg := service.OwnerConfig{
		Engine: engine.Config{Client: sim.Client(t, sim.Live), Store: st, Clock: sim.Clock, Account: "LV100001", Env: brokerclient.EnvLive},
		DB:     db, BaseURL: sim.URL, RuntimeDir: run, Role: wire.RoleCommand, Network: network,
	}
	if tune != nil {
		tune(&cfg)
	}
	o, err := service.Own(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	owner.Store(o)
	return &owned{sim: sim, st: st, owner: o, cfg: cfg}
}

// TestConformance runs the account API's one suite against the owner's
// in-process implementation and against a follower through the socket
// transport (and its read cases against the reads of a process with no
// owner to ask, local.Alone): all must give the same results, updates and
// exit codes.
func TestConformance(t *testing.T) {
	t.Run("owner", func(t *testing.T) {
		accounttest.Run(t, func(t *testing.T) *accounttest.Env {
			o := own(t)
			return &accounttest.Env{Sim: o.sim, Store: o.st, Open: func(c account.Caller) account.Account {
				if c.ID == "" {
					c.ID = uuid.NewString()
				}
				if c.Ask != nil {
					t.Cleanup(o.owner.Local().Listen(c.ID, c.Ask))
				}
				return o.owner.Local().As(c)
			}}
		})
	})
	// A follower of another host: the owner's account API over TLS on
	// loopback, its certificate pinned from the lease, the owner token
	// presented; the owner's lease on Postgres.
	t.Run("remote", func(t *testing.T) {
		accounttest.Run(t, func(t *testing.T) *accounttest.Env {
			network, err := wire.NewNetwork("127.0.0.1", "", testToken, wire.NetworkLimits{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { network.Close() })
			o := ownOn(t, storetest.Postgres(t), network)
			return &accounttest.Env{Sim: o.sim, Store: o.st, Open: func(c account.Caller) account.Account {
				l := o.owner.Lease()
				cl, err := wire.DialRemote(l.Account, l.Address, l.Pin, testToken, c, o.sim.Client(t, o.sim.Live), o.sim.URL)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(cl.Close)
				return cl
			}}
		})
	})
	t.Run("alone", func(t *testing.T) { accounttest.RunReads(t, alone) })
	t.Run("follower", func(t *testing.T) {
		accounttest.Run(t, func(t *testing.T) *accounttest.Env {
			o := own(t)
			return &accounttest.Env{Sim: o.sim, Store: o.st, Open: func(c account.Caller) account.Account {
				cl := wire.Dial(o.owner.Lease().Endpoint, c, o.sim.Client(t, o.sim.Live), o.sim.URL)
				t.Cleanup(cl.Close)
				return cl
			}}
		})
	})
	// The follower again, every request and answer checked against the
	// published api/openapi.yaml on its way (wireChecked): the document
	// describes the wire the whole suite uses, not just the Go types.
	t.Run("published", func(t *testing.T) {
		accounttest.Run(t, func(t *testing.T) *accounttest.Env {
			o := own(t)
			checked := wireChecked(t, o.owner.Lease().Endpoint)
			return &accounttest.Env{Sim: o.sim, Store: o.st, Open: func(c account.Caller) account.Account {
				cl := wire.Dial(checked, c, o.sim.Client(t, o.sim.Live), o.sim.URL)
				t.Cleanup(cl.Close)
				return cl
			}}
		})
	})
}

// alone is the read cases' world without an owner to read through: the
// reads of local.Alone, as a command that finds no live owner makes them
// (Dialer.Reader), on a client of its own and the database opened for
// reading; the records they read made by an owner beforehand.
func alone(t *testing.T) *accounttest.Env {
	o := own(t)
	rst, err := store.OpenReader(t.Context(), o.cfg.DB, o.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rst.Close() })
	client := o.sim.Client(t, o.sim.Live)
	return &accounttest.Env{Sim: o.sim, Store: o.st,
		Open: func(c account.Caller) account.Account { return o.owner.Local().As(c) },
		Reader: func() account.Reader {
			return &local.Alone{Account: "LV100001", Clock: o.sim.Clock, Store: rst,
				Client: func() (*brokerclient.Client, error) { return client, nil },
				Budget: func() (workflow.Budget, error) { return workflow.Budget{}, nil }}
		}}
}
