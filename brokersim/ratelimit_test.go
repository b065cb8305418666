package brokersim_test

import (
	"context"
	"net/http"
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

// Spec: "Rate limits" — a bucket judges a request as it arrives, however long
// the service then takes to answer it. The first of three inventory reads
// arrives, then waits 0.6 s to be served (a delay fault); the two after it
// find the token it took given back at 2 a second, and the first is answered
// with its arrival's verdict. Judged when served, it would find the bucket
// the later two emptied.
func TestRateLimitJudgesAtArrival(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	const inv = "/v1/api/accounts/LV100001/locates/inventory"
	if r := b.Do(t, simtest.Key{}, "PUT", "/_sim/faults", brokersim.Faults{
		Delay:  brokersim.Duration(time.Hour),
		Script: []brokersim.FaultStep{{Match: "/locates/inventory", Kind: "delay", Count: 1}},
	}); r.Status != 204 {
		t.Fatalf("faults: %d %s", r.Status, r.Body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan struct{})
	go func() {
		defer close(first)
		req, _ := http.NewRequestWithContext(ctx, "GET", b.URL+inv, nil)
		b.Sign(req, b.Live)
		if resp, err := b.Server.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	// The log shows the first read once it is admitted, judged with it.
	for len(b.Sim.Requests()) == 0 {
		select {
		case <-first:
			t.Fatal("the delayed read ended before it was logged")
		case <-time.After(time.Millisecond):
		}
	}

	b.Advance(600 * time.Millisecond)
	for i := range 2 {
		if r := b.Do(t, b.Live, "GET", inv, nil); r.Status != 200 {
			t.Fatalf("read %d after 0.6 s: %d, want 200", i+2, r.Status)
		}
	}
	cancel() // the delay ends; the first read is served
	<-first
	b.Server.Close() // waits for its handler
	if got := b.Sim.Requests()[0]; got.Status != 200 {
		t.Errorf("the first read, served after the other two: %d, want 200 (its bucket had a token as it arrived)", got.Status)
	}
}
