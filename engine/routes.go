package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/market"
)

// routeCache holds an account's routes (spec "Route record") as read on
// one trading day: the routes endpoint's bucket allows one read a second,
// so reading it before every order would pace the orders themselves. The
// live set varies by subscription, so the spec says to query it: it is
// read again on the next trading day (New York date), and at once when an
// order names a route the list lacks.
type routeCache struct {
	mu     sync.Mutex
	day    time.Time
	routes []brokerclient.Route
}

// of returns the account's routes for today: those read earlier today,
// unless fresh or none were read today, then read from the broker.
func (c *routeCache) of(ctx context.Context, e *Engine, fresh bool) ([]brokerclient.Route, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	day := market.On(e.brokerNow()).Date
	if !fresh && c.day.Equal(day) {
		return c.routes, nil
	}
	routes, _, err := e.client.Orders.Routes(ctx, e.cfg.Account)
	if err != nil {
		return nil, fmt.Errorf("routes: %w", err)
	}
	c.day, c.routes = day, routes
	return routes, nil
}
