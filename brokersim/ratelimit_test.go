package brokersim_test

import (
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// Spec: "Rate limits" — per key pair, per route token buckets; a throttled
// call is 429 with an empty body and no Retry-After or X-RateLimit headers.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		path  string
		burst int
		rate  float64
	}{
		{"locate history 2/s burst 2", "/v1/api/accounts/LV100001/locates/history", 2, 2},
		{"routes 1/s burst 1", "/v1/api/accounts/LV100001/routes", 1, 1},
		{"pnl 3/s burst 3", "/v1/api/accounts/LV100001/pnl", 3, 3},
		{"account list default 2/s burst 2", "/v1/api/accounts", 2, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := simtest.New(t)
			for i := range tc.burst {
				if r := b.Do(t, b.Live, "GET", tc.path, nil); r.Status == 429 {
					t.Fatalf("request %d of the burst throttled", i+1)
				}
			}
			r := b.Do(t, b.Live, "GET", tc.path, nil)
			if r.Status != 429 {
				t.Fatalf("request past the burst: %d, want 429", r.Status)
			}
			if len(r.Body) != 0 || r.Header.Get("Retry-After") != "" || r.Header.Get("X-RateLimit-Limit") != "" {
				t.Errorf("429 carries body %q / headers %v, want none", r.Body, r.Header)
			}
			// Another key pair has its own bucket.
			if tc.path == "/v1/api/accounts" {
				if r := b.Do(t, b.Paper, "GET", tc.path, nil); r.Status != 200 {
					t.Errorf("other key pair: %d, want 200", r.Status)
				}
			}
			// One token comes back after 1/rate seconds of simulator time.
			b.Advance(time.Duration(float64(time.Second) / tc.rate))
			if r := b.Do(t, b.Live, "GET", tc.path, nil); r.Status != 200 {
				t.Errorf("after refill: %d, want 200", r.Status)
			}
		})
	}
	t.Run("lifted by the scenario switch", func(t *testing.T) {
		t.Parallel()
		b := simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false }))
		for i := range 20 {
			if r := b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/routes", nil); r.Status == 429 {
				t.Fatalf("request %d throttled with limits lifted", i)
			}
		}
	})
}
