package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
)

// FleetOptions are a fleet run's settings: a desk's accounts on one
// Postgres database, owned by several `locator serve --standby` processes.
type FleetOptions struct {
	Exe string // the locator binary
	// DB is a postgres:// URL of the server: the run makes a database of
	// its own there, which the serve processes share, and drops it after.
	DB        string
	Accounts  int // accounts, spread evenly over KeyPairs
	KeyPairs  int
	Processes int           // serve processes, each standing by for what the others own
	Idle      time.Duration // how long the owned accounts are watched doing nothing
	// Parallel is how many locates run at once: calls on the account API
	// (the owner's socket, as a follower dials it), or with AtStart
	// `locator locate` commands.
	Parallel int
	// Locating is how many accounts locate (the first ones), the others
	// staying idle meanwhile; 0: every account.
	Locating int
	// Failover signals a process after the locates (FailoverSignal: kill,
	// stop, or both in turn), Trials times, each process in turn, and
	// locates again on the accounts it owned once the others own them.
	Failover       bool
	FailoverSignal string
	Trials         int
	// AtStart starts the locates with the serve processes, before they own
	// their accounts (no idle phase, no failover): each command waits for
	// the process that is to own its account and follows it, and none
	// becomes an owner itself.
	AtStart bool
	// LogDir, when set, keeps each serve process's log there
	// (serve-P.log), and the simulator's request log (requests.json);
	// without it the logs are dropped.
	LogDir string
	Logf   func(format string, args ...any)
}

// Check refuses options that cannot run, before anything runs.
func (o FleetOptions) Check() error {
	switch {
	case !store.IsPostgres(o.DB) && (o.DB != "" || o.Processes != 1):
		return errors.New("the fleet run needs LOCATOR_DB set to a postgres:// URL (it makes a database of its own on that server, and drops it after), or unset with --processes 1 (a SQLite file of its own)")
	case o.KeyPairs < 1 || o.Accounts < o.KeyPairs || o.Accounts > maxFleetAccounts:
		return fmt.Errorf("--accounts %d over --key-pairs %d: want 1 to %d accounts, at least one per key pair", o.Accounts, o.KeyPairs, maxFleetAccounts)
	case !slices.Contains([]string{"", "kill", "stop", "both"}, o.FailoverSignal):
		return fmt.Errorf("--failover-signal %q: want kill, stop or both", o.FailoverSignal)
	case o.Trials < 0 || o.Trials > 20:
		return fmt.Errorf("--trials %d: want 1 to 20", o.Trials)
	case o.Processes < 1 || o.Processes > 16:
		return fmt.Errorf("--processes %d: want 1 to 16", o.Processes)
	case o.Parallel < 1 || o.Idle < 0:
		return errors.New("--parallel must be positive and --idle not negative")
	case o.Locating < 0 || o.Locating > o.Accounts:
		return fmt.Errorf("--locating %d: want 0 (every account) to --accounts", o.Locating)
	}
	return nil
}

// maxFleetAccounts bounds a fleet run's accounts (their names have five
// digits).
const maxFleetAccounts = 20000

// FleetRun is what a fleet run measured. CPU and memory come from
// /proc of each serve process: CPU as user + system time, memory as the
// resident set.
type FleetRun struct {
	Command  string `json:"command"`
	Database string `json:"database"` // postgres or sqlite
	Date     string `json:"date"`
	Host     Host   `json:"host"`
	Accounts int    `json:"accounts"`
	KeyPairs int    `json:"keyPairs"`
	// Processes are the serve processes as measured before any failover
	// (one killed keeps its figures; the process started in its place is
	// not measured).
	Processes []*FleetProcess `json:"processes"`
	// StartSeconds: from the serve processes' start until every account
	// has a live owner and every process has started its engines (said
	// what it serves).
	StartSeconds float64 `json:"startSeconds"`
	// SplitKeyPairs counts key pairs whose accounts more than one process
	// owned at the end (0: the rule holds).
	SplitKeyPairs int `json:"splitKeyPairs"`
	// Exited counts the serve processes that ended by themselves before
	// the run stopped them (the one killed for the failover aside).
	Exited      int     `json:"exited"`
	IdleSeconds float64 `json:"idleSeconds"`
	// Locates one per account, through the account's owner (its account
	// API, or with AtStart a `locator locate` command following it);
	// Filled of them filled.
	Locates       int     `json:"locates"`
	Filled        int     `json:"filled"`
	LocateSeconds float64 `json:"locateSeconds"`
	// With Failover: each trial, the p50 and the max of their seconds,
	// and the first trial's figures (see FailoverTrial).
	Trials          []FailoverTrial `json:"failoverTrials,omitempty"`
	FailoverP50     float64         `json:"failoverP50Seconds,omitempty"`
	FailoverMax     float64         `json:"failoverMaxSeconds,omitempty"`
	Moved           int             `json:"moved,omitempty"`
	FailoverSeconds float64         `json:"failoverSeconds,omitempty"`
	MovedFilled     int             `json:"movedFilled,omitempty"`
	// AfterRSSMB is the resident set of the processes left, owning every
	// account, after those locates.
	AfterRSSMB float64 `json:"afterRSSMB,omitempty"`
	// From the simulator's request log, over the whole run.
	Requests   int `json:"requests"`
	Status429  int `json:"status429"`
	Quotes     int `json:"quotes"`
	Duplicates int `json:"duplicateQuotes"` // quotes beyond the first of a symbol
	// From each quote to its first accept, and from the history read
	// that showed the offer (the account's last before the accept) to
	// the accept, by the simulator's clock: how long an open offer waits
	// on the key pair's other accounts.
	QuoteToAcceptP50     float64 `json:"quoteToAcceptP50Seconds"`
	QuoteToAcceptP99     float64 `json:"quoteToAcceptP99Seconds"`
	OfferSeenToAcceptP50 float64 `json:"offerSeenToAcceptP50Seconds"`
	OfferSeenToAcceptP99 float64 `json:"offerSeenToAcceptP99Seconds"`
	// Quote → accept taken apart (the simulator's record of when each
	// quote settled as Offered besides its request log): the quote
	// settling (the broker's own 1.5 to 3 s), then the offer until the
	// account's first history read after it.
	QuoteToOfferP50 float64 `json:"quoteToOfferP50Seconds"`
	QuoteToOfferP99 float64 `json:"quoteToOfferP99Seconds"`
	OfferToReadP50  float64 `json:"offerToReadP50Seconds"`
	OfferToReadP99  float64 `json:"offerToReadP99Seconds"`
	// Per account of the fleet (all processes' figures over all accounts).
	RSSMBPerAccount           float64 `json:"rssMBPerAccount"`
	IdleCPUmsPerAccountMinute float64 `json:"idleCPUmsPerAccountMinute"`
	// IdleRequestsPerAccountMinute: the broker requests the simulator saw
	// while every account was owned and idle, per account and minute.
	IdleRequestsPerAccountMinute float64 `json:"idleRequestsPerAccountMinute"`
	// IdleGoroutinesPerAccount: the goroutines of the processes alive at
	// the end of the run, every account idle again (each process's
	// SIGQUIT dump), over the accounts.
	IdleGoroutinesPerAccount float64 `json:"idleGoroutinesPerAccount"`
	CPUmsPerLocate           float64 `json:"cpuMsPerLocate"`
}

// FleetProcess is one serve process's share and cost.
type FleetProcess struct {
	PID   int `json:"pid"`
	Owned int `json:"owned"` // accounts it owned at the end
	// RSSMB is its resident set after the locates, PeakRSSMB its high-water
	// mark; CPU seconds spent starting, idle and during the locates.
	RSSMB     float64 `json:"rssMB"`
	PeakRSSMB float64 `json:"peakRSSMB"`
	StartCPU  float64 `json:"startCPUSeconds"`
	IdleCPU   float64 `json:"idleCPUSeconds"`
	LocateCPU float64 `json:"locateCPUSeconds"`
	cmd       *exec.Cmd
	lastCPU   float64 // CPU seconds at the end of the last phase
	// serving is closed once the process said what it serves (its
	// first line of service.Fleet.Say): every account it lists opened,
	// each engine's start-up reads done, or its failure told.
	serving chan struct{}
	// stderrDone is closed once its stderr ended (the process exited);
	// dumped counts the goroutines of its SIGQUIT dump there.
	stderrDone chan struct{}
	dumped     int
}

// FleetAccount names account i of a fleet run.
func FleetAccount(i int) string { return fmt.Sprintf("FL%05d", i) }

// dialect names the database of a run's LOCATOR_DB (empty: a SQLite
// file of the run's own).
func dialect(db string) string {
	if store.IsPostgres(db) {
		return "postgres"
	}
	return "sqlite"
}

func fleetKey(k int) (id, secret string) {
	return fmt.Sprintf("FLEETKEY%04d", k), fmt.Sprintf("fleet-secret-%04d", k)
}

// fleetSymbol is account i's symbol of round r (the locates, and those
// after each failover): one each, so every quote of a symbol beyond the
// first is a duplicate.
func fleetSymbol(i, r int) string { return fmt.Sprintf("ZF%c%05d", 'A'+r, i) }

// FleetScenario is the default scenario with o's key pairs, each owning
// its share of the accounts (account i belongs to key pair i mod
// KeyPairs), and a Locate pool per account and round of locates.
func FleetScenario(accounts, keyPairs, rounds int) brokersim.Scenario {
	sc := brokersim.DefaultScenario()
	keys := make([]brokersim.ScenarioKey, keyPairs)
	for k := range keys {
		id, secret := fleetKey(k)
		keys[k] = brokersim.ScenarioKey{KeyID: id, Secret: secret, Env: "live"}
	}
	for i := range accounts {
		acct := FleetAccount(i)
		keys[i%keyPairs].Accounts = append(keys[i%keyPairs].Accounts, acct)
		sc.Accounts = append(sc.Accounts, brokersim.ScenarioAccount{ID: acct, Type: "Margin", Status: "Active",
			Cash: brokersim.Dec(decimal.NewFromInt(100000)), SODEquity: brokersim.Dec(decimal.NewFromInt(100000)),
			Leverage: brokersim.Dec(decimal.NewFromInt(4)), OptLevel: 2})
		for r := range rounds {
			sc.Pools = append(sc.Pools, brokersim.ScenarioPool{Symbol: fleetSymbol(i, r), LocateType: 1, Shares: 1_000_000,
				Price: brokersim.Dec(decimal.RequireFromString("0.01"))})
		}
	}
	sc.Keys = append(sc.Keys, keys...)
	return sc
}

// Fleet runs a desk's day in small: a `locator sim` in real time with
// o.Accounts accounts over o.KeyPairs key pairs; o.Processes `locator
// serve --standby` processes on the database o.DB, each listing every
// account, process p first the p-th share of the key pairs (what it owns;
// it stands by for the rest); o.Idle of owned accounts doing nothing; then
// one `locator locate` per account, o.Parallel at a time, each through the
// account's owner; with o.Failover, the first process killed and one more
// locate on each account it owned, through the process that took it over.
// It reports what the simulator saw (429s, quotes) and what each process
// cost.
func Fleet(ctx context.Context, o FleetOptions) (*FleetRun, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "locator-fleet-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	o.Logf("starting locator sim: %d accounts over %d key pairs", o.Accounts, o.KeyPairs)
	sim, err := Spawn(ctx, o.Exe, dir, FleetScenario(o.Accounts, o.KeyPairs, 1+len(o.signals())))
	if err != nil {
		return nil, err
	}
	defer sim.Close()
	env, db, drop, err := o.environment(ctx, dir, sim.BaseURL)
	if err != nil {
		return nil, err
	}
	if drop != nil {
		defer drop(context.WithoutCancel(ctx)) // after the serve processes have stopped
	}
	st, err := store.Open(ctx, db, clock.Real{})
	if err != nil {
		return nil, err
	}
	defer st.Close()

	run := &FleetRun{Command: o.command(), Database: dialect(o.DB), Date: time.Now().UTC().Format(time.RFC3339), Host: ThisHost(),
		Accounts: o.Accounts, KeyPairs: o.KeyPairs}
	start := time.Now()
	live, err := o.startServes(dir, env) // running: a failover replaces one it kills
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, p := range live {
			p.stop()
		}
	}()
	run.Processes = slices.Clone(live)
	if o.AtStart {
		o.Logf("%d serve processes started; locating on every account at once, %d at a time", len(run.Processes), o.Parallel)
		run.Locates, run.Filled = o.Accounts, o.commandAll(ctx, env, o.first(o.Accounts))
		run.LocateSeconds = time.Since(start).Seconds()
	} else {
		o.Logf("%d serve processes started; waiting for every account to be owned", len(run.Processes))
	}
	if err := awaitOwned(ctx, st, run.Processes, o.Accounts, 5*time.Minute, 200*time.Millisecond); err != nil {
		return nil, err
	}
	if err := awaitServing(ctx, run.Processes, start.Add(5*time.Minute)); err != nil {
		return nil, err
	}
	run.StartSeconds = time.Since(start).Seconds()
	var idleFrom, idleTo time.Time
	if o.AtStart {
		if err := run.phase(func(p *FleetProcess, d float64) { p.LocateCPU = d }); err != nil {
			return nil, err
		}
		err = run.cost(ctx, st, run.Processes)
	} else {
		idleFrom, idleTo, err = o.idleThenLocate(ctx, run, st, sim.BaseURL)
	}
	if err != nil {
		return nil, err
	}
	if o.Failover && !o.AtStart && len(run.Processes) > 1 {
		if err := o.failover(ctx, run, live, st, dir, env, sim.BaseURL); err != nil {
			return nil, err
		}
	}
	if err := run.requests(ctx, sim, o.Logf, o.LogDir, idleFrom, idleTo); err != nil {
		return nil, err
	}
	if err := run.tally(live); err != nil {
		return nil, err
	}
	return run, nil
}

// startServes starts o.Processes serve processes (none left running on
// an error).
func (o FleetOptions) startServes(dir string, env []string) ([]*FleetProcess, error) {
	var live []*FleetProcess
	for p := range o.Processes {
		proc, err := o.startServe(dir, env, p, 0)
		if err != nil {
			for _, started := range live {
				started.stop()
			}
			return nil, err
		}
		live = append(live, proc)
	}
	return live, nil
}

// tally counts the serve processes of live that ended by themselves, and
// the goroutines of the others per account, every account idle again
// (goroutines ends each process counted).
func (run *FleetRun) tally(live []*FleetProcess) error {
	goroutines := 0
	for _, p := range live {
		if !p.alive() {
			run.Exited++
			continue
		}
		n, err := p.goroutines()
		if err != nil {
			return err
		}
		goroutines += n
	}
	run.IdleGoroutinesPerAccount = float64(goroutines) / float64(run.Accounts)
	return nil
}

// command is the bench command that runs o.
func (o FleetOptions) command() string {
	return fmt.Sprintf("locator bench --mode fleet --accounts %d --key-pairs %d --processes %d --idle %s --parallel %d --locating %d --failover=%t --failover-signal %s --trials %d --locate-at-start=%t",
		o.Accounts, o.KeyPairs, o.Processes, o.Idle, o.Parallel, o.Locating, o.Failover, o.FailoverSignal, o.Trials, o.AtStart)
}

// awaitServing waits until every process said what it serves (its
// engines started), until deadline.
func awaitServing(ctx context.Context, procs []*FleetProcess, deadline time.Time) error {
	for _, p := range procs {
		select {
		case <-p.serving:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(deadline)):
			return fmt.Errorf("serve process %d did not say what it serves within 5 minutes of its start", p.PID)
		}
	}
	return nil
}

// environment is what the serve processes and commands of a run share:
// the simulator at baseURL, the run's own folders under dir, every key
// pair's keys, and the database (LOCATOR_DB: a SQLite file in dir, or a
// database of its own on o.DB's server, which drop removes).
func (o FleetOptions) environment(ctx context.Context, dir, baseURL string) (env []string, db string, drop func(context.Context) error, err error) {
	env = append(os.Environ(), "LOCATOR_BASE_URL="+baseURL, "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	for k := range o.KeyPairs {
		id, secret := fleetKey(k)
		env = append(env, fmt.Sprintf("FLEET_KEY_%04d=%s", k, id), fmt.Sprintf("FLEET_SECRET_%04d=%s", k, secret))
	}
	if err := os.Mkdir(filepath.Join(dir, "run"), 0o700); err != nil {
		return nil, "", nil, err
	}
	db = filepath.Join(dir, "locator.db")
	if o.DB != "" {
		if db, drop, err = store.NewPostgresDatabase(ctx, o.DB, "locator_bench_"); err != nil {
			return nil, "", nil, err
		}
	}
	return append(env, "LOCATOR_DB="+db), db, drop, nil
}

// idleThenLocate measures the owned accounts o.Idle doing nothing, then
// one locate on each of the first o.Locating (0: all) at once, and each
// process's CPU over start-up, the idle phase and the locates; it returns
// when the idle phase began and ended.
func (o FleetOptions) idleThenLocate(ctx context.Context, run *FleetRun, st *store.Store, baseURL string) (idleFrom, idleTo time.Time, err error) {
	if err := run.phase(func(p *FleetProcess, d float64) { p.StartCPU = d }); err != nil {
		return idleFrom, idleTo, err
	}
	o.Logf("every account owned and served after %.1f s; idle for %s", run.StartSeconds, o.Idle)
	idleFrom = time.Now()
	if err := clock.Sleep(ctx, clock.Real{}, o.Idle); err != nil {
		return idleFrom, idleTo, err
	}
	idleTo = time.Now()
	run.IdleSeconds = idleTo.Sub(idleFrom).Seconds()
	if err := run.phase(func(p *FleetProcess, d float64) { p.IdleCPU = d }); err != nil {
		return idleFrom, idleTo, err
	}
	o.Logf("locating: one locate per account through its owner's account API, %d at a time", o.Parallel)
	locFrom := time.Now()
	locating := o.Locating
	if locating == 0 {
		locating = o.Accounts
	}
	run.Locates = locating
	if run.Filled, err = o.locateAll(ctx, st, baseURL, o.first(locating), 0); err != nil {
		return idleFrom, idleTo, err
	}
	run.LocateSeconds = time.Since(locFrom).Seconds()
	if err := run.phase(func(p *FleetProcess, d float64) { p.LocateCPU = d }); err != nil {
		return idleFrom, idleTo, err
	}
	return idleFrom, idleTo, run.cost(ctx, st, run.Processes)
}

// phase hands set each process's CPU seconds since the last phase.
func (r *FleetRun) phase(set func(*FleetProcess, float64)) error {
	for _, p := range r.Processes {
		cpu, err := p.cpu()
		if err != nil {
			return err
		}
		set(p, cpu-p.lastCPU)
		p.lastCPU = cpu
	}
	return nil
}

// first is the first n accounts' indexes.
func (o FleetOptions) first(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// commandAll runs one `locator locate` per account of accounts on its
// first symbol, o.Parallel at a time, and counts those that exit 0
// (filled): the commands started with the serve processes (AtStart) wait
// for the process that is to own their account, and follow it.
func (o FleetOptions) commandAll(ctx context.Context, env []string, accounts []int) int {
	var mu sync.Mutex
	filled := 0
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for _, i := range accounts {
		k := i % o.KeyPairs
		id, secret := fleetKey(k)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cmd := exec.CommandContext(ctx, o.Exe, "locate", fleetSymbol(i, 0), "100", "--max-price", "0.02", "--yes")
			cmd.Env = slices.Concat(env, []string{"LOCATOR_ACCOUNT=" + FleetAccount(i), "LOCATOR_KEY_ID=" + id, "LOCATOR_SECRET=" + secret})
			out, err := cmd.CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				o.Logf("locate on %s: %v: %s", FleetAccount(i), err, strings.TrimSpace(string(out)))
				return
			}
			filled++
		}()
	}
	wg.Wait()
	return filled
}

// cost fills each process's share (from the database) and memory (from
// /proc), and the figures per account.
func (r *FleetRun) cost(ctx context.Context, st *store.Store, procs []*FleetProcess) error {
	owned, err := ownedBy(ctx, st)
	if err != nil {
		return err
	}
	keyPairOwners := map[string]map[int]bool{}
	var rss, idle, locate float64
	for _, p := range procs {
		p.Owned = len(owned[p.PID])
		for _, l := range owned[p.PID] {
			if keyPairOwners[l.PacingKey] == nil {
				keyPairOwners[l.PacingKey] = map[int]bool{}
			}
			keyPairOwners[l.PacingKey][p.PID] = true
		}
		if p.RSSMB, p.PeakRSSMB, err = p.memory(); err != nil {
			return err
		}
		rss += p.RSSMB
		idle += p.IdleCPU
		locate += p.LocateCPU
	}
	for _, owners := range keyPairOwners {
		if len(owners) > 1 {
			r.SplitKeyPairs++
		}
	}
	n := float64(r.Accounts)
	r.RSSMBPerAccount = rss / n
	if r.IdleSeconds > 0 {
		r.IdleCPUmsPerAccountMinute = idle * 1000 / n / (r.IdleSeconds / 60)
	}
	if r.Filled > 0 {
		r.CPUmsPerLocate = locate * 1000 / float64(r.Filled)
	}
	return nil
}

// requests fills the figures of the simulator's request log.
// The requests between idleFrom and idleTo are the idle phase's.
func (r *FleetRun) requests(ctx context.Context, sim *Target, logf func(string, ...any), logDir string, idleFrom, idleTo time.Time) error {
	log, err := sim.Requests(ctx)
	if err != nil {
		return err
	}
	if logDir != "" {
		if err := writeJSON(logDir, "requests.json", log); err != nil {
			return err
		}
	}
	rows, err := sim.Locates(ctx)
	if err != nil {
		return err
	}
	t := newRequestTally(rows)
	for _, q := range log {
		r.Requests++
		if !q.Time.Before(idleFrom) && q.Time.Before(idleTo) {
			t.idle++
		}
		if q.Status == 429 {
			r.Status429++
			logf("429: %s %s %s (key %s, %s)", q.Time.Format("15:04:05.000"), q.Method, q.Path, q.KeyID, q.UserAgent)
		}
		if q.Status == 200 {
			t.add(q)
		}
	}
	t.fill(r)
	return nil
}

// requestTally gathers, request by request in the order the simulator
// logged them, the latencies and counts a FleetRun reports.
type requestTally struct {
	offered  map[string]time.Time   // when the simulator offered, by quoteReqID
	quotes   map[string]int         // quotes sent, by symbol
	quoted   map[string]time.Time   // quote sent, by quoteReqID
	lastRead map[string]time.Time   // the account's last history read answered
	reads    map[string][]time.Time // the account's history reads answered, in order
	accepted map[string]bool        // quoteReqIDs accepted (the first accept counts)
	sent     int                    // quotes sent

	toOffer, offerToRead   []time.Duration
	toAccept, seenToAccept []time.Duration
	idle                   int // requests of the idle phase
}

// newRequestTally starts a tally that knows when each locate was offered
// (rows is the simulator's locate log).
func newRequestTally(rows []brokersim.LocateRecord) *requestTally {
	t := &requestTally{
		offered:  map[string]time.Time{},
		quotes:   map[string]int{},
		quoted:   map[string]time.Time{},
		lastRead: map[string]time.Time{},
		reads:    map[string][]time.Time{},
		accepted: map[string]bool{},
	}
	for _, row := range rows {
		if !row.Offered.IsZero() {
			t.offered[row.QuoteReqID] = row.Offered
		}
	}
	return t
}

// add counts one answered (200) request: a history read, a quote or an
// accept.
func (t *requestTally) add(q brokersim.RequestRecord) {
	var body struct {
		Symbol     string `json:"symbol"`
		QuoteReqID string `json:"quoteReqID"`
		AccountID  string `json:"accountId"`
	}
	switch route := routeOf(q); {
	case route == "history":
		account := strings.TrimSuffix(strings.TrimPrefix(q.Path, "/v1/api/accounts/"), "/locates/history")
		t.lastRead[account] = q.Time
		t.reads[account] = append(t.reads[account], q.Time)
	case route == "quote" && json.Unmarshal([]byte(q.Body), &body) == nil:
		t.quotes[body.Symbol]++
		t.quoted[body.QuoteReqID] = q.Time
		t.sent++
	case route == "accept" && json.Unmarshal([]byte(q.Body), &body) == nil && !t.accepted[body.QuoteReqID]:
		t.accepted[body.QuoteReqID] = true
		if at, ok := t.quoted[strings.TrimSuffix(body.QuoteReqID, ".SU")]; ok {
			t.toAccept = append(t.toAccept, q.Time.Sub(at))
		}
		if at, ok := t.lastRead[body.AccountID]; ok {
			t.seenToAccept = append(t.seenToAccept, q.Time.Sub(at))
		}
		id := strings.TrimSuffix(body.QuoteReqID, ".SU")
		if at, ok := t.offered[body.QuoteReqID]; ok && !t.quoted[id].IsZero() {
			t.toOffer = append(t.toOffer, at.Sub(t.quoted[id]))
			if seen, ok := firstFrom(t.reads[body.AccountID], at); ok {
				t.offerToRead = append(t.offerToRead, seen.Sub(at))
			}
		}
	}
}

// fill sets r's figures from the tally.
func (t *requestTally) fill(r *FleetRun) {
	r.Quotes += t.sent
	r.QuoteToAcceptP50, r.QuoteToAcceptP99 = percentile(t.toAccept, 0.50), percentile(t.toAccept, 0.99)
	r.OfferSeenToAcceptP50, r.OfferSeenToAcceptP99 = percentile(t.seenToAccept, 0.50), percentile(t.seenToAccept, 0.99)
	if r.IdleSeconds > 0 {
		r.IdleRequestsPerAccountMinute = float64(t.idle) / float64(r.Accounts) / (r.IdleSeconds / 60)
	}
	r.QuoteToOfferP50, r.QuoteToOfferP99 = percentile(t.toOffer, 0.50), percentile(t.toOffer, 0.99)
	r.OfferToReadP50, r.OfferToReadP99 = percentile(t.offerToRead, 0.50), percentile(t.offerToRead, 0.99)
	for _, n := range t.quotes {
		r.Duplicates += n - 1
	}
}

// firstFrom is the first of the sorted times at or after t.
func firstFrom(times []time.Time, t time.Time) (time.Time, bool) {
	i, _ := slices.BinarySearchFunc(times, t, func(a, b time.Time) int { return a.Compare(b) })
	if i == len(times) {
		return time.Time{}, false
	}
	return times[i], true
}
