package brokersim_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/simtest"
)

// FuzzHandler feeds arbitrary methods, paths and bodies to the simulator, with
// and without credentials: it must never panic and never answer 5xx, since
// fault injection is off.
func FuzzHandler(f *testing.F) {
	seeds := []struct {
		method, path, body string
	}{
		{"GET", "/v1/api/accounts", ""},
		{"POST", "/v1/api/accounts/locates/quote", `{"account":"LV100001","symbol":"HTBX","quantity":100,"quoteReqID":"q1"}`},
		{"POST", "/v1/api/accounts/locates/quote", `{"account":"LV100001","symbol":"HTBX","quantity":1.5e300,"quoteReqID":"q1"}`},
		{"POST", "/v1/api/accounts/locates/accept", `{"accountId":"lv100001","quoteReqID":"q1.SU"}`},
		{"POST", "/v1/api/accounts/locates/sell", `{"account":"LV100001","symbol":"HTBX","quantity":100,"locateType":"IntraDay","quoteReqID":"s1"}`},
		{"DELETE", "/v1/api/accounts/locates/cancel/accounts/LV100001/quoteReqID/q1", ""},
		{"POST", "/v1/api/accounts/LV100001/order", `{"symbol":"AAPL","side":"Buy","openClose":"Open","orderType":"Limit","securityType":"Stock","timeInForce":"Day","orderQuantity":10,"limitPrice":190.1234}`},
		{"POST", "/v1/api/accounts/LV100001/order", `{"orderQuantity":1.5,"side":"buy","route":null}`},
		{"DELETE", "/v1/api/accounts/orders", "account=LV100001"},
		{"DELETE", "/v1/api/accounts/LV100001/orders/abc", ""},
		{"GET", "/v1/api/accounts/LV100001/cash-transactions/start-date/2026-01-01?numberOfDays=-5&limit=99999999999999999999&offset=-1", ""},
		{"GET", "/v1/api/accounts/LV100001/positions/historical?date=2026-11-20", ""},
		{"GET", "/v1/api/accounts/LV100001/orders-with-pagination/start-date/2026-01-01?limit=0&offset=x", ""},
		{"GET", "/v1/api/accounts/LV100001/is-easy-to-borrow/symbol/%2e", ""},
		{"GET", "/v1/api//accounts/../x", ""},
		{"PATCH", "/v1/api/account/LV100001/", "{"},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body, true)
	}
	sc := brokersim.DefaultScenario()
	sc.RateLimits = false
	clk := clock.NewFake(simtest.Start)
	sim, err := brokersim.New(sc, brokersim.WithClock(clk))
	if err != nil {
		f.Fatal(err)
	}
	methods := map[string]bool{"GET": true, "POST": true, "DELETE": true, "PUT": true, "PATCH": true, "HEAD": true, "OPTIONS": true}
	f.Fuzz(func(t *testing.T, method, path, body string, signed bool) {
		if !methods[method] || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/_sim") {
			t.Skip()
		}
		req, err := http.NewRequest(method, "http://sim"+path, strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		if signed {
			req.Header.Set("TZ-API-KEY-ID", "SIMLIVEKEY01")
			req.Header.Set("TZ-API-SECRET-KEY", "sim-live-secret-01")
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: status %d body %q", method, path, body, rec.Code, rec.Body.String())
		}
		clk.Advance(700_000_000) // 0.7 s, so timed events run between inputs
	})
}
