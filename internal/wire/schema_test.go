package wire

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/account"
)

// TestDecodeJSONHoldsRequestsToTheDocument proves decodeJSON refuses,
// each with a message that says why, what api/openapi.yaml does not
// allow, and takes what it does: the server's one check of every body and
// of the caller's header (service.TestContract runs it over the wire).
func TestDecodeJSONHoldsRequestsToTheDocument(t *testing.T) {
	t.Parallel()
	policy := `"policy":{"maxPrice":"0.05","maxCost":"0","autoAccept":false,"allowSingleUse":false}`
	for _, c := range []struct {
		what, body, want string
		into             any
	}{
		{"a locate", `{"items":[{"symbol":"HTBX","quantity":300,` + policy + `}]}`, "", &account.LocateRequest{}},
		{"a decimal as a JSON number", `{"items":[{"symbol":"HTBX","quantity":300,"policy":{"maxPrice":0.05,"maxCost":"0","autoAccept":false,"allowSingleUse":false}}]}`,
			`items[0].policy.maxPrice: want a decimal string such as "0.05", not the JSON number 0.05`, &account.LocateRequest{}},
		{"a decimal that is not one", `{"items":[{"symbol":"HTBX","quantity":300,"policy":{"maxPrice":"5c","maxCost":"0","autoAccept":false,"allowSingleUse":false}}]}`,
			`"5c" is not a decimal string`, &account.LocateRequest{}},
		{"a field it does not list", `{"items":[],"bogus":1}`, `unknown field "bogus"`, &account.LocateRequest{}},
		{"a required field missing", `{"items":[{"symbol":"HTBX",` + policy + `}]}`, "items[0].quantity is required", &account.LocateRequest{}},
		{"a required field null", `{"symbol":null,"quantity":1,"type":"Locate"}`, "symbol: null is not allowed", &account.CreditBackRequest{}},
		{"a value outside an enum", `{"what":"everything"}`, `what: everything is not one of "accounts"`, &account.ReadRequest{}},
		{"a kind of the enum", `{"what":"positions"}`, "", &account.ReadRequest{}},
		{"a caller without its environment", `{"id":"x","name":"n"}`, "env is required", &wireCaller{}},
		{"a caller of no environment there is", `{"id":"x","name":"n","env":"demo"}`, `env: demo is not one of "live", "paper"`, &wireCaller{}},
		{"two values", `{"what":"positions"}{}`, "more than one JSON value", &account.ReadRequest{}},
	} {
		err := decodeJSON([]byte(c.body), c.into)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.what, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want an error saying %s", c.what, err, c.want)
		}
	}
}

// TestQueryConforms proves a stream's query is held to its request type:
// the follow's id required, its fromStart 1 or nothing, no other
// parameter.
func TestQueryConforms(t *testing.T) {
	t.Parallel()
	follow := reflect.TypeFor[account.FollowRequest]()
	for q, want := range map[string]string{
		"id=wf-1":               "",
		"id=wf-1&fromStart=1":   "",
		"":                      "the query parameter id is required",
		"id=wf-1&fromStart=yes": `fromStart takes 1 (set) or nothing, not "yes"`,
		"id=wf-1&since=today":   `unknown query parameter "since"`,
	} {
		v, _ := url.ParseQuery(q)
		err := queryConforms(follow, v)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("?%s: %v; want %q", q, err, want)
		}
	}
}

// TestServerErrorsAreErrors proves what the server answers besides a
// route's answer is an account.Error with its status: a path it does not
// serve, a method its path does not take, a body over its bound (in a
// session, so that the route reads it).
func TestServerErrorsAreErrors(t *testing.T) {
	t.Parallel()
	s := NewServer(nil, nil, nil, "")
	s.sessions["s"] = time.Now().Add(time.Hour)
	srv := httptest.NewServer(s.Routes())
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		what, method, path, body string
		status                   int
	}{
		{"a path it does not serve", "GET", "/v1/nothing", "", http.StatusNotFound},
		{"a method its path does not take", "GET", "/v1/locate", "", http.StatusMethodNotAllowed},
		{"a body over its bound", "POST", "/v1/job/stop", `{"ref":"` + strings.Repeat("x", maxBody) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		req, err := http.NewRequestWithContext(t.Context(), c.method, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(sessionHeader, "s")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e account.Error
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != c.status || err != nil || e.Kind != account.KindInput || e.Message == "" {
			t.Errorf("%s: %s %+v (%v); want %d with an Error of kind input", c.what, resp.Status, e, err, c.status)
		}
	}
}
