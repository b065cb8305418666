package service_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// An account that cannot start is retried and reported,
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
	st := o.store(t)
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

// A fleet checks a key pair's accounts on one read of its account list,
// not on each account's detail in turn (spec "API keys" rule 5: writes are
// blocked unless the accountType matches the environment and the
// account is Active; the list rows and the detail share those fields).
// Of LV100001 and LV100002, one key pair, LV100002 is not Active: the
// fleet serves LV100001 and tells why it does not serve LV100002, having
// read the list once and neither account's detail.
func TestFleetChecksAKeyPairOnItsList(t *testing.T) {
	t.Parallel()
	o := newOpener(t, activeBut("LV100002"))
	st := o.store(t)
	client := o.sim.Client(t, o.sim.Live)
	var cfgs []service.Config
	for _, acct := range []string{"LV100001", "LV100002"} {
		cfgs = append(cfgs, service.Config{
			OwnerConfig: service.OwnerConfig{
				Engine: engine.Config{Client: client, Store: st, Clock: o.sim.Clock, Account: acct, Env: brokerclient.EnvLive},
				DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run,
			},
			Caller: account.Caller{Name: "serve"},
		})
	}
	f, err := service.OpenFleet(t.Context(), cfgs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reads := map[string]int{}
	for _, r := range o.sim.Sim.Requests() {
		if r.Method == "GET" && (r.Path == "/v1/api/accounts" || strings.HasPrefix(r.Path, "/v1/api/account/")) {
			reads[r.Path]++
		}
	}
	if want := map[string]int{"/v1/api/accounts": 1}; !maps.Equal(reads, want) {
		t.Errorf("the fleet's start read %v; want %v: the key pair's list once, no account's detail", reads, want)
	}
	var said strings.Builder
	f.Say(t.Context(), &said)
	if !strings.Contains(said.String(), "serving LV100001") || !strings.Contains(said.String(), "not serving LV100002 yet") ||
		!strings.Contains(said.String(), `accountStatus "Restricted"`) {
		t.Errorf("the fleet says %q; want LV100001 served, and LV100002 not, as it is not Active", said.String())
	}
}

// "an account that cannot start yet is retried and
// reported": a daemon's fleet of three accounts, one with a secret the
// broker does not know (spec "Failure behavior": foreign credentials read
// 404), one whose lease another process holds (taken through another
// store handle: pid 4242 on another host), one it serves. Its Status of
// each account it cannot serve answers at once with why, since when and
// when it is tried again (nothing is tried for it), the served one has
// none; its standby record says the same, and a command for the refused
// account is refused with that answer at once rather than waiting for
// the daemon.
func TestFleetReportsAccountsItCannotServe(t *testing.T) {
	t.Parallel()
	o := newOpener(t)
	st := o.store(t)
	other := o.store(t)
	if _, err := other.AcquireLease(t.Context(), locator.Lease{Account: "PP200001", Owner: "daemon:elsewhere", PID: 4242, Host: "elsewhere",
		PacingKey: "another-key-pair"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	bad := o.sim.Live2
	bad.Secret = "not-the-secret"
	badClient := o.sim.Client(t, bad)
	cfg := func(c *brokerclient.Client, acct string, env brokerclient.Env) service.Config {
		return service.Config{
			OwnerConfig: service.OwnerConfig{
				Engine: engine.Config{Client: c, Store: st, Clock: o.sim.Clock, Account: acct, Env: env},
				DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run,
			},
			Caller: account.Caller{Name: "serve"},
		}
	}
	f, err := service.OpenFleet(t.Context(), []service.Config{cfg(badClient, "LV300001", brokerclient.EnvLive),
		cfg(o.sim.Client(t, o.sim.Paper), "PP200001", brokerclient.EnvPaper), cfg(o.sim.Client(t, o.sim.Live), "LV100001", brokerclient.EnvLive)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for acct, why := range map[string]string{"LV300001": "not found for these keys", "PP200001": "owned by pid 4242 on elsewhere"} {
		s, err := f.ByAccount()[acct].Status(t.Context(), account.StatusRequest{})
		if err != nil {
			t.Fatalf("status of %s: %v; want the answer that it is not served", acct, err)
		}
		ns := s.NotServed
		if ns == nil || !strings.Contains(ns.Reason, why) || ns.PID != os.Getpid() || ns.Since.IsZero() || !ns.Retry.After(ns.Since) {
			t.Errorf("status of %s: not served %+v; want this process, %q, since when and a retry after it", acct, ns, why)
		}
	}
	s, err := f.ByAccount()["LV100001"].Status(t.Context(), account.StatusRequest{})
	if err != nil || s.NotServed != nil || !s.Held {
		t.Errorf("status of the served account: %+v, %v; want held, nothing not served", s, err)
	}
	sbs, err := st.Standbys(t.Context(), "LV300001")
	if err != nil || len(sbs) != 1 || !strings.Contains(sbs[0].NotServed, "not found for these keys") || sbs[0].Retry.IsZero() {
		t.Fatalf("standbys of LV300001: %+v, %v; want the fleet's, saying why it is not served", sbs, err)
	}
	cmdStore := o.store(t)
	h, err := service.Open(t.Context(), service.Config{
		OwnerConfig: service.OwnerConfig{
			Engine: engine.Config{Client: badClient, Store: cmdStore, Clock: o.sim.Clock, Account: "LV300001", Env: brokerclient.EnvLive},
			DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run, Role: wire.RoleCommand,
		},
		Caller: account.Caller{Name: "locate"},
	})
	if err == nil {
		h.Close()
	}
	if account.KindOf(err) != account.KindRefused || !strings.Contains(err.Error(), "serves it but cannot now") || !strings.Contains(err.Error(), "not found for these keys") {
		t.Errorf("a command for LV300001: %v; want it refused at once with the serve's reason", err)
	}
}

// Two daemons started together each own the key pairs it lists
// first, though each opens many key pairs at once. Another daemon (pid
// 4242 on elsewhere, announcing every RenewEvery as a starting daemon
// does) lists LV300001's key pair first; a fleet listing it second, after
// LV100001's: the fleet owns LV100001, leaves LV300001 (Say tells to
// whom), and a call for it meanwhile waits rather than taking it. Once
// that daemon stops standing by for it without owning it, the fleet owns
// LV300001, the waiting call served.
func TestFleetLeavesAKeyPairListedFirstElsewhere(t *testing.T) {
	t.Parallel()
	o := newOpener(t)
	st, other := o.store(t), o.store(t)
	elsewhere := locator.Standby{Account: "LV300001", Process: "daemon:elsewhere", PID: 4242, Host: "elsewhere", Rank: 0}
	if err := other.StandBy(t.Context(), elsewhere, service.LeaseTTL); err != nil {
		t.Fatal(err)
	}
	actx, stopAnnouncing := context.WithCancel(t.Context())
	announcing := make(chan error, 1)
	go func() {
		for clock.Sleep(actx, clock.Real{}, service.RenewEvery) == nil {
			if err := other.StandBy(actx, elsewhere, service.LeaseTTL); err != nil {
				announcing <- err
				return
			}
		}
		announcing <- nil
	}()
	defer stopAnnouncing()
	cfg := func(c *brokerclient.Client, acct string) service.Config {
		return service.Config{
			OwnerConfig: service.OwnerConfig{
				Engine: engine.Config{Client: c, Store: st, Clock: o.sim.Clock, Account: acct, Env: brokerclient.EnvLive},
				DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run,
			},
			Caller: account.Caller{Name: "serve"}, Standby: true,
		}
	}
	f, err := service.OpenFleet(t.Context(), []service.Config{cfg(o.sim.Client(t, o.sim.Live), "LV100001"), cfg(o.sim.Client(t, o.sim.Live2), "LV300001")})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var said strings.Builder
	f.Say(t.Context(), &said)
	if !strings.Contains(said.String(), "serving LV100001") || !strings.Contains(said.String(), "waiting for LV300001 (pid "+strconv.Itoa(os.Getpid())+"): pid 4242 on elsewhere lists its key pair first") {
		t.Errorf("the fleet says %q; want LV100001 served, LV300001 left to pid 4242", said.String())
	}
	if l, err := st.LiveLease(t.Context(), "LV300001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LV300001's lease %+v, %v; want none, the account left to the daemon that lists it first", l, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 1)
	go func() { waited <- f.Wait(ctx) }()
	defer func() { cancel(); <-waited }()
	lv3 := f.ByAccount()["LV300001"]
	wctx, wcancel := clock.WithDeadline(t.Context(), o.sim.Clock, o.sim.Clock.Now().Add(20*time.Second))
	_, err = lv3.Status(wctx, account.StatusRequest{})
	ended := wctx.Err()
	wcancel()
	// It waited until its deadline: the error is the deadline's, and on a
	// loaded machine it can come back through a dial that the deadline cut
	// (its text, not its value).
	if err == nil || !errors.Is(ended, context.DeadlineExceeded) {
		t.Errorf("a status of LV300001 while it is left to pid 4242: %v; want it waiting (until its 20 s ran out)", err)
	}
	if l, err := st.LiveLease(t.Context(), "LV300001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LV300001's lease after a call: %+v, %v; want none", l, err)
	}
	stopAnnouncing()
	if err := <-announcing; err != nil && actx.Err() == nil {
		t.Fatal(err)
	}
	if err := other.LeaveStandby(t.Context(), elsewhere); err != nil {
		t.Fatal(err)
	}
	s, err := lv3.Status(t.Context(), account.StatusRequest{})
	if err != nil || !s.Held {
		t.Fatalf("status of LV300001 once pid 4242 stopped standing by: %+v, %v; want it served here", s, err)
	}
	if l, err := st.LiveLease(t.Context(), "LV300001"); err != nil || l.PID != os.Getpid() {
		t.Errorf("LV300001's lease %+v, %v; want this process's", l, err)
	}
}

// activeBut makes every account of the simulator's scenario Active, the
// status that trades (spec "Account"), but those of restricted, which it
// makes Restricted.
func activeBut(restricted ...string) simtest.Option {
	return simtest.WithScenario(func(sc *brokersim.Scenario) {
		for i := range sc.Accounts {
			sc.Accounts[i].Status = "Active"
			if slices.Contains(restricted, sc.Accounts[i].ID) {
				sc.Accounts[i].Status = "Restricted"
			}
		}
	})
}

// store opens the opener's database, closed when t ends.
func (o *opener) store(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), o.db, o.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A dead process's key pairs move whole. A fleet standing by for the
// three accounts of two key pairs (LV100001 and LV100002 of one, LV300001
// of the other, made Active here; the broker's rate limits are per key
// pair, spec "Rate limits"), which another daemon's process owns, takes
// each key pair in one statement once that process's database session
// ends (it died), each account at its next term, rather than one account
// after the other as each standby finds its own lease free (the fleet's
// takeovers gather the key pairs found free at once); all three are then
// served here. Until then it stands by for them. Postgres only (a dead
// owner is known at once by its session there).
func TestFleetTakesADeadProcesssKeyPairAtOnce(t *testing.T) {
	t.Parallel()
	o := newOpener(t, activeBut())
	o.db = storetest.Postgres(t)
	st, other := o.store(t), o.store(t)
	clients := map[string]*brokerclient.Client{}
	clients["LV100001"] = o.sim.Client(t, o.sim.Live)
	clients["LV100002"], clients["LV300001"] = clients["LV100001"], o.sim.Client(t, o.sim.Live2)
	accounts := []string{"LV100001", "LV100002", "LV300001"}
	dead := "dead-" + t.Name()
	var leases []locator.Lease
	for _, acct := range accounts {
		leases = append(leases, locator.Lease{Account: acct, Owner: string(wire.RoleDaemon) + ":dead-" + acct, PID: 4242, Host: "elsewhere",
			Endpoint: "/nowhere/" + acct + ".sock", PacingKey: clients[acct].PacingKey(), Process: dead})
	}
	old, _, err := other.AcquireLeases(t.Context(), leases, time.Hour)
	if err != nil || len(old) != 3 {
		t.Fatalf("the other process's leases: %v, %v", old, err)
	}
	cfg := func(acct string) service.Config {
		return service.Config{
			OwnerConfig: service.OwnerConfig{
				Engine: engine.Config{Client: clients[acct], Store: st, Clock: o.sim.Clock, Account: acct, Env: brokerclient.EnvLive},
				DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run,
			},
			Caller: account.Caller{Name: "serve"}, Standby: true,
		}
	}
	// The dead process had checked LV100001 with its key pair, and
	// LV300001 with another: the takeover goes on from the first check
	// (engine.Config.EnvChecked) and reads the other two accounts' detail.
	if err := st.NoteEnvChecked(t.Context(), "LV100001", clients["LV100001"].PacingKey(), string(brokerclient.EnvLive)); err != nil {
		t.Fatal(err)
	}
	if err := st.NoteEnvChecked(t.Context(), "LV300001", clients["LV100001"].PacingKey(), string(brokerclient.EnvLive)); err != nil {
		t.Fatal(err)
	}
	f, err := service.OpenFleet(t.Context(), []service.Config{cfg("LV100001"), cfg("LV100002"), cfg("LV300001")})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// While that process lives, the fleet stands by for its accounts:
	// the key pair of two, refused at once (its take names the holder),
	// and the account alone on its key pair.
	var said strings.Builder
	f.Say(t.Context(), &said)
	for _, acct := range accounts {
		if !strings.Contains(said.String(), "standing by for "+acct+" (pid "+strconv.Itoa(os.Getpid())+"): account "+acct+" is owned by pid 4242 on elsewhere") {
			t.Errorf("the fleet says %q; want it standing by for %s, owned by pid 4242", said.String(), acct)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 1)
	go func() { waited <- f.Wait(ctx) }()
	defer func() { cancel(); <-waited }()
	storetest.EndSession(t, o.db, dead)
	// The leases move in the fleet's goroutines, which tell nobody: the
	// database is looked at until they did, with a hang guard far past a
	// loaded machine's seconds.
	var took []*locator.Lease
	for deadline := time.Now().Add(2 * time.Minute); len(took) < len(old); {
		took = took[:0]
		for _, l := range old {
			if cur, err := st.LiveLease(t.Context(), l.Account); err == nil && cur.Process == service.Process() {
				took = append(took, cur)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the dead process's %d accounts owned here after 2 minutes", len(took), len(old))
		}
		if err := clock.Sleep(t.Context(), clock.Real{}, 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range took {
		if l.Term != old[i].Term+1 {
			t.Errorf("%s taken at term %d; want term %d", l.Account, l.Term, old[i].Term+1)
		}
	}
	if !took[1].Since.Equal(took[0].Since) {
		t.Errorf("LV100002 taken since %v, LV100001 since %v; want one time (one statement for their key pair)", took[1].Since, took[0].Since)
	}
	for _, acct := range accounts {
		s, err := f.ByAccount()[acct].Status(t.Context(), account.StatusRequest{})
		if err != nil || !s.Held {
			t.Errorf("status of %s: %+v, %v; want it served here", acct, s, err)
		}
	}
	// Each account's owner syncs its cash ledger once it serves it,
	// reading the ledger and not the account's detail: up to its first
	// ledger read, an account's detail reads are its start's.
	detail := map[string]int{}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		clear(detail)
		synced := map[string]bool{}
		for _, r := range o.sim.Sim.Requests() {
			if rest, ok := strings.CutPrefix(r.Path, "/v1/api/account/"); ok && !synced[rest] {
				detail[rest]++
			}
			if acct, _, ok := strings.Cut(strings.TrimPrefix(r.Path, "/v1/api/accounts/"), "/cash-transactions/"); ok {
				synced[acct] = true
			}
		}
		if len(synced) == len(accounts) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledgers read %v after 2 minutes; want every account's", synced)
		}
		if err := clock.Sleep(t.Context(), clock.Real{}, 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if want := map[string]int{"LV100002": 1, "LV300001": 1}; !maps.Equal(detail, want) {
		t.Errorf("account detail read %v; want %v: the start's of the two whose check was not taken over", detail, want)
	}
	recs, err := st.Recoveries(t.Context(), accounts, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, acct := range accounts {
		if want := (store.EnvCheck{PacingKey: clients[acct].PacingKey(), Env: string(brokerclient.EnvLive)}); recs[acct].Checked != want {
			t.Errorf("%s's check: %+v; want %+v (recorded for the next takeover)", acct, recs[acct].Checked, want)
		}
	}
}

// The daemons that lose a takeover's race stand by for the one that won
// it. Two fleets standing by for a key pair of two accounts (LV100001
// and LV100002) whose owner's process dies both take it over: one
// statement takes it for one of them, and the other's take, refused,
// names that fleet's leases, which it then stands by for, taking the key
// pair once that fleet gives it up. Postgres only (a dead owner is known
// at once by its session there). The two fleets are of one process, as
// two daemons' would not be: each tells what it holds (Fleet.Say).
func TestFleetLosingATakeoverStandsByForItsWinner(t *testing.T) {
	t.Parallel()
	o := newOpener(t, activeBut())
	o.db = storetest.Postgres(t)
	other := o.store(t)
	client := o.sim.Client(t, o.sim.Live)
	accounts := []string{"LV100001", "LV100002"}
	dead := "dead-" + t.Name()
	var leases []locator.Lease
	for _, acct := range accounts {
		leases = append(leases, locator.Lease{Account: acct, Owner: string(wire.RoleDaemon) + ":dead-" + acct, PID: 4242, Host: "elsewhere",
			Endpoint: "/nowhere/" + acct + ".sock", PacingKey: client.PacingKey(), Process: dead})
	}
	if old, _, err := other.AcquireLeases(t.Context(), leases, time.Hour); err != nil || len(old) != 2 {
		t.Fatalf("the other process's leases: %v, %v", old, err)
	}
	open := func() (*service.Fleet, func()) {
		st := o.store(t)
		var cfgs []service.Config
		for _, acct := range accounts {
			cfgs = append(cfgs, service.Config{
				OwnerConfig: service.OwnerConfig{
					Engine: engine.Config{Client: client, Store: st, Clock: o.sim.Clock, Account: acct, Env: brokerclient.EnvLive},
					DB:     o.db, BaseURL: o.sim.URL, RuntimeDir: o.run,
				},
				Caller: account.Caller{Name: "serve"}, Standby: true,
			})
		}
		f, err := service.OpenFleet(t.Context(), cfgs)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		waited := make(chan error, 1)
		go func() { waited <- f.Wait(ctx) }()
		// Once: the test closes the winner, and the defers both.
		return f, sync.OnceFunc(func() { cancel(); <-waited; f.Close() })
	}
	f1, close1 := open()
	defer close1()
	f2, close2 := open()
	defer close2()
	storetest.EndSession(t, o.db, dead)
	// Both fleets are of this process: which one won is what each says
	// (a handle of the other, following the winner, is served too).
	says := func(f *service.Fleet, what string) bool {
		var said strings.Builder
		f.Say(t.Context(), &said)
		for _, acct := range accounts {
			if !strings.Contains(said.String(), what+acct) {
				return false
			}
		}
		return true
	}
	await := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); !ok(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 2 minutes", what)
			}
			if err := clock.Sleep(t.Context(), clock.Real{}, 50*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
	}
	var winner, loser *service.Fleet
	await("either fleet serving the dead process's accounts", func() bool {
		switch {
		case says(f1, "serving "):
			winner, loser = f1, f2
		case says(f2, "serving "):
			winner, loser = f2, f1
		}
		return winner != nil
	})
	await("the fleet that lost the race standing by for the winner's leases", func() bool { return says(loser, "standing by for ") })
	if winner == f1 {
		close1()
	} else {
		close2()
	}
	await("the fleet that lost the race serving the accounts once the winner gave them up", func() bool { return says(loser, "serving ") })
}
