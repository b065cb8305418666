package brokersim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// Fault injection is off by default and, when set, answers exactly what it
// was asked to: scripted steps first, then random rates.
func TestFaults(t *testing.T) {
	t.Parallel()
	const path = "/v1/api/accounts/LV100001/locates/inventory"
	noLimits := simtest.WithScenario(func(sc *brokersim.Scenario) { sc.RateLimits = false })
	for _, tc := range []struct {
		kind   string
		status int
	}{{"500", 500}, {"503", 503}, {"429", 429}} {
		t.Run("scripted "+tc.kind, func(t *testing.T) {
			t.Parallel()
			b := simtest.New(t, noLimits)
			if err := b.Sim.SetFaults(brokersim.Faults{Script: []brokersim.FaultStep{{Match: "GET " + path, Kind: tc.kind, Count: 2}}}); err != nil {
				t.Fatal(err)
			}
			for i, want := range []int{tc.status, tc.status, 200} {
				if r := b.Do(t, b.Live, "GET", path, nil); r.Status != want {
					t.Errorf("request %d: %d, want %d", i, r.Status, want)
				}
			}
		})
	}
	t.Run("reset before and after processing", func(t *testing.T) {
		t.Parallel()
		b := simtest.New(t, noLimits)
		if err := b.Sim.SetFaults(brokersim.Faults{Script: []brokersim.FaultStep{
			{Match: "GET " + path, Kind: "reset", Count: 1},
			{Match: "GET " + path, Kind: "reset-after", Count: 1},
		}}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			req, _ := http.NewRequest("GET", b.URL+path, nil)
			b.Sign(req, b.Live)
			if resp, err := b.Server.Client().Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("got status %d, want a reset connection", resp.StatusCode)
			}
		}
		log := b.Sim.Requests()
		if len(log) != 2 || log[0].Status != 0 || log[1].Status != 0 {
			t.Errorf("log %+v, want two entries with status 0", log)
		}
	})
	t.Run("random rates are seeded and bounded", func(t *testing.T) {
		t.Parallel()
		b := simtest.New(t, noLimits)
		if err := b.Sim.SetFaults(brokersim.Faults{Match: "inventory", Rate500: 0.3, Rate503: 0.2}); err != nil {
			t.Fatal(err)
		}
		counts := map[int]int{}
		for range 200 {
			counts[b.Do(t, b.Live, "GET", path, nil).Status]++
		}
		if counts[500] < 30 || counts[503] < 15 || counts[200] < 60 || counts[500]+counts[503]+counts[200] != 200 {
			t.Errorf("status counts %v, want roughly 60/40/100 of 200", counts)
		}
		// A route that does not match is never faulted.
		for range 20 {
			if r := b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/locates/history", nil); r.Status != 200 {
				t.Fatalf("unmatched route faulted: %d", r.Status)
			}
		}
	})
	t.Run("invalid configurations are refused", func(t *testing.T) {
		t.Parallel()
		b := simtest.New(t)
		for _, body := range []string{`{"rate500":1.5}`, `{"rate500":0.6,"rate503":0.6}`, `{"script":[{"match":"x","kind":"boom","count":1}]}`, `{"rate5OO":0.1}`} {
			if r := b.Do(t, simtest.Key{}, "PUT", "/_sim/faults", body); r.Status != 400 {
				t.Errorf("%s: status %d, want 400", body, r.Status)
			}
		}
		if r := b.Do(t, simtest.Key{}, "PUT", "/_sim/faults", `{"rate503":0.1,"match":"orders"}`); r.Status != 204 {
			t.Fatalf("valid config: %d %s", r.Status, r.Body)
		}
		if r := b.Do(t, simtest.Key{}, "GET", "/_sim/faults", nil); !strings.Contains(string(r.Body), `"rate503":0.1`) {
			t.Errorf("faults read back %s", r.Body)
		}
	})
}
