package brokerclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/locatorhq/locator/clock"
)

// Route names: the spec's "Rate limits" table, one token bucket each.
const (
	routeAccountsList      = "accounts.list"
	routeAccountDetail     = "accounts.detail"
	routePnL               = "pnl"
	routeOrderPlace        = "order.place"
	routeOrderCancel       = "order.cancel"
	routeOrdersCancelAll   = "orders.cancelAll"
	routeEasyToBorrow      = "etb"
	routeOrderGet          = "order.get"
	routeOrdersBook        = "orders.book"
	routeOrdersPaginated   = "orders.paginated"
	routeOrdersArchive     = "orders.archive"
	routeRoutes            = "routes"
	routePositions         = "positions"
	routePositionsClosed   = "positions.closed"
	routePositionsHistoric = "positions.historical"
	routeLocateQuote       = "locates.quote"
	routeLocateAccept      = "locates.accept"
	routeLocateCancel      = "locates.cancel"
	routeLocateSell        = "locates.sell"
	routeLocateHistory     = "locates.history"
	routeLocateInventory   = "locates.inventory"
	routeCashLedger        = "ledger"
)

// routeTemplates are the routes' method and path as the spec writes them,
// with {placeholders} for the ids.
var routeTemplates = map[string]string{
	routeAccountsList:      "GET /v1/api/accounts",
	routeAccountDetail:     "GET /v1/api/account/{accountId}",
	routePnL:               "GET /v1/api/accounts/{accountId}/pnl",
	routeOrderPlace:        "POST /v1/api/accounts/{accountId}/order",
	routeOrderCancel:       "DELETE /v1/api/accounts/{accountId}/orders/{clientOrderId}",
	routeOrdersCancelAll:   "DELETE /v1/api/accounts/orders",
	routeEasyToBorrow:      "GET /v1/api/accounts/{accountId}/is-easy-to-borrow/symbol/{symbol}",
	routeOrderGet:          "GET /v1/api/accounts/{accountId}/order/{clientOrderId}",
	routeOrdersBook:        "GET /v1/api/accounts/{accountId}/orders",
	routeOrdersPaginated:   "GET /v1/api/accounts/{accountId}/orders-with-pagination/start-date/{date}",
	routeOrdersArchive:     "GET /v1/api/accounts/{accountId}/orders/start-date/{date}",
	routeRoutes:            "GET /v1/api/accounts/{accountId}/routes",
	routePositions:         "GET /v1/api/accounts/{accountId}/positions",
	routePositionsClosed:   "GET /v1/api/accounts/{accountId}/positions/closed",
	routePositionsHistoric: "GET /v1/api/accounts/{accountId}/positions/historical",
	routeLocateQuote:       "POST /v1/api/accounts/locates/quote",
	routeLocateAccept:      "POST /v1/api/accounts/locates/accept",
	routeLocateCancel:      "DELETE /v1/api/accounts/locates/cancel/accounts/{accountId}/quoteReqID/{quoteReqID}",
	routeLocateSell:        "POST /v1/api/accounts/locates/sell",
	routeLocateHistory:     "GET /v1/api/accounts/{accountId}/locates/history",
	routeLocateInventory:   "GET /v1/api/accounts/{accountId}/locates/inventory",
	routeCashLedger:        "GET /v1/api/accounts/{accountId}/cash-transactions/start-date/{startDate}",
}

// RouteTemplate is the spec's method and path template of a route (a key
// of RateLimits), or the key itself for one the table does not know.
func RouteTemplate(route string) string {
	if t, ok := routeTemplates[route]; ok {
		return t
	}
	return route
}

// Limit is a token bucket: a sustained rate per second and a burst.
type Limit struct {
	PerSecond float64
	Burst     int
}

// RateLimits is the spec's table, by route. The account list, account detail
// and cash ledger have no published number; the client paces them at one
// call per second, the spec's "space refreshes at least 1 second apart",
// which sits below any bucket the service is likely to run.
var RateLimits = map[string]Limit{
	routeOrderPlace:        {10, 10},
	routeOrderCancel:       {15, 15},
	routeOrdersCancelAll:   {3, 1},
	routeEasyToBorrow:      {2, 2},
	routeOrderGet:          {2, 2},
	routeOrdersBook:        {2, 2},
	routeOrdersPaginated:   {1, 1},
	routeOrdersArchive:     {1, 1},
	routeRoutes:            {1, 1},
	routePositions:         {3, 3},
	routePnL:               {3, 3},
	routePositionsClosed:   {3, 3},
	routePositionsHistoric: {3, 3},
	routeLocateQuote:       {1, 1},
	routeLocateAccept:      {10, 10},
	routeLocateCancel:      {2, 2},
	routeLocateSell:        {10, 10},
	routeLocateHistory:     {2, 2},
	routeLocateInventory:   {2, 2},
	routeAccountsList:      {1, 1},
	routeAccountDetail:     {1, 1},
	routeCashLedger:        {1, 1},
}

// pacingMargin slows every bucket slightly below the published rate, so
// clock skew and network jitter between two requests cannot make the
// service's bucket see them closer together than it allows.
const pacingMargin = 0.95

// marginOf is the share of a route's published rate the client uses: the
// quote route's whole, since quotes of one key pair go one at a time, each
// a second from the broker's answer to the one before (see turn),
// which no network delay can bring closer at the broker; the history
// route's whole too, since an offer waits on its reads (every half second
// across a quote's settle window, poller.Quoted) and the token of its
// burst the client keeps in hand (burstOf) absorbs half a second of a
// read's lateness at the broker, where a 5 % margin would only space the
// reads 526 ms apart; every other route pacingMargin.
func marginOf(route string) float64 {
	if route == routeLocateQuote || route == routeLocateHistory {
		return 1
	}
	return pacingMargin
}

// burstOf is the burst the client uses: one below the published one. The
// client's bucket counts a request when it leaves, the broker's when it
// arrives; with the full burst, a burst's first request arriving a few tens
// of milliseconds late makes the one after the burst arrive early for the
// broker's bucket (a 2/s route with burst 2 tolerates 26 ms of jitter) and
// draws a 429. One token short, the same route tolerates half a second,
// and the sustained rate is unchanged.
func burstOf(l Limit) int {
	if l.Burst > 1 {
		return l.Burst - 1
	}
	return l.Burst
}

// Priority says which of a key pair's requests take its buckets' tokens
// first when they are short: the buckets are one budget, shared by every
// account of the key pair (spec "Rate limits"), and an open offer must not
// wait behind a refresh of an idle account.
type Priority int

// Priorities, lowest first. A request with none in its context is
// PriorityNormal.
const (
	// PriorityIdle: an idle account's refresh, which may wait (the spec's
	// idle cadence is a ceiling, not a promise).
	PriorityIdle Priority = iota
	// PriorityNormal: start-up reads, commands, writes.
	PriorityNormal
	// PriorityUrgent: reads that tell an account's open quote or
	// sell-back what happened to it (an offer seen late is an offer lost).
	PriorityUrgent
	priorities
)

func (p Priority) String() string {
	switch p {
	case PriorityIdle:
		return "idle"
	case PriorityUrgent:
		return "urgent"
	}
	return "normal"
}

type priorityKey struct{}

// WithPriority returns ctx whose requests wait for their tokens at p.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// priorityOf is ctx's Priority (PriorityNormal when none was set).
func priorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok && p >= 0 && p < priorities {
		return p
	}
	return PriorityNormal
}

// pacer holds one limiter per route, shared by every goroutine of a Client.
type pacer struct {
	mu     sync.Mutex
	off    bool
	routes map[string]*routePace
	// emptyAt: every bucket starts as if emptied then (see PaceAfter).
	emptyAt time.Time
	// last is when the latest request was let go.
	last time.Time
	// quote holds the quote route's turn, and answered is when the broker
	// answered the last quote (see turn).
	quote    chan struct{}
	answered time.Time
	seq      uint64
	// holds are the holds of idle requests not released (HoldIdle), by
	// when each lapses; unheld is closed, and made anew, whenever one is
	// released (the requests held look again at what is left).
	holds  map[*time.Time]struct{}
	unheld chan struct{}
}

// routePace is one route's bucket and the requests waiting for it. Only
// one request at a time holds a reservation of a token to come (held:
// when the last one reserved matures), and only an urgent one; the
// others wait in queue, highest priority first, then in order of
// arrival, so an urgent request is let go after at most another urgent
// one's reservation, or the bucket's next token.
type routePace struct {
	lim   *rate.Limiter
	queue []*waiter
	held  time.Time
	// waited is how long the last request of each priority waited for
	// its token.
	waited [priorities]time.Duration
}

// waiter is one request waiting for a token; ready wakes it when it has
// come to the head of the queue.
type waiter struct {
	prio  Priority
	ready chan struct{}
}

// wakeHeadLocked tells the request at the head of q's queue, if any, that
// it is. p.mu is held.
func (q *routePace) wakeHeadLocked() {
	if len(q.queue) > 0 {
		select {
		case q.queue[0].ready <- struct{}{}:
		default:
		}
	}
}

func newPacer() *pacer {
	return &pacer{routes: map[string]*routePace{}, quote: make(chan struct{}, 1), holds: map[*time.Time]struct{}{}, unheld: make(chan struct{})}
}

// maxIdleHold bounds how long a hold (HoldIdle) keeps idle requests
// waiting: a quote's settle window and its read (3 s and the read's own
// wait), with room; a hold its holder never released lapses then. It
// counts from the hold, not from each request's arrival: under a key
// pair's full load idle requests queue longer than that before any hold,
// and a bound from their arrival held none of them (50 accounts on one
// key pair, one locating: its reads waited behind idle ones, quote →
// accept p99 3.5 s where it was 3.0). Holds one after another keep idle
// requests back as long as they come: the idle accounts' cadence
// stretches, a ceiling and not a promise, and an open offer is not seen
// late.
const maxIdleHold = 5 * time.Second

// HoldIdle holds the key pair's idle requests (PriorityIdle) until
// release is called (once; later calls do nothing), or maxIdleHold has
// passed. An account whose sent quote waits for its offer holds them: its
// urgent reads, due at instants it knows, then find their token in the
// bucket, where an idle account's read would have taken it a moment
// before (the client keeps one token of history's burst: one idle read
// empties it for half a second).
func (c *Client) HoldIdle() (release func()) {
	p := c.pacer
	until := c.clock.Now().Add(maxIdleHold)
	p.mu.Lock()
	p.holds[&until] = struct{}{}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			delete(p.holds, &until)
			close(p.unheld)
			p.unheld = make(chan struct{})
		})
	}
}

// heldUntilLocked is when a request of priority prio stops being held:
// for an idle one, when the last hold not released lapses (see HoldIdle);
// zero for the others. p.mu is held.
func (p *pacer) heldUntilLocked(prio Priority) time.Time {
	var until time.Time
	if prio != PriorityIdle {
		return until
	}
	for h := range p.holds {
		until = later(until, *h)
	}
	return until
}

// turn waits until a request of route may leave after its bucket's token:
// at once but for a quote, which waits until no other quote of the client's
// key pair is in flight (every account of a key pair shares its client)
// and a second has passed since the broker answered the last one. The
// broker had that quote when it answered, so the next cannot reach it
// less than a second later whatever the network does, and two accounts'
// engines spacing their own quotes cannot bunch the key pair's. Call done
// when the answer (or the failure) is in.
func (p *pacer) turn(ctx context.Context, clk clock.Clock, route string) (done func(), err error) {
	if p.off || route != routeLocateQuote {
		return func() {}, ctx.Err()
	}
	select {
	case p.quote <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	next := p.answered.Add(time.Second)
	p.mu.Unlock()
	if err := clock.Sleep(ctx, clk, next.Sub(clk.Now())); err != nil {
		<-p.quote
		return nil, err
	}
	return func() {
		p.mu.Lock()
		p.answered = clk.Now()
		p.mu.Unlock()
		<-p.quote
	}, nil
}

// routeLocked is route's pace, made on first use. p.mu is held.
func (p *pacer) routeLocked(route string, now time.Time) *routePace {
	if q := p.routes[route]; q != nil {
		return q
	}
	q := &routePace{lim: newLimiter(route, p.emptyAt, now)}
	p.routes[route] = q
	return q
}

// newLimiter is route's bucket as of now: full, or emptied at emptyAt
// (non-zero: see PaceAfter) and refilling since.
func newLimiter(route string, emptyAt, now time.Time) *rate.Limiter {
	l, ok := RateLimits[route]
	if !ok {
		l = Limit{1, 1}
	}
	r := rate.Limit(l.PerSecond * marginOf(route))
	lim := rate.NewLimiter(r, burstOf(l))
	if emptyAt.IsZero() {
		lim.SetLimitAt(now, r) // start full on clk's time
		return lim
	}
	if emptyAt.After(now) {
		emptyAt = now // a limiter's time never goes back
	}
	lim.SetLimitAt(emptyAt, r)
	lim.ReserveN(emptyAt, burstOf(l)) // empty then, refilling since
	return lim
}

// wait blocks on clk until the route's bucket grants a token to this
// request, ctx's Priority deciding its place among those waiting, or
// until ctx ends. Only an urgent request reserves a token to come; one
// of a lower priority waits until the bucket holds one, so an urgent
// request arriving meanwhile waits for the next token only. Every request
// waiting sleeps on clk (a fake clock sees them all asleep): the head of
// the queue until the reservation held matures (or the bucket refills),
// the others until about when their turn should come, or until told they
// are the head.
func (p *pacer) wait(ctx context.Context, clk clock.Clock, route string) error {
	if p.off {
		return ctx.Err()
	}
	p.mu.Lock()
	arrived := clk.Now()
	q := p.routeLocked(route, arrived)
	w := &waiter{prio: priorityOf(ctx), ready: make(chan struct{}, 1)}
	i := slices.IndexFunc(q.queue, func(o *waiter) bool { return o.prio < w.prio })
	if i < 0 {
		i = len(q.queue)
	}
	q.queue = slices.Insert(q.queue, i, w)
	for {
		now := clk.Now() // under the lock: the limiter's time must never go back
		if until := p.heldUntilLocked(w.prio); until.After(now) {
			if err := p.sitOutHold(ctx, clk, q, w, until.Sub(now)); err != nil {
				return err
			}
			continue
		}
		pos := slices.Index(q.queue, w)
		var short time.Duration // until the bucket holds a token, for a request not urgent
		if w.prio < PriorityUrgent {
			if tokens := q.lim.TokensAt(now); tokens < 1 {
				short = time.Duration((1 - tokens) / float64(q.lim.Limit()) * float64(time.Second))
			}
		}
		if pos == 0 && !q.held.After(now) && short <= 0 {
			return p.takeTurn(ctx, clk, q, w, now, arrived)
		}
		// Not this request's turn yet: another's reservation is held, or
		// this one is not urgent and the bucket is empty (it takes a token
		// only once one is there, never one to come: an urgent request
		// arriving meanwhile goes first, waiting for one token, not two).
		at := later(q.held, now)
		if pos == 0 && !q.held.After(now) {
			at = now.Add(short)
		}
		if pos > 0 {
			at = at.Add(time.Duration(float64(pos) * float64(time.Second) / float64(q.lim.Limit())))
		}
		t := clk.NewTimer(at.Sub(now))
		p.mu.Unlock()
		var err error
		select {
		case <-w.ready:
		case <-t.C():
		case <-ctx.Done():
			err = ctx.Err()
		}
		t.Stop()
		p.mu.Lock()
		if err != nil {
			if i := slices.Index(q.queue, w); i >= 0 {
				q.queue = slices.Delete(q.queue, i, i+1)
				if i == 0 {
					q.wakeHeadLocked()
				}
			}
			p.mu.Unlock()
			return err
		}
	}
}

// sitOutHold takes w out of q's queue while its priority is held (see
// HoldIdle), so that the requests behind it are not held too, and puts it
// back last (idle: the lowest priority) once the holds lapse or wait has
// passed. It sleeps on clk, as every request waiting does (a fake clock
// must see it asleep). p.mu is held on entry and on a nil return; on ctx's
// end it is released and ctx's error returned.
func (p *pacer) sitOutHold(ctx context.Context, clk clock.Clock, q *routePace, w *waiter, wait time.Duration) error {
	i := slices.Index(q.queue, w)
	q.queue = slices.Delete(q.queue, i, i+1)
	if i == 0 {
		q.wakeHeadLocked()
	}
	unheld := p.unheld
	p.mu.Unlock()
	t := clk.NewTimer(wait)
	defer t.Stop()
	select {
	case <-unheld:
	case <-t.C():
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	q.queue = append(q.queue, w)
	return nil
}

// takeTurn takes w, at the head of q's queue, out of it with a token
// reserved at now, wakes the next, and sleeps until the token is due; a
// sleep ended by ctx gives the reservation back. p.mu is held on entry and
// released.
func (p *pacer) takeTurn(ctx context.Context, clk clock.Clock, q *routePace, w *waiter, now, arrived time.Time) error {
	q.queue = q.queue[1:]
	r := q.lim.ReserveN(now, 1)
	d := r.DelayFrom(now)
	mine := now.Add(d)
	q.held, p.last = mine, mine
	q.waited[w.prio] = mine.Sub(arrived)
	q.wakeHeadLocked()
	p.mu.Unlock()
	err := clock.Sleep(ctx, clk, d)
	if err != nil {
		p.mu.Lock()
		r.CancelAt(clk.Now())
		if q.held.Equal(mine) {
			q.held = time.Time{}
			q.wakeHeadLocked()
		}
		p.mu.Unlock()
	}
	return err
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// RouteLoad is how one route's bucket of the key pair is shared at a
// moment: the requests waiting for a token, and how long the last of
// each priority waited, by priority.
type RouteLoad struct {
	Route   string // as the spec writes it (RouteTemplate)
	Waiting [priorities]int
	Waited  [priorities]time.Duration
}

// Load is the client's pacing of the routes it has used, by route
// template: what a key pair's accounts wait for when they share its
// buckets.
func (c *Client) Load() []RouteLoad {
	c.pacer.mu.Lock()
	defer c.pacer.mu.Unlock()
	var out []RouteLoad
	for route, q := range c.pacer.routes {
		l := RouteLoad{Route: RouteTemplate(route), Waited: q.waited}
		for _, w := range q.queue {
			l.Waiting[w.prio]++
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b RouteLoad) int { return strings.Compare(a.Route, b.Route) })
	return out
}

// PaceAfter starts every route's bucket as if emptied at t: the broker's
// buckets are per key pair, and another process (the account's previous
// owner, a moment ago) may have drawn them down until then. When t is
// after this client's own last request, so that another process drew on
// them since (a fleet's key pair it owned, gave up and owns again), a
// bucket this client drew on before is drawn down to what one emptied at
// t holds now, if it holds more: left full, its first requests could
// meet the other process's last ones at the broker. Otherwise this
// client's buckets know what was drawn, as they are. A t in the future
// counts as now.
func (c *Client) PaceAfter(t time.Time) {
	p := c.pacer
	p.mu.Lock()
	defer p.mu.Unlock()
	p.emptyAt = t
	if !t.After(p.last) {
		return
	}
	now := c.clock.Now()
	for route, q := range p.routes {
		// One holding more than a bucket emptied at t would (none holds a
		// token reserved then: its tokens would be below zero) is
		// replaced by such a bucket.
		if fresh := newLimiter(route, t, now); q.lim.TokensAt(now) > fresh.TokensAt(now) {
			q.lim = fresh
		}
	}
}

// LastRequest is when the client's latest request was let go by its pacer
// (zero before any): what the next process on the key pair starts its
// pacer after.
func (c *Client) LastRequest() time.Time {
	c.pacer.mu.Lock()
	defer c.pacer.mu.Unlock()
	return c.pacer.last
}

// PacingKey names the broker's buckets this client draws on, its key pair
// (or its partner client) at its base address, as a hash: processes using
// the same key pair share a record of it without the key id in it.
func (c *Client) PacingKey() string {
	id := "key:" + c.keyID
	if c.keyID == "" && c.partner != nil {
		id = "partner:" + c.partner.ClientID
	}
	sum := sha256.Sum256([]byte(c.baseURL.String() + "\n" + id))
	return hex.EncodeToString(sum[:12])
}
