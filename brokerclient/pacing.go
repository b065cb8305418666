package brokerclient

import (
	"context"
	"sync"

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
// quote route's whole, since quotes of one key pair go one at a time and
// the engine spaces each a second from the broker's answer to the one
// before, which no network delay can bring closer at the broker; every
// other route pacingMargin.
func marginOf(route string) float64 {
	if route == routeLocateQuote {
		return 1
	}
	return pacingMargin
}

// pacer holds one limiter per route, shared by every goroutine of a Client.
type pacer struct {
	mu       sync.Mutex
	off      bool
	limiters map[string]*rate.Limiter
}

func newPacer() *pacer { return &pacer{limiters: map[string]*rate.Limiter{}} }

// wait blocks on clk until the route's bucket grants a token, or ctx ends.
func (p *pacer) wait(ctx context.Context, clk clock.Clock, route string) error {
	if p.off {
		return ctx.Err()
	}
	p.mu.Lock()
	now := clk.Now() // under the lock: the limiter's time must never go back
	lim := p.limiters[route]
	if lim == nil {
		l, ok := RateLimits[route]
		if !ok {
			l = Limit{1, 1}
		}
		r := rate.Limit(l.PerSecond * marginOf(route))
		lim = rate.NewLimiter(r, l.Burst)
		lim.SetLimitAt(now, r) // start full on clk's time
		p.limiters[route] = lim
	}
	r := lim.ReserveN(now, 1)
	p.mu.Unlock()
	d := r.DelayFrom(now)
	if d == 0 {
		return nil
	}
	if err := clock.Sleep(ctx, clk, d); err != nil {
		r.CancelAt(clk.Now())
		return err
	}
	return nil
}
