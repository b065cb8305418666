package main

import (
	"testing"

	"github.com/locatorhq/locator/internal/bench"
	"github.com/locatorhq/locator/internal/store/storetest"
)

// Issue 18: a desk's accounts on one Postgres served by two `locator serve
// --standby` processes, as `locator bench --mode fleet` runs them (8
// accounts over 4 key pairs here; 200 over 100 for the README). The
// broker's rate limits are per key pair (spec "Rate limits": several
// processes sharing one key pair share the buckets), so each key pair's
// accounts are owned by one process; both processes own some; a locate
// per account through its owner fills with no 429 and no quote twice; the
// first process killed, the other owns its accounts within seconds and a
// locate on each of them fills through it.
func TestFleetOnPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	server := storetest.Postgres(t) // a database on the test cluster; the run makes one of its own beside it
	o := bench.FleetOptions{Exe: buildBinary(t, t.TempDir()), DB: server, Accounts: 8, KeyPairs: 4, Processes: 2, Parallel: 8,
		Failover: true, Logf: t.Logf}
	run, err := bench.Fleet(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *run)
	for _, p := range run.Processes {
		t.Logf("process %+v", *p)
		if p.Owned == 0 {
			t.Errorf("process %d owned nothing; want each to own its share", p.PID)
		}
	}
	if run.SplitKeyPairs != 0 {
		t.Errorf("%d key pairs owned by two processes; want none", run.SplitKeyPairs)
	}
	if run.Filled != 8 || run.Status429 != 0 || run.Duplicates != 0 {
		t.Errorf("%d of 8 filled, %d responses 429, %d quotes twice; want 8, 0, 0", run.Filled, run.Status429, run.Duplicates)
	}
	if run.Moved == 0 || run.MovedFilled != run.Moved || run.FailoverSeconds > 15 {
		t.Errorf("failover: %d accounts moved in %.1f s, %d locates filled after; want them all filled within 15 s",
			run.Moved, run.FailoverSeconds, run.MovedFilled)
	}
	if run.RSSMBPerAccount <= 0 || run.CPUmsPerLocate <= 0 {
		t.Errorf("no cost measured: %+v", *run)
	}
}

// Issue 27: a desk on one key pair. The broker's rate limits are per key
// pair (spec "Rate limits": history and inventory 2/s, quotes 1/s, shared
// by every account under it), so 20 accounts on one key pair share one
// budget. One `locator serve --standby` process owns all 20 (its start-up
// reads queue on the key pair's pacer without its leases lapsing), then a
// `locator locate` on every account at once, each through the serve: every
// locate fills, the simulator answers no 429 and sees no quote twice, and
// the serve never ends by itself. On SQLite, and on Postgres too when the
// test cluster is there.
func TestDeskOnOneKeyPair(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	exe := buildBinary(t, t.TempDir())
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			server := ""
			if db == "postgres" {
				server = storetest.Postgres(t)
			}
			o := bench.FleetOptions{Exe: exe, DB: server, Accounts: 20, KeyPairs: 1, Processes: 1, Parallel: 20, Logf: t.Logf}
			run, err := bench.Fleet(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", *run)
			if run.Processes[0].Owned != 20 || run.Exited != 0 {
				t.Errorf("the serve owned %d of 20 accounts, %d serve processes ended by themselves; want 20, 0", run.Processes[0].Owned, run.Exited)
			}
			if run.Filled != 20 || run.Status429 != 0 || run.Duplicates != 0 {
				t.Errorf("%d of 20 filled, %d responses 429, %d quotes twice; want 20, 0, 0", run.Filled, run.Status429, run.Duplicates)
			}
		})
	}
}

// Issue 27 item 3: commands meet a starting owner. A `locator serve` of 12
// accounts on one key pair opens them one after another; a `locator
// locate` on every account, started with the serve (before it owns
// them), waits for the serve to own its account and follows it: every
// locate fills, the serve ends owning all 12 (no command became the owner
// of one account of the pair, which would have kept the serve from the
// rest: spec "Rate limits", one process per key pair), no 429, no quote
// twice, and the serve never ends by itself. On SQLite, and on Postgres
// too when the test cluster is there.
func TestCommandsMeetAStartingServe(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	exe := buildBinary(t, t.TempDir())
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			server := ""
			if db == "postgres" {
				server = storetest.Postgres(t)
			}
			o := bench.FleetOptions{Exe: exe, DB: server, Accounts: 12, KeyPairs: 1, Processes: 1, Parallel: 12, AtStart: true, Logf: t.Logf}
			run, err := bench.Fleet(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", *run)
			if run.Processes[0].Owned != 12 || run.Exited != 0 {
				t.Errorf("the serve owned %d of 12 accounts, %d serve processes ended by themselves; want 12, 0", run.Processes[0].Owned, run.Exited)
			}
			if run.Filled != 12 || run.Status429 != 0 || run.Duplicates != 0 {
				t.Errorf("%d of 12 filled, %d responses 429, %d quotes twice; want 12, 0, 0", run.Filled, run.Status429, run.Duplicates)
			}
		})
	}
}
