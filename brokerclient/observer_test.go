package brokerclient_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/simtest"
)

// The observer sees each call with its route template, never the path
// with the account id in it, and the status the broker answered.
func TestObserverRouteTemplate(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	type seen struct {
		route  string
		status int
	}
	var mu sync.Mutex
	var got []seen
	c := b.Client(t, b.Live, brokerclient.WithObserver(func(route string, status int, d time.Duration) {
		mu.Lock()
		got = append(got, seen{route, status})
		mu.Unlock()
	}))
	if _, _, err := c.Locates.History(t.Context(), "LV100001"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Locates.Inventory(t.Context(), "LV999999"); err == nil {
		t.Fatal("inventory of an account the keys do not own: no error")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []seen{
		{"GET /v1/api/accounts/{accountId}/locates/history", 200},
		{"GET /v1/api/accounts/{accountId}/locates/inventory", 404},
	}
	if len(got) != len(want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
	for i := range want {
		if got[i].route != want[i].route || (want[i].status == 200) != (got[i].status == 200) || strings.Contains(got[i].route, "LV") {
			t.Errorf("call %d observed %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Every paced route has its spec template.
func TestRouteTemplates(t *testing.T) {
	t.Parallel()
	for route := range brokerclient.RateLimits {
		if tpl := brokerclient.RouteTemplate(route); tpl == route || !strings.Contains(tpl, " /v1/api/") {
			t.Errorf("route %s: template %q", route, tpl)
		}
	}
}
