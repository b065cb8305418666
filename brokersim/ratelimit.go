package brokersim

import (
	"time"

	"golang.org/x/time/rate"
)

// publishedRates is the spec's "Rate limits" table, by bucket name. Routes
// without a published number (account list, account detail, cash ledger) use
// the scenario's DefaultRate, documented in docs/simulator.md.
var publishedRates = map[string]ScenarioRate{
	"order.place":          {10, 10},
	"order.cancel":         {15, 15},
	"orders.cancelAll":     {3, 1},
	"etb":                  {2, 2},
	"order.get":            {2, 2},
	"orders.book":          {2, 2},
	"orders.paginated":     {1, 1},
	"orders.archive":       {1, 1},
	"routes":               {1, 1},
	"positions":            {3, 3},
	"pnl":                  {3, 3},
	"positions.closed":     {3, 3},
	"positions.historical": {3, 3},
	"locates.quote":        {1, 1},
	"locates.accept":       {10, 10},
	"locates.cancel":       {2, 2},
	"locates.sell":         {10, 10},
	"locates.history":      {2, 2},
	"locates.inventory":    {2, 2},
}

// rateLimits holds one token bucket per key pair per route, on the
// simulator's clock, as the spec describes ("Per API key pair, per route").
type rateLimits struct {
	on      bool
	def     ScenarioRate
	buckets map[[2]string]*rate.Limiter
}

func newRateLimits(sc Scenario) rateLimits {
	return rateLimits{on: sc.RateLimits, def: sc.DefaultRate, buckets: map[[2]string]*rate.Limiter{}}
}

// allow takes a token from the key's bucket for the route for a request that
// arrived at now; Sim.admit calls it in the order requests arrive.
func (l *rateLimits) allow(keyID, bucket string, now time.Time) bool {
	if !l.on {
		return true
	}
	k := [2]string{keyID, bucket}
	lim := l.buckets[k]
	if lim == nil {
		r, ok := publishedRates[bucket]
		if !ok {
			r = l.def
		}
		lim = rate.NewLimiter(rate.Limit(r.PerSecond), r.Burst)
		// A fresh bucket starts full at the simulator's time, not the wall's.
		lim.SetLimitAt(now, rate.Limit(r.PerSecond))
		l.buckets[k] = lim
	}
	return lim.AllowN(now, 1)
}
