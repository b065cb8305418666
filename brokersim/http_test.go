package brokersim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/locatorhq/locator/simtest"
)

// Spec: "HTTP semantics of the account endpoints" and "HTTP status map".
func TestRouterSemantics(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	cases := []struct {
		name, method, path string
		key                simtest.Key
		status             int
		body               string
		header             map[string]string
	}{
		{"HEAD on list is 405", "HEAD", "/v1/api/accounts", b.Live, 405, "", nil},
		{"POST on list is 405", "POST", "/v1/api/accounts", b.Live, 405, "405 method not allowed", nil},
		{"OPTIONS on list allows GET", "OPTIONS", "/v1/api/accounts", b.Live, 200, "", map[string]string{"Allow": "GET"}},
		{"HEAD on detail is 405", "HEAD", "/v1/api/account/LV100001", b.Live, 405, "", nil},
		{"POST on detail is 405", "POST", "/v1/api/account/LV100001", b.Live, 405, "405 method not allowed", nil},
		{"HEAD on pnl is 405 with empty body", "HEAD", "/v1/api/accounts/LV100001/pnl", b.Live, 405, "", nil},
		{"POST on pnl is 404", "POST", "/v1/api/accounts/LV100001/pnl", b.Live, 404, "404 page not found", nil},
		{"empty account segment", "GET", "/v1/api/accounts//pnl", b.Live, 404, "404 page not found", nil},
		{"unknown path", "GET", "/v1/api/nothing", b.Live, 404, "404 page not found", nil},
		{"easy-to-borrow with a dot", "GET", "/v1/api/accounts/LV100001/is-easy-to-borrow/symbol/.", b.Live, 404, "404 page not found", nil},
		{"easy-to-borrow with empty symbol", "GET", "/v1/api/accounts/LV100001/is-easy-to-borrow/symbol/", b.Live, 404, "404 page not found", nil},
		{"wrong method elsewhere", "PUT", "/v1/api/accounts/LV100001/orders", b.Live, 405, "405 method not allowed", nil},
		{"read without keys", "GET", "/v1/api/accounts/LV100001/locates/history", simtest.Key{}, 404, "Not found", nil},
		{"read with a wrong secret", "GET", "/v1/api/accounts/LV100001/locates/history", simtest.Key{ID: b.Live.ID, Secret: "nope"}, 404, "Not found", nil},
		{"read of a foreign account", "GET", "/v1/api/accounts/LV300001/locates/history", b.Live, 404, "Not found", nil},
		{"invalid ledger date", "GET", "/v1/api/accounts/LV100001/cash-transactions/start-date/2026-13-01", b.Live, 404, "Not found", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.Do(t, tc.key, tc.method, tc.path, nil)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d (body %q)", r.Status, tc.status, r.Body)
			}
			if tc.body != "" && strings.TrimSpace(string(r.Body)) != tc.body {
				t.Errorf("body %q, want %q", r.Body, tc.body)
			}
			for k, v := range tc.header {
				if got := r.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if tc.status == http.StatusNotFound && tc.body != "" && !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("content type %q, want text/plain", r.Header.Get("Content-Type"))
			}
		})
	}
}
