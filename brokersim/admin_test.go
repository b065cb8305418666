package brokersim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/simtest"
)

// The admin routes under /_sim/ (docs/design.md "Contracts"): the request log,
// the clock, reset. They sit outside the broker interface.
func TestAdmin(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.Do(t, b.Live, "GET", "/v1/api/accounts/LV100001/locates/history?x=1", nil)
	b.Do(t, b.Live, "POST", "/v1/api/accounts/locates/accept", `{"accountId":"LV100001","quoteReqID":"q1"}`)

	r := b.Do(t, simtest.Key{}, "GET", "/_sim/requests", nil)
	var log []map[string]any
	r.JSON(t, &log)
	if len(log) != 2 {
		t.Fatalf("log has %d entries, want 2 (admin calls are not logged)", len(log))
	}
	for _, k := range []string{"time", "keyId", "method", "path", "query", "body", "status"} {
		if _, ok := log[0][k]; !ok {
			t.Errorf("log entry lacks %q: %v", k, log[0])
		}
	}
	if log[0]["query"] != "x=1" || log[1]["body"] != `{"accountId":"LV100001","quoteReqID":"q1"}` || log[1]["keyId"] != b.Live.ID {
		t.Errorf("log entries %v", log)
	}
	if raw, _ := json.Marshal(log); strings.Contains(string(raw), b.Live.Secret) {
		t.Error("the request log carries the secret")
	}
	if r := b.Do(t, simtest.Key{}, "GET", "/_sim/requests?since=1", nil); len(decodeArray(t, r)) != 1 {
		t.Error("since=1 should return the last entry only")
	}

	before := b.Sim.Now()
	r = b.Do(t, simtest.Key{}, "POST", "/_sim/clock", `{"advance":"30s"}`)
	if r.Status != 200 || b.Clock.Now().Sub(before) != 30*time.Second {
		t.Errorf("advance: %d %s; clock moved %s", r.Status, r.Body, b.Clock.Now().Sub(before))
	}
	if r := b.Do(t, simtest.Key{}, "POST", "/_sim/clock", `{"set":"2020-01-01T00:00:00Z"}`); r.Status != 400 {
		t.Errorf("setting the clock backwards: %d, want 400", r.Status)
	}
	if r := b.Do(t, simtest.Key{}, "POST", "/_sim/reset", nil); r.Status != 204 || len(b.Sim.Requests()) != 0 {
		t.Errorf("reset: %d, log %d entries", r.Status, len(b.Sim.Requests()))
	}
	if r := b.Do(t, simtest.Key{}, "GET", "/_sim/nothing", nil); r.Status != 404 {
		t.Errorf("unknown admin route: %d", r.Status)
	}
}

func decodeArray(t *testing.T, r *simtest.Response) []json.RawMessage {
	t.Helper()
	var a []json.RawMessage
	r.JSON(t, &a)
	return a
}

// The admin routes take no credentials, so they are served only
// when asked for (WithAdmin: `locator sim`, the benchmark, tests); any
// other simulator, the demo's, answers /_sim/ as the broker answers an
// unknown path, and nothing changes.
func TestAdminOnlyWithAdmin(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(simtest.Start)
	sim, err := brokersim.New(brokersim.DefaultScenario(), brokersim.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	for _, rq := range [][3]string{
		{"GET", "/_sim/requests", ""},
		{"POST", "/_sim/clock", `{"advance":"30s"}`},
		{"PUT", "/_sim/faults", `{"rate503":1}`},
		{"POST", "/_sim/reset", ""},
	} {
		req, _ := http.NewRequest(rq[0], srv.URL+rq[1], strings.NewReader(rq[2]))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s without WithAdmin: %d, want 404", rq[0], rq[1], resp.StatusCode)
		}
	}
	if !clk.Now().Equal(simtest.Start) {
		t.Errorf("the clock moved to %v", clk.Now())
	}
}

// TestAdminLocatesAndInventory: /_sim/locates serves every day's history
// rows with the exact price, /_sim/inventory the rows with locked and tied
// apart: the reads of a checker that trusts only the broker.
func TestAdminLocatesAndInventory(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.Do(t, b.Live, "POST", "/v1/api/accounts/locates/quote", `{"account":"LV100001","symbol":"RSHO","quantity":300,"quoteReqID":"q1"}`)
	b.Advance(3 * time.Second)
	b.Do(t, b.Live, "POST", "/v1/api/accounts/locates/accept", `{"accountId":"LV100001","quoteReqID":"q1.SU"}`)
	var rows []brokersim.LocateRecord
	b.Do(t, simtest.Key{}, "GET", "/_sim/locates", nil).JSON(t, &rows)
	if len(rows) != 2 || rows[0].Status != 67 || rows[1].Status != 50 || rows[1].Type != 4 || rows[1].Price.String() != "0.04" || rows[1].Filled != 300 {
		t.Errorf("locates %+v, want the PreBorrow side expired and the SingleUse side filled at 0.04", rows)
	}
	var inv []brokersim.InventoryRecord
	b.Do(t, simtest.Key{}, "GET", "/_sim/inventory", nil).JSON(t, &inv)
	if len(inv) != 1 || inv[0].Type != 4 || inv[0].Available != 300 || inv[0].UsedForShort {
		t.Errorf("inventory %+v, want 300 SingleUse available", inv)
	}
}
