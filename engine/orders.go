package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

const (
	// followFor is how long an order is looked up for a final or working
	// status; the spec's asynchronous checks take milliseconds.
	followFor = 15 * time.Second
	// followEvery spaces the lookups (the single-order GET allows 2/s).
	followEvery = 500 * time.Millisecond
	// leftoverAge is how old an unsettled order record must be before a
	// starting engine settles it: younger ones may belong to a run still
	// sending.
	leftoverAge = time.Minute
	// defaultLiveRoute is sent when a live account's short names no route
	// (spec: live requires an explicit route, R54).
	defaultLiveRoute = "SMART"
)

// orderPrice checks a limit or stop price: positive, at most the spec's
// decimals, whole cents from $1.00.
func orderPrice(field string, d decimal.Decimal) error {
	if _, err := workflow.ParsePrice(field, d.String()); err != nil || !d.IsPositive() {
		return brokercode.Invalid(field, "%s: want a positive price of at most %s with at most %d decimals", d, workflow.MaxPrice, workflow.PriceDecimals)
	}
	if d.GreaterThanOrEqual(decimal.NewFromInt(1)) && !d.Equal(d.Truncate(2)) {
		// Spec "Cross-cutting conventions": the tick is $0.01 at or above $1.00.
		return brokercode.Invalid(field, "%s: prices from $1.00 trade in whole cents", d)
	}
	return nil
}

// orderRules are the spec's rules on an order's type, time in force and
// prices ("Orders" rules 1 and 2, and the rejections R24 and R78 they
// avoid), checked at now (the broker's time) before anything is sent:
// the four placeable types only; a limit price exactly on Limit and
// StopLimit, a stop price exactly on Stop and StopLimit; extended hours
// (Day_Plus, GTC_Plus) on Limit orders only; no market order outside the
// regular session. Which times in force a route takes is the route's to
// say (Engine.route).
func orderRules(o *Order, now time.Time) error {
	typ, tif := brokerclient.OrderType(o.OrderType), brokerclient.TimeInForce(o.TimeInForce)
	switch typ {
	case brokerclient.OrderTypeMarket, brokerclient.OrderTypeLimit, brokerclient.OrderTypeStop, brokerclient.OrderTypeStopLimit:
	default:
		return brokercode.Invalid("order type", "%q: want Market, Limit, Stop or StopLimit", typ)
	}
	limited := typ == brokerclient.OrderTypeLimit || typ == brokerclient.OrderTypeStopLimit
	stopped := typ == brokerclient.OrderTypeStop || typ == brokerclient.OrderTypeStopLimit
	switch {
	case limited && !o.LimitPrice.IsPositive():
		return brokercode.Invalid("limit price", "a %s order needs one (--limit-price)", typ)
	case !limited && !o.LimitPrice.IsZero():
		return brokercode.Invalid("limit price", "a %s order takes none (a limit price makes it Limit or StopLimit)", typ)
	case stopped && !o.StopPrice.IsPositive():
		return brokercode.Invalid("stop price", "a %s order needs one above zero (--stop-price; the broker rejects it with R24)", typ)
	case !stopped && !o.StopPrice.IsZero():
		return brokercode.Invalid("stop price", "a %s order takes none (a stop price makes it Stop or StopLimit)", typ)
	case (tif == brokerclient.TimeInForceDayPlus || tif == brokerclient.TimeInForceGTCPlus) && typ != brokerclient.OrderTypeLimit:
		return brokercode.Invalid("time in force", "%s (extended hours) takes Limit orders only, not %s", tif, typ)
	case typ == brokerclient.OrderTypeMarket && !market.Regular(now):
		return brokercode.Invalid("order type", "market orders are taken only in the regular session, and it is %s: %s (the broker rejects them with R78); use a limit order, with --tif day-plus for extended hours", market.DateTime(now), sessionHours(now))
	}
	return nil
}

// sessionHours says, for a market order refused at t, when the regular
// session of t's date runs, in the calendar's hours (an early close's
// 13:00 named as one), or why the exchange does not trade that day, and
// when the next session opens.
func sessionHours(t time.Time) string {
	d := market.On(t)
	nextOpen := market.Next(t).Open.In(market.NewYork).Format("Mon 2006-01-02 15:04") + " ET"
	if !d.Trading() {
		return fmt.Sprintf("the exchange is closed today (%s); the next session opens %s", d.Closed(), nextOpen)
	}
	open, end := d.Open.In(market.NewYork).Format("15:04"), d.Close.In(market.NewYork).Format("15:04")
	early := ""
	if d.EarlyClose {
		early = " (an early close)"
	}
	if t.Before(d.Open) {
		return fmt.Sprintf("today's session opens at %s ET and closes at %s ET%s", open, end, early)
	}
	return fmt.Sprintf("today's session ran %s to %s ET%s; the next opens %s", open, end, early, nextOpen)
}

// route returns the route to send: the one asked for, else SMART on a live
// account and none on paper (the broker assigns its paper route), from the
// account's routes as read once a trading day (see routeCache). The
// route (on paper, one of the account's) must take stock orders of the
// type and time in force (spec "Route record": IOC and FOK on ARCA, none
// of the extended hours or IOC on paper); otherwise nothing is sent.
func (e *Engine) route(ctx context.Context, route string, typ brokerclient.OrderType, tif brokerclient.TimeInForce) (string, error) {
	paper := false
	if route == "" {
		env := e.cfg.Env
		if env == "" {
			acct, _, err := e.client.Accounts.Get(ctx, e.cfg.Account)
			if err != nil {
				return "", fmt.Errorf("account: %w", err)
			}
			env = brokerclient.EnvLive
			if acct.IsPaper() {
				env = brokerclient.EnvPaper
			}
		}
		if paper = env == brokerclient.EnvPaper; !paper {
			route = defaultLiveRoute
		}
	}
	routes, err := e.routes.of(ctx, e, false)
	if err != nil {
		return "", err
	}
	if !paper && !slices.ContainsFunc(routes, func(r brokerclient.Route) bool { return r.RouteName == route }) {
		// A route the day's list lacks may have come with a subscription
		// since: the list is read again before it is refused.
		if routes, err = e.routes.of(ctx, e, true); err != nil {
			return "", err
		}
	}
	var names []string
	for _, r := range routes {
		if paper && r.Allows(brokerclient.SecurityTypeStock, typ, tif) {
			return "", nil
		}
		if !paper && r.RouteName == route {
			if !r.Allows(brokerclient.SecurityTypeStock, typ, tif) {
				return "", brokercode.Invalid("route", "%s does not take %s %s orders for stock (its times in force: %s)", route, tif, typ, joinNames(r.TimesInForce))
			}
			return route, nil
		}
		names = append(names, r.RouteName)
	}
	if paper {
		return "", brokercode.Invalid("time in force", "no route of paper account %s takes %s %s orders for stock (its routes: %s)", e.cfg.Account, tif, typ, strings.Join(names, ", "))
	}
	return "", brokercode.Invalid("route", "%q is not available to %s (its routes: %s)", route, e.cfg.Account, strings.Join(names, ", "))
}

// joinNames lists a route's times in force.
func joinNames(tifs []brokerclient.TimeInForce) string {
	s := make([]string, len(tifs))
	for i, t := range tifs {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func orderRequest(o *Order) brokerclient.OrderRequest {
	r := brokerclient.OrderRequest{
		ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: brokerclient.Side(o.Side), OpenClose: brokerclient.OpenClose(o.OpenClose),
		OrderType: brokerclient.OrderType(o.OrderType), SecurityType: brokerclient.SecurityTypeStock,
		TimeInForce: brokerclient.TimeInForce(o.TimeInForce), OrderQuantity: o.Quantity, Route: o.Route,
	}
	// A price is sent when the order has one: a market order carries
	// neither, a limit no stop.
	if limit := o.LimitPrice; !limit.IsZero() {
		r.LimitPrice = &limit
	}
	if stop := o.StopPrice; !stop.IsZero() {
		r.StopPrice = &stop
	}
	return r
}

// orderStream is the account's portfolio-stream follower, started on first
// use; nil when the stream cannot be had, and then orders are followed by
// REST lookups alone. It reads nothing by REST itself: the order workflow
// looks an order up only while the stream is down.
func (e *Engine) orderStream() *brokerclient.OrderFollower {
	e.streamOnce.Do(func() {
		f, err := e.client.Streams.FollowOrders(e.ctx, e.cfg.Account, brokerclient.WithPollInterval(0))
		if err != nil {
			e.streamErr = err
			e.log.Warn("portfolio stream unavailable; orders are followed by REST lookups", "err", err)
			return
		}
		e.stream = f
	})
	return e.stream
}

// OrderStream is the account's portfolio-stream follower, the one the
// engine learns its orders' fates from (started now when no order has
// started it), or why it cannot be had (ErrStopped once the engine
// stopped): what the owner relays to a watcher of the account's orders,
// rather than open a second stream for it. It reads the order book only
// when asked (OrderFollower.Load): while it is down the engine looks its
// own orders up.
func (e *Engine) OrderStream() (*brokerclient.OrderFollower, error) {
	if f := e.orderStream(); f != nil {
		return f, nil
	}
	if e.streamErr != nil {
		return nil, e.streamErr
	}
	return nil, ErrStopped
}

// validOrder checks what the client would refuse to send: its refusal is
// already a *brokercode.InputError.
func validOrder(o *Order) error {
	req := orderRequest(o)
	return req.Validate()
}

// PlaceOrder checks o (its shape by orderRules, its prices by the
// fat-finger guard g, its route, empty meaning SMART on a live account, by
// Engine.route), records its intent, sends it
// once, and follows it until it is final or working (or followFor has
// passed, when it returns the order as it stands).
func (e *Engine) PlaceOrder(ctx context.Context, o *Order, g workflow.Guard) (*Order, error) {
	if err := validOrder(o); err != nil {
		return nil, err
	}
	if err := orderRules(o, e.brokerNow()); err != nil {
		return nil, err
	}
	positions := e.openPositions(ctx) // the cover check's and the guard's: one read
	if err := e.covers(o, positions); err != nil {
		return nil, err
	}
	if _, err := e.guard(ctx, o, g, positions); err != nil {
		return nil, err
	}
	route, err := e.route(ctx, o.Route, brokerclient.OrderType(o.OrderType), brokerclient.TimeInForce(o.TimeInForce))
	if err != nil {
		return nil, err
	}
	o.Route = route
	return e.send(ctx, o)
}

// send records o's intent, sends it once and follows it (PlaceOrder, once
// o is checked).
func (e *Engine) send(ctx context.Context, o *Order) (*Order, error) {
	// Subscribed before the order leaves, so no push can slip between
	// (spec "Portfolio stream").
	var watch *brokerclient.OrderWatch
	if f := e.orderStream(); f != nil {
		watch = f.Watch(o.ClientOrderID)
	}
	if err := e.request(ctx, func(r chan error) event { return placeEv{o: o, watch: watch, reply: r} }); err != nil {
		if watch != nil {
			watch.Close()
		}
		return nil, err
	}
	ctx, cancel := clock.WithDeadline(ctx, e.clock, e.clock.Now().Add(followFor))
	defer cancel()
	got, err := e.WaitOrder(ctx, o.ClientOrderID, true)
	if errors.Is(err, context.DeadlineExceeded) {
		return e.store.GetOrder(context.WithoutCancel(ctx), o.ClientOrderID)
	}
	return got, err
}

// RefreshOrders brings every order the engine holds as working up to the
// broker's order book, read once now, and returns once their records are
// committed. A working order nobody waits on rests after followFor
// (orderBook.resting) and learns nothing more by itself but from the
// stream: a fill at the next session's opening whose push was lost stays
// unknown to the database until the book is read (Start reads it once
// when it holds a working order, for the fills while no owner ran). What
// reads locator's orders as the broker's now (`report`'s shares shorted
// and P&L, through FeesRequest.Orders) asks for this first. An order the
// book no longer lists (a day order of an earlier trading day: the book
// holds today's and the still-working multi-day ones) is left as
// recorded.
func (e *Engine) RefreshOrders(ctx context.Context) error {
	book, _, err := e.client.Orders.Book(ctx, e.cfg.Account)
	if err != nil {
		return fmt.Errorf("order book: %w", err)
	}
	return e.request(ctx, func(r chan error) event { return bookSeenEv{rows: book, reply: r} })
}

// OrdersSettled waits until no order waits on a write-ahead state or on
// its first answer: those an earlier run left unanswered are looked up by
// their ids as the engine starts, never sent again.
func (e *Engine) OrdersSettled(ctx context.Context) error {
	ch, err := ask(ctx, e, func(r chan chan struct{}) event { return settledEv{reply: r} })
	if err != nil {
		return err
	}
	_, err = await(ctx, e, ch)
	return err
}

// CancelOrder cancels a working order through the order workflow and waits
// for the broker's answer.
func (e *Engine) CancelOrder(ctx context.Context, clientOrderID string) (*Order, error) {
	if err := e.request(ctx, func(r chan error) event { return cancelOrderEv{id: clientOrderID, reply: r} }); err != nil {
		return nil, err
	}
	return e.WaitOrder(ctx, clientOrderID, false)
}

// WaitOrder blocks until the order ends (or, with working, is working) and
// returns its record.
func (e *Engine) WaitOrder(ctx context.Context, clientOrderID string, working bool) (*Order, error) {
	ch, err := ask(ctx, e, func(r chan chan *Order) event { return waitOrderEv{id: clientOrderID, working: working, reply: r} })
	if err != nil {
		return nil, err
	}
	if ch == nil {
		return e.store.GetOrder(ctx, clientOrderID)
	}
	got, err := await(ctx, e, ch)
	if err != nil {
		// Nobody waits on ch any more: the order need not be followed
		// for it (see orderBook.resting).
		e.inbox.push(unwaitOrderEv{id: clientOrderID, ch: ch})
	}
	return got, err
}

// Order events on the loop's mailbox.
type (
	orderEvent interface{ orderID() string }
	placeEv    struct {
		o     *Order
		watch *brokerclient.OrderWatch // nil without the stream
		reply chan error
	}
	orderSeenEv struct {
		id string
		in workflow.OrderInput
	}
	cancelOrderEv struct {
		id    string
		reply chan error
	}
	waitOrderEv struct {
		id      string
		working bool
		reply   chan chan *Order
	}
	// unwaitOrderEv drops the waiter of ch, whose wait gave up.
	unwaitOrderEv struct {
		id string
		ch chan *Order
	}
	// settledEv asks for a channel closed once no order waits on a
	// write-ahead state or its first answer.
	settledEv struct{ reply chan chan struct{} }
	// bookSeenEv hands the loop the broker's order book as read now.
	bookSeenEv struct {
		rows  []brokerclient.Order
		reply chan error
	}
)

func (e placeEv) orderID() string       { return e.o.ClientOrderID }
func (e orderSeenEv) orderID() string   { return e.id }
func (e cancelOrderEv) orderID() string { return e.id }
func (e waitOrderEv) orderID() string   { return e.id }
func (e unwaitOrderEv) orderID() string { return e.id }
func (e settledEv) orderID() string     { return "" }
func (e bookSeenEv) orderID() string    { return "" }

// orderWaiter waits for an order to end, or to be working.
type orderWaiter struct {
	working bool
	ch      chan *Order
}

// orderBook is the loop's state of the orders it follows.
type orderBook struct {
	open    map[string]*Order // unfinished orders, by clientOrderId
	watches map[string]*brokerclient.OrderWatch
	until   map[string]time.Time
	// resting are the unfinished orders followed for followFor without
	// an end while nobody waited on them: no longer looked up until
	// someone waits on one (WaitOrder), which follows it again. An order
	// someone waits on is followed until it is working or final.
	resting map[string]bool
	waiters map[string][]orderWaiter
	quiet   []chan struct{} // closed once every order is settled
}

func newOrderBook() orderBook {
	return orderBook{open: map[string]*Order{}, watches: map[string]*brokerclient.OrderWatch{}, until: map[string]time.Time{}, resting: map[string]bool{},
		waiters: map[string][]orderWaiter{}}
}

func (b *orderBook) track(o *Order) { b.open[o.ClientOrderID] = o }

// settled reports whether no order waits on a write-ahead state or on the
// broker's first answer.
func (b *orderBook) settled() bool {
	for _, o := range b.open {
		if !o.Settled() || o.State == states.Pending {
			return false
		}
	}
	return true
}

// resume re-drives the orders an earlier run left unfinished: intents and
// lost answers are looked up, never sent again.
func (b *orderBook) resume(l *loop) {
	for _, id := range slices.Sorted(maps.Keys(b.open)) {
		b.step(l, b.open[id], workflow.OrderResume{})
	}
}

func (b *orderBook) handle(ctx context.Context, l *loop, ev orderEvent) {
	switch ev := ev.(type) {
	case placeEv:
		ev.o.MAC = l.e.rows.Order(ev.o)
		if err := l.e.store.CreateOrder(ctx, ev.o); err != nil {
			ev.reply <- err
			return
		}
		b.track(ev.o)
		if ev.watch != nil {
			b.watches[ev.o.ClientOrderID] = ev.watch
		}
		ev.reply <- b.step(l, ev.o, workflow.OrderSend{})
	case orderSeenEv:
		o := b.open[ev.id]
		if o == nil {
			return
		}
		b.step(l, o, ev.in)
	case cancelOrderEv:
		o := b.open[ev.id]
		if o == nil {
			stored, err := l.e.store.GetOrder(ctx, ev.id)
			if err != nil {
				ev.reply <- fmt.Errorf("%w: order %s: %v", ErrNotOpen, ev.id, err)
				return
			}
			if !l.e.rows.VerifyOrder(stored) {
				ev.reply <- fmt.Errorf("%w: order %s: %s", ErrNotOpen, ev.id, refusedReason)
				return
			}
			o = stored
		}
		ev.reply <- b.step(l, o, workflow.OrderCancelAsked{})
	case settledEv:
		ch := make(chan struct{})
		if b.settled() {
			close(ch)
		} else {
			b.quiet = append(b.quiet, ch)
		}
		ev.reply <- ch
	case bookSeenEv:
		b.bookSeen(l, ev)
	case unwaitOrderEv:
		b.waiters[ev.id] = slices.DeleteFunc(b.waiters[ev.id], func(w orderWaiter) bool { return w.ch == ev.ch })
		if len(b.waiters[ev.id]) == 0 {
			delete(b.waiters, ev.id)
		}
	case waitOrderEv:
		o := b.open[ev.id]
		if o == nil || (ev.working && o.State == states.OrderWorking) {
			ev.reply <- nil
			return
		}
		ch := make(chan *Order, 1)
		b.waiters[ev.id] = append(b.waiters[ev.id], orderWaiter{working: ev.working, ch: ch})
		ev.reply <- ch
		if b.resting[ev.id] {
			// Nobody looks the order up any more: a waiter would wait
			// forever. Follow it again, for another followFor.
			delete(b.resting, ev.id)
			delete(b.until, ev.id)
			b.step(l, o, workflow.OrderUnseen{})
		}
	}
}

// bookSeen steps every order held as working with its row of the
// broker's book, and answers once their records are committed.
func (b *orderBook) bookSeen(l *loop, ev bookSeenEv) {
	for i := range ev.rows {
		o := b.open[ev.rows[i].ClientOrderID]
		if o == nil || o.State != states.OrderWorking {
			continue // not locator's, final, or still followed to its first answer
		}
		if err := b.step(l, o, seenOf(&ev.rows[i])); err != nil {
			ev.reply <- err
			return
		}
	}
	l.group.then(func() { ev.reply <- nil })
}

// step steps order o with input in (see stepRecord): its record commits
// with the batch's, its transition is logged, and only then do its effects
// leave.
func (b *orderBook) step(l *loop, o *Order, in workflow.OrderInput) error {
	return stepRecord(l, orderKind{}, o, in, 0)
}

// orderKind is the orders' part in the pipeline (see kind).
type orderKind struct{}

func (orderKind) name() string                                  { return "order" }
func (orderKind) id(o *Order) string                            { return o.ClientOrderID }
func (orderKind) state(o *Order) states.State                   { return o.State }
func (orderKind) open(l *loop, id string) *Order                { return l.orders.open[id] }
func (orderKind) latest(g *group) map[string]*Order             { return g.orders }
func (orderKind) abandon(reason string) workflow.OrderInput     { return workflow.Abandon{Reason: reason} }
func (orderKind) effect(l *loop, o *Order, eff workflow.Effect) { l.orders.effect(l, o, eff) }

func (orderKind) pure(l *loop, o *Order, in workflow.OrderInput) stepped[Order, workflow.OrderInput] {
	s := workflow.StepOrder(o, in, l.e.clock.Now())
	out := stepped[Order, workflow.OrderInput]{tr: s.Transition, effects: s.Effects, err: s.Err}
	if s.Err == nil && s.Next != nil {
		n := *s.Next
		n.Version = o.Version + 1
		out.next = &n
	}
	return out
}

func (orderKind) stage(b *batch, prev, next *Order, tr *workflow.Transition) {
	b.orders = append(b.orders, store.OrderStep{Prev: prev, Next: next, Transition: tr})
}

func (orderKind) take(b *batch) *Order {
	o := b.savedOrders[0]
	b.savedOrders = b.savedOrders[1:]
	return o
}

func (orderKind) commit(ctx context.Context, st *store.Store, prev, next *Order, tr *workflow.Transition) (*Order, error) {
	return st.CommitOrder(ctx, prev, next, tr)
}

func (orderKind) get(ctx context.Context, st *store.Store, id string) (*Order, error) {
	return st.GetOrder(ctx, id)
}

func (orderKind) install(l *loop, o *Order, from states.State, s stepped[Order, workflow.OrderInput]) {
	l.orders.install(l, o, from, s.tr)
}

// install takes a saved order as the truth, tells whoever listens, and
// settles its waiters.
func (b *orderBook) install(l *loop, o *Order, from states.State, tr *workflow.Transition) {
	if tr != nil {
		l.e.log.Info("order", "clientOrderId", o.ClientOrderID, "symbol", o.Symbol, "from", from, "to", o.State, "status", o.OrderStatus)
		l.publish(Update{Order: o, From: from, Event: tr.Event, Reason: tr.Reason})
	}
	if o.Terminal() {
		delete(b.open, o.ClientOrderID)
		delete(b.until, o.ClientOrderID)
		delete(b.resting, o.ClientOrderID)
		if w := b.watches[o.ClientOrderID]; w != nil {
			w.Close()
			delete(b.watches, o.ClientOrderID)
		}
	} else {
		b.track(o)
	}
	keep := b.waiters[o.ClientOrderID][:0]
	for _, w := range b.waiters[o.ClientOrderID] {
		if o.Terminal() || (w.working && o.State == states.OrderWorking) {
			w.ch <- o
			continue
		}
		keep = append(keep, w)
	}
	b.waiters[o.ClientOrderID] = keep
	if len(keep) == 0 {
		delete(b.waiters, o.ClientOrderID)
	}
	l.checkIdle()
}

// effect carries out an order effect on a worker.
func (b *orderBook) effect(l *loop, o *Order, eff workflow.Effect) {
	switch eff.(type) {
	case workflow.PlaceOrder:
		b.place(l, o)
	case workflow.LookupOrder:
		b.follow(l, o)
	case workflow.CancelOrder:
		b.cancel(l, o)
	}
}

// place sends the order on a worker and hands the loop what the answer
// tells: seen, refused, or lost (then it is looked up by its id).
func (b *orderBook) place(l *loop, o *Order) {
	e := l.e
	account, id := e.cfg.Account, o.ClientOrderID
	req, watch := orderRequest(o), b.watches[id]
	e.writes.push(func(ctx context.Context) event {
		got, _, err := e.client.Orders.Place(ctx, account, req)
		switch {
		case errors.Is(err, brokerclient.ErrNotSent):
			return nil // this owner is stepping down; the next places it
		case err == nil:
			if watch != nil {
				watch.Observe(got) // a synchronous answer may have no push behind it
			}
			return orderSeenEv{id: id, in: seenOf(got)}
		case refused(err):
			return orderSeenEv{id: id, in: workflow.OrderRefused{Reason: err.Error()}}
		}
		return orderSeenEv{id: id, in: workflow.OrderLost{Reason: "the answer was lost, looking it up by its id: " + err.Error()}}
	})
}

// follow learns the order's next state: from its stream watch while the
// stream is up, else by looking it up. An order followed longer than
// followFor that nobody waits for is left resting.
func (b *orderBook) follow(l *loop, o *Order) {
	e := l.e
	account, id := e.cfg.Account, o.ClientOrderID
	now := e.clock.Now()
	if _, ok := b.until[id]; !ok {
		b.until[id] = now.Add(followFor)
	}
	if now.After(b.until[id]) && len(b.waiters[id]) == 0 {
		// Followed long enough, and nobody waits: `locator orders`,
		// or a later wait, settles it.
		b.resting[id] = true
		return
	}
	lookup, watch := o.LookupID(), b.watches[id]
	if o.State == states.OrderUnknown {
		watch = nil // only a lookup can tell that it never reached the broker
	}
	e.writes.push(func(ctx context.Context) event {
		if watch != nil {
			if connected, _ := e.stream.Connected(); connected {
				// The stream tells the order's fate in milliseconds; a
				// quiet spell is waited out, then the order read once:
				// a push may be lost with the connection up (the spec
				// promises no delivery), and the fate with it.
				wctx, cancel := clock.WithDeadline(ctx, e.clock, e.clock.Now().Add(4*followEvery))
				got, err := watch.Next(wctx)
				cancel()
				if err == nil {
					got = settle(ctx, e.clock, watch, got)
					if !got.IsTerminal() && got.OrderStatus != brokercode.OrderStatusPendingNew {
						// Working, as far as the stream told: the fill
						// that follows an acceptance may have been pushed
						// and lost. One read settles it.
						if read, _, err := e.client.Orders.ResolveOrder(ctx, account, lookup); err == nil {
							watch.Observe(read)
							got = read
						}
					}
					return orderSeenEv{id: id, in: seenOf(got)}
				}
				if ctx.Err() != nil {
					return orderSeenEv{id: id, in: workflow.OrderUnseen{}}
				}
			}
		}
		// No stream, it is down, or it stayed quiet: look the order up.
		if err := clock.Sleep(ctx, e.clock, followEvery); err != nil {
			return nil
		}
		got, _, err := e.client.Orders.ResolveOrder(ctx, account, lookup)
		if err == nil && watch != nil {
			watch.Observe(got) // what the read told, no push will tell again
		}
		switch {
		case errors.Is(err, brokerclient.ErrNeverRegistered):
			return orderSeenEv{id: id, in: workflow.OrderNotFound{}}
		case err != nil:
			e.log.Warn("order lookup failed; looking again", "clientOrderId", id, "err", err)
			return orderSeenEv{id: id, in: workflow.OrderUnseen{}}
		}
		return orderSeenEv{id: id, in: seenOf(got)}
	})
}

// cancel asks the broker to cancel the order on a worker; a failed cancel
// has the order looked up.
func (b *orderBook) cancel(l *loop, o *Order) {
	e := l.e
	account, id := e.cfg.Account, o.ClientOrderID
	lookup := o.LookupID()
	e.writes.push(func(ctx context.Context) event {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		got, _, err := e.client.Orders.Cancel(ctx, account, lookup)
		if errors.Is(err, brokerclient.ErrNotSent) {
			return nil // this owner is stepping down; the next cancels it
		}
		if err != nil {
			e.log.Warn("order cancel failed; looking it up", "clientOrderId", id, "err", err)
			return orderSeenEv{id: id, in: workflow.OrderUnseen{}}
		}
		return orderSeenEv{id: id, in: seenOf(got)}
	})
}

// settle takes the states that follow an acceptance within moments (a
// marketable order fills right after it is accepted), so the stream tells
// at least what a lookup a moment later would.
func settle(ctx context.Context, clk clock.Clock, watch *brokerclient.OrderWatch, got *brokerclient.Order) *brokerclient.Order {
	if got.IsTerminal() || got.OrderStatus == brokercode.OrderStatusPendingNew {
		return got
	}
	ctx, cancel := clock.WithDeadline(ctx, clk, clk.Now().Add(followEvery))
	defer cancel()
	for !got.IsTerminal() {
		next, err := watch.Next(ctx)
		if err != nil {
			break
		}
		got = next
	}
	return got
}

// seenOf is the broker's order record as the step's input.
func seenOf(o *brokerclient.Order) workflow.OrderSeen {
	in := workflow.OrderSeen{ClientOrderID: o.ClientOrderID, Status: o.OrderStatus, Executed: o.Executed,
		PriceAvg: o.PriceAvg, Route: string(o.Route)}
	if t := o.LastUpdated; !t.IsZero() && !t.NoZone && !t.DateOnly {
		in.At = t.Time
	}
	if rej := o.Rejection(); rej != nil {
		in.Code = rej.Code
		if rej.Text != nil {
			in.Text = *rej.Text
		}
	} else if o.Text != nil {
		in.Text = *o.Text
	}
	return in
}

// refused reports whether a placement error is an answer that says the
// order was not taken (an error status other than 5xx, a 429, or input the
// client refused to send). Anything else (a lost answer, a 5xx, a
// cancellation mid-request) leaves the outcome unknown.
func refused(err error) bool {
	if errors.Is(err, brokerclient.ErrOutcomeUnknown) {
		return false
	}
	var er *brokerclient.ErrorResponse
	var pd *brokerclient.ProblemDetails
	var rl *brokerclient.RateLimitError
	return errors.As(err, &er) || errors.As(err, &pd) || errors.As(err, &rl) || errors.Is(err, brokercode.ErrInput)
}

// openPositions reads the account's open positions at the broker once,
// on its first call, for the checks of one order (Engine.covers,
// Engine.reference).
func (e *Engine) openPositions(ctx context.Context) func() ([]brokerclient.Position, error) {
	return sync.OnceValues(func() ([]brokerclient.Position, error) {
		positions, _, err := e.client.Positions.Open(ctx, e.cfg.Account)
		return positions, err
	})
}

// covers refuses a buy to close (a cover, spec "Orders" rule 3) that the
// account's open positions at the broker cannot take: no short position
// of its symbol, or fewer shares short than it buys. Whichever door the
// order came in by, nothing is sent for it.
func (e *Engine) covers(o *Order, openPositions func() ([]brokerclient.Position, error)) error {
	if o.Side != string(brokerclient.SideBuy) || o.OpenClose != string(brokerclient.OpenCloseClose) {
		return nil
	}
	positions, err := openPositions()
	if err != nil {
		return fmt.Errorf("reading the positions the cover closes: %w", err)
	}
	var short int64
	for _, p := range positions {
		if p.Symbol == o.Symbol && p.Side == brokerclient.PositionShort {
			short += p.Shares
		}
	}
	switch {
	case short == 0:
		return brokercode.Invalid("symbol", "%s: the account has no short position to cover", o.Symbol)
	case o.Quantity > short:
		return brokercode.Invalid("quantity", "%d %s is more than the %d shares short", o.Quantity, o.Symbol, short)
	}
	return nil
}
