// Package brokersim is a simulated broker: an http.Handler serving the
// broker's REST interface, its two WebSocket streams and the partner OAuth
// login page and token endpoint, driven by a scenario (the embedded default
// is scenario_default.json) and an injectable clock. It is `locator sim`,
// the demo's broker and the oracle of every test. It imports nothing of
// locator's but the clock and the exchange's calendar (market), so it
// cannot agree with brokerclient by accident.
// docs/broker.md summarizes the interface it implements; docs/simulator.md
// lists its admin routes and the choices it made where the
// broker's specification shows nothing. Faults injects failures: answers
// of 500, 503 and 429, connections reset before or after a request is
// processed, delays, and portfolio stream pushes lost while the
// connection stays up (RatePushLoss), each drawn from the seed.
package brokersim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/clock"
)

// Sim is the simulated broker. It is an http.Handler serving the REST
// interface of the spec, its two WebSocket streams under /stream/, plus,
// with WithAdmin, unauthenticated admin routes under /_sim/. All state
// sits behind
// one mutex; timed behaviour (settling quotes, expiring offers, delayed fees)
// is a queue of events run, in time order, up to the clock's "now" before each
// request is answered, so a fake clock moved by a test drives it exactly.
type Sim struct {
	mu     sync.Mutex
	sc     Scenario // as given, for reset
	clk    clock.Clock
	offset time.Duration // admin jumps on clocks that cannot Advance
	now    time.Time     // the instant being processed, under mu
	rng    *rand.Rand
	events eventQueue
	seq    uint64

	keys       map[string]*simKey
	accounts   map[string]*account
	prices     map[string]decimal.Decimal
	etb        map[string]bool
	restricted map[string]bool
	regSHO     map[string]bool

	loc  locateBook
	ord  orderBook
	cash cashLedger

	limits  rateLimits
	faults  faultState
	log     requestLog
	partner partnerState
	str     streams

	mux   *http.ServeMux
	admin bool // serve /_sim/
}

// Option configures a Sim.
type Option func(*Sim)

// WithClock makes the simulator run every timer on c (default: the wall clock).
func WithClock(c clock.Clock) Option { return func(s *Sim) { s.clk = c } }

// WithSeed overrides the scenario's seed.
func WithSeed(seed uint64) Option { return func(s *Sim) { s.sc.Seed = seed } }

// WithClockSkew runs the broker's clock d ahead of the given clock (behind
// when negative): a host whose clock is off, or a replayed day. Its answers
// carry that time in their Date header, as a real server's do.
func WithClockSkew(d time.Duration) Option { return func(s *Sim) { s.offset = d } }

// WithAdmin serves the admin routes under /_sim/ (request log, clock,
// prices, faults, ...). They take no credentials: only `locator sim`, the
// benchmark's private instance and tests turn them on; without it /_sim/
// is an unknown path, as on the broker.
func WithAdmin() Option { return func(s *Sim) { s.admin = true } }

// WithFaults starts the simulator with fault injection configured.
func WithFaults(f Faults) Option { return func(s *Sim) { s.faults.cfg = f } }

// New builds a simulator of the scenario. The scenario is validated first.
func New(sc Scenario, opts ...Option) (*Sim, error) {
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("brokersim: %w", err)
	}
	s := &Sim{sc: sc, clk: clock.Real{}}
	for _, o := range opts {
		o(s)
	}
	if err := s.faults.cfg.validate(); err != nil {
		return nil, fmt.Errorf("brokersim: %w", err)
	}
	s.str.conns = map[*streamConn]bool{}
	s.mux = http.NewServeMux()
	for _, rt := range s.routes() {
		s.mux.Handle(rt.pattern, &routeHandler{s, rt})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
	return s, nil
}

// resetLocked rebuilds the world from the scenario, keeping the clock.
func (s *Sim) resetLocked() {
	sc := s.sc
	s.now = s.clockNow()
	s.rng = rand.New(rand.NewPCG(sc.Seed, sc.Seed^0x9e3779b97f4a7c15))
	s.events = nil
	s.keys = map[string]*simKey{}
	s.accounts = map[string]*account{}
	for _, a := range sc.Accounts {
		s.accounts[a.ID] = &account{
			id: a.ID, typ: a.Type, status: a.Status, paper: a.Type == "Paper",
			cash: a.Cash.Decimal, sodEquity: a.SODEquity.Decimal, leverage: a.Leverage.Decimal,
			optLevel: a.OptLevel, routes: a.Routes,
		}
	}
	for _, k := range sc.Keys {
		key := &simKey{id: k.KeyID, secret: k.Secret, paper: k.Env == "paper"}
		for _, id := range k.Accounts {
			a := s.accounts[id]
			key.accounts = append(key.accounts, a)
			if a.routes == nil {
				a.routes = sc.Routes[k.Env]
			}
		}
		s.keys[k.KeyID] = key
	}
	s.prices = map[string]decimal.Decimal{}
	for sym, p := range sc.Prices {
		s.prices[sym] = p.Decimal
	}
	set := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, v := range list {
			m[v] = true
		}
		return m
	}
	s.etb, s.restricted, s.regSHO = set(sc.EasyToBorrow), set(sc.Restricted), set(sc.RegSHO)
	s.loc = newLocateBook(sc)
	s.ord = newOrderBook(s, sc)
	s.cash = newCashLedger(sc, s.now)
	s.limits = newRateLimits(sc)
	s.log = requestLog{}
	s.resetPartnerLocked()
	s.scheduleRollover()
	s.scheduleOpening()
}

// simKey is an API key pair and the accounts it owns, or the principal a
// partner user's bearer tokens act as (no secret; the user's accounts).
type simKey struct {
	id, secret string
	paper      bool
	accounts   []*account
}

// account is one account's mutable state.
type account struct {
	id, typ, status string
	paper           bool
	cash            decimal.Decimal
	sodEquity       decimal.Decimal
	leverage        decimal.Decimal
	optLevel        int
	routes          []string

	// today's counters, reset at each rollover.
	locateCosts  decimal.Decimal
	commissions  decimal.Decimal
	sharesTraded int64
}

func (a *account) active() bool { return a.status == "Active" }

func (a *account) hasRoute(name string) bool { return slices.Contains(a.routes, name) }

// clockNow is the simulator's clock reading, including admin jumps.
func (s *Sim) clockNow() time.Time { return s.clk.Now().Add(s.offset) }

// Now returns the simulator's current time.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clockNow()
}

// advanceLocked runs every event due by the clock's current reading, each at
// its own instant, then leaves s.now at the reading.
func (s *Sim) advanceLocked() {
	target := s.clockNow()
	for len(s.events) > 0 && !s.events[0].at.After(target) {
		ev := heap.Pop(&s.events).(*event)
		if ev.at.After(s.now) {
			s.now = ev.at
		}
		ev.fn()
	}
	if target.After(s.now) {
		s.now = target
	}
}

// after schedules fn to run d after the instant being processed.
func (s *Sim) after(d time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.events, &event{at: s.now.Add(d), seq: s.seq, fn: fn})
}

// uniform draws a duration in [lo, hi] from the seeded source.
func (s *Sim) uniform(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)+1))
}

// ownedAccount returns the account with id (case-insensitive) when key
// reaches it: one account can be reached by its key pair and by the bearer
// tokens of the users entitled to it.
func (s *Sim) ownedAccount(key *simKey, id string) *account {
	if key == nil {
		return nil
	}
	a := s.accounts[strings.ToUpper(id)]
	if a == nil || !slices.Contains(key.accounts, a) {
		return nil
	}
	return a
}

type event struct {
	at  time.Time
	seq uint64
	fn  func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at.Equal(q[j].at) {
		return q[i].seq < q[j].seq
	}
	return q[i].at.Before(q[j].at)
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	ev := old[len(old)-1]
	*q = old[:len(old)-1]
	return ev
}
