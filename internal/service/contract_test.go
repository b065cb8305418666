package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/wire"
)

// TestContract holds the owner to api/openapi.yaml from outside, as a
// client that knows only the document would: it sends each route's
// published example, and bodies the document refuses made from each (a
// field it does not list, each required field missing, a JSON number for
// each decimal string, a value outside each enum), a path and a method it
// does not hold, a stream without its required parameter and a caller
// without its environment. Every request and answer is checked against
// the document on its way (checked): examples are served as the rules
// decide, everything refused is answered with an Error of kind input, and
// nothing refused reaches the broker (spec "Short locates", "Orders":
// nothing is sent). It runs with the owner's routes in this process and
// through the owner's own socket.
func TestContract(t *testing.T) {
	t.Parallel()
	t.Run("in process", func(t *testing.T) {
		t.Parallel()
		o := own(t)
		contract(t, o, serveSocket(t, checked(t, o.owner.Routes())))
	})
	t.Run("socket", func(t *testing.T) {
		t.Parallel()
		o := own(t)
		contract(t, o, wireChecked(t, o.owner.Lease().Endpoint))
	})
}

// contract runs TestContract's requests on the socket at sock.
func contract(t *testing.T, o *owned, sock string) {
	p := loadPublished(t)
	cl := wire.Dial(sock, account.Caller{Name: "contract", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
	t.Cleanup(cl.Close)
	session, err := cl.Authenticate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, session: session, caller: `{"id":"contract","name":"contract test","env":"live"}`,
		http: &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}}}}
	paths := p.doc.Paths.InMatchingOrder()
	slices.Sort(paths)
	// Refusals first, on a fresh account: nothing else can write then.
	before, refused := writes(o), 0
	for _, path := range paths {
		op := p.doc.Paths.Value(path).Post
		if op == nil || op.RequestBody == nil {
			continue
		}
		media := op.RequestBody.Value.Content.Get("application/json")
		for _, m := range mutations(media.Schema.Value, media.Example) {
			refused++
			status, v := c.send("POST", path, m.body, c.caller)
			refusedAsInput(t, fmt.Sprintf("%s with %s", path, m.what), status, v)
			if e, _ := v.(map[string]any); strings.Contains(m.what, "JSON number") && !strings.Contains(fmt.Sprint(e["message"]), "decimal string") {
				t.Errorf("%s with %s: %v; want it to say a decimal string is wanted", path, m.what, v)
			}
		}
	}
	for _, bad := range []struct{ what, method, path, caller string }{
		{"a path the API does not serve", "POST", "/v1/nothing", c.caller},
		{"a method its path does not take", "GET", "/v1/locate", c.caller},
		{"a follow without its id", "GET", "/v1/follow", c.caller},
		{"a caller without its environment", "POST", "/v1/status", `{"id":"contract","name":"contract test"}`},
		{"a caller of another environment than live or paper", "POST", "/v1/status", `{"id":"contract","name":"x","env":"demo"}`},
	} {
		status, v := c.send(bad.method, bad.path, map[string]any{}, bad.caller)
		if e, _ := v.(map[string]any); status < 400 || e["kind"] == nil || e["message"] == "" {
			t.Errorf("%s: %d %v; want a 4xx Error", bad.what, status, v)
		}
	}
	if n := writes(o) - before; n != 0 {
		t.Errorf("%d writes reached the broker from the %d bodies the document refuses", n, refused)
	}
	t.Logf("%d bodies the document refuses, each refused", refused)
	// The examples, once nothing else is in flight: each served as the
	// rules decide (the checker holds both ends to the document); these
	// succeed on a fresh account.
	served := []string{"/v1/locate", "/v1/quote", "/v1/status", "/v1/today", "/v1/read", "/v1/fees"}
	for _, path := range paths {
		op := p.doc.Paths.Value(path).Post
		if op == nil || op.RequestBody == nil {
			continue
		}
		media := op.RequestBody.Value.Content.Get("application/json")
		status, v := c.send("POST", path, media.Example, c.caller)
		if slices.Contains(served, path) && status != http.StatusOK {
			t.Errorf("%s: its example was answered %d %v; want 200", path, status, v)
		}
	}
}

// rawClient sends requests as a client that knows only the document.
type rawClient struct {
	t       *testing.T
	http    *http.Client
	session string
	caller  string
}

// send sends body (as JSON; none for a GET) and returns the answer's
// status and its JSON.
func (c *rawClient) send(method, path string, body any, caller string) (int, any) {
	var in io.Reader
	if method != "GET" {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, "http://owner"+path, in)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Locator-Caller", caller)
	req.Header.Set("Locator-Session", c.session)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		c.t.Errorf("%s %s: %s, not JSON: %v", method, path, resp.Status, err)
	}
	return resp.StatusCode, v
}

// refusedAsInput fails t unless the answer is 422 with an Error of kind
// input.
func refusedAsInput(t *testing.T, what string, status int, v any) {
	t.Helper()
	if e, _ := v.(map[string]any); status != http.StatusUnprocessableEntity || e["kind"] != "input" || e["message"] == "" {
		t.Errorf("%s: %d %v; want 422, an Error of kind input", what, status, v)
	}
}

// mutation is a body the document refuses, and what makes it so.
type mutation struct {
	what string
	body any
}

// mutations are the bodies made from v, a valid value of schema s, that
// s refuses: at each object, a field s does not list, and each required
// field missing; each decimal string a JSON number; each enum's value
// one outside it.
func mutations(s *openapi3.Schema, v any) []mutation {
	s = unwrap(s)
	var out []mutation
	switch x := v.(type) {
	case map[string]any:
		out = append(out, mutation{"the field bogus, which it does not list", with(x, "bogus", true)})
		for name, ps := range s.Properties {
			item, ok := x[name]
			if !ok {
				continue
			}
			if slices.Contains(s.Required, name) {
				without := with(x, name, nil)
				delete(without, name)
				out = append(out, mutation{"no " + name + ", which is required", without})
			}
			for _, m := range mutations(ps.Value, item) {
				out = append(out, mutation{name + ": " + m.what, with(x, name, m.body)})
			}
		}
	case []any:
		if len(x) > 0 && s.Items != nil {
			for _, m := range mutations(s.Items.Value, x[0]) {
				out = append(out, mutation{"its first item's " + m.what, append([]any{m.body}, x[1:]...)})
			}
		}
	case string:
		if s.Pattern != "" && strings.Contains(s.Description, "decimal") {
			out = append(out, mutation{"a JSON number for the decimal string " + x, json.Number(x)})
		}
		if len(s.Enum) > 0 {
			out = append(out, mutation{"a value outside its enum", "bogus"})
		}
	}
	return out
}

// unwrap is s, or of a nullable s (oneOf s and null) s itself.
func unwrap(s *openapi3.Schema) *openapi3.Schema {
	for _, o := range s.OneOf {
		if !o.Value.Type.Is("null") {
			return unwrap(o.Value)
		}
	}
	return s
}

// with is a copy of m with name set to v.
func with(m map[string]any, name string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, e := range m {
		out[k] = e
	}
	out[name] = v
	return out
}
