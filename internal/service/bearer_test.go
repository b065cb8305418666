package service_test

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/apiclient"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/states"
)

// bearerOwner is an owner on the network whose followers file admits
// desk-2 as a bearer and desk-3 as a follower host only.
type bearerOwner struct {
	*owned
	file           string
	desk2, desk3   string // their credentials
	host, port     string // of the lease's address
	tlsToTheOwners *tls.Config
}

const bearerUntil = "2099-01-01T00:00:00Z"

func ownWithBearers(t *testing.T) *bearerOwner {
	t.Helper()
	network, err := wire.NewNetwork("127.0.0.1", "", testToken, wire.NetworkLimits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { network.Close() })
	file := filepath.Join(t.TempDir(), "followers")
	if err := os.WriteFile(file, []byte("desk-2 "+bearerUntil+" bearer\ndesk-3 "+bearerUntil+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := network.AllowFollowers(file); err != nil {
		t.Fatal(err)
	}
	o := ownOn(t, filepath.Join(t.TempDir(), "locator.db"), network)
	l := o.owner.Lease()
	u, err := url.Parse(l.Address)
	if err != nil {
		t.Fatal(err)
	}
	return &bearerOwner{owned: o, file: file, host: u.Hostname(), port: u.Port(),
		desk2: wire.FollowerCredential(testToken, "desk-2", bearerUntil), desk3: wire.FollowerCredential(testToken, "desk-3", bearerUntil),
		tlsToTheOwners: &tls.Config{MinVersion: tls.VersionTLS13, ServerName: l.Account, InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if subtle.ConstantTimeCompare([]byte(wire.PinOf(cs.PeerCertificates[0])), []byte(l.Pin)) != 1 {
					return errors.New("not the owner's certificate")
				}
				return nil
			}}}
}

// TestBearerCurlExample runs docs/library.md's curl example against an
// owner whose followers file admits desk-2 as a bearer: the locate it
// places is the owner's workflow, which fills within its cap (spec "Short
// locates").
func TestBearerCurlExample(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("the curl example needs curl (Debian's curl)")
	}
	o := ownWithBearers(t)
	page, err := os.ReadFile("../../docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(page), "## HTTPS from another host")
	_, block, _ := strings.Cut(section, "```sh\n")
	script, _, _ := strings.Cut(block, "```")
	cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "LOCATOR_ACCOUNT=LV100001", "LOCATOR_OWNER_TOKEN="+o.desk2,
		"OWNER_PIN="+o.owner.Lease().Pin, "OWNER_HOST="+o.host, "OWNER_PORT="+o.port)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the curl example: %v\n%s", err, out)
	}
	var res account.LocateResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Started) != 1 || res.Started[0].ID != "wf-curl-1" {
		t.Fatalf("the curl example answered %s (%v); want wf-curl-1 started", out, err)
	}
	end, err := o.owner.Local().As(account.Caller{Name: "test", Env: brokerclient.EnvLive}).Follow(t.Context(), account.FollowRequest{ID: "wf-curl-1", FromStart: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if end.State != states.Filled || !strings.Contains(end.Asker, "bearer of desk-2") {
		t.Errorf("the curl example's locate ended %s, asked by %q; want filled, by the bearer of desk-2", end.State, end.Asker)
	}
}

// A bearer (Security: "the owner and its followers") is served only on a
// credential whose line says bearer, never on the owner's token, is
// refused the handshake and a follower's own routes and any force, and is
// revoked on the connection it holds once its line goes; the follower
// hosts' proof on the same port is untouched. Nothing refused reaches the
// broker.
func TestBearerDoor(t *testing.T) {
	t.Parallel()
	o := ownWithBearers(t)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: o.tlsToTheOwners}}
	send := func(path, bearer, body string) (int, http.Header, map[string]any) {
		t.Helper()
		method := "POST"
		if body == "" {
			method = "GET"
		}
		req, err := http.NewRequestWithContext(t.Context(), method, "https://"+o.host+":"+o.port+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		req.Header.Set("Locator-Caller", `{"id":"bearer-test","name":"bearer test","env":"live"}`)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("%s: %s %s is not JSON", path, resp.Status, b)
		}
		return resp.StatusCode, resp.Header, v
	}
	if status, _, v := send("/v1/status", o.desk2, "{}"); status != http.StatusOK || v["account"] != "LV100001" {
		t.Fatalf("the bearer of desk-2: %d %v", status, v)
	}
	before := writes(o.owned)
	for _, c := range []struct {
		what, path, bearer, body string
		status                   int
	}{
		{"no bearer", "/v1/status", "", "{}", http.StatusUnauthorized},
		{"desk-3, whose line does not say bearer", "/v1/status", o.desk3, "{}", http.StatusUnauthorized},
		{"the owner's token, which never travels", "/v1/status", testToken, "{}", http.StatusUpgradeRequired},
		{"the hello", "/v1/hello", o.desk2, "", http.StatusUnprocessableEntity},
		{"the question stream", "/v1/questions", o.desk2, "", http.StatusUnprocessableEntity},
		{"a person's answer", "/v1/answer", o.desk2, `{"id":"wf-x","accept":true}`, http.StatusUnprocessableEntity},
		{"a credit-back forced", "/v1/credit-back", o.desk2, `{"symbol":"HTBX","quantity":100,"type":"Locate","force":true}`, http.StatusUnprocessableEntity},
		{"a locate a person must answer", "/v1/locate", o.desk2,
			`{"ask":true,"items":[{"symbol":"HTBX","quantity":100,"policy":{"maxPrice":"0","maxCost":"0","autoAccept":false,"allowSingleUse":false}}]}`, http.StatusUnprocessableEntity},
	} {
		status, h, v := send(c.path, c.bearer, c.body)
		if status != c.status || v["kind"] == nil || v["message"] == "" {
			t.Errorf("%s: %d %v; want %d with an Error", c.what, status, v, c.status)
		}
		if status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", c.what)
		}
		if msg := v["message"]; strings.Contains(msg.(string), o.desk3) || strings.Contains(msg.(string), testToken) {
			t.Errorf("%s: the answer quotes the credential: %v", c.what, msg)
		}
	}
	if n := writes(o.owned) - before; n != 0 {
		t.Errorf("%d writes reached the broker from refused bearers", n)
	}
	// desk-3 follows on the same port on its credential, by its proof.
	l := o.owner.Lease()
	cl, err := wire.DialRemote(l.Account, l.Address, l.Pin, o.desk3, account.Caller{Name: "desk-3", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if _, err := cl.Status(t.Context(), account.StatusRequest{}); err != nil {
		t.Errorf("desk-3 as a follower: %v", err)
	}
	// desk-2 revoked: its next request, on the connection it holds, is refused.
	if err := os.WriteFile(o.file, []byte("desk-3 "+bearerUntil+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if status, _, v := send("/v1/status", o.desk2, "{}"); status != http.StatusUnauthorized {
		t.Errorf("desk-2 after its line went: %d %v; want 401", status, v)
	}
}

// TestGeneratedClient places a locate with the client oapi-codegen made
// from api/openapi.yaml alone (package apiclient), through the owner's
// bearer door, as a program of another host would: the document is enough
// to reach the service and be understood by it (spec "Short locates").
func TestGeneratedClient(t *testing.T) {
	t.Parallel()
	o := ownWithBearers(t)
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+o.desk2)
		return nil
	}
	c, err := apiclient.NewClientWithResponses("https://"+net.JoinHostPort(o.host, o.port),
		apiclient.WithHTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: o.tlsToTheOwners}}),
		apiclient.WithRequestEditorFn(bearer))
	if err != nil {
		t.Fatal(err)
	}
	caller := apiclient.Caller{Id: "generated", Name: "oapi-codegen client", Env: apiclient.CallerEnv("live")}
	id := "wf-generated-1"
	items := []apiclient.LocateItem{{Id: &id, Symbol: "HTBX", Quantity: 300, Policy: apiclient.Policy{MaxPrice: "0.05", MaxCost: "0"}}}
	resp, err := c.LocateWithResponse(t.Context(), &apiclient.LocateParams{LocatorCaller: caller}, apiclient.LocateRequest{Items: &items})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON200 == nil || resp.JSON200.Started == nil || len(*resp.JSON200.Started) != 1 || *(*resp.JSON200.Started)[0].Id != id {
		t.Fatalf("the generated client's locate: %s %s", resp.Status(), resp.Body)
	}
	end, err := o.owner.Local().As(account.Caller{Name: "test", Env: brokerclient.EnvLive}).Follow(t.Context(), account.FollowRequest{ID: id, FromStart: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if end.State != states.Filled {
		t.Errorf("the generated client's locate ended %s (%s); want filled", end.State, end.Reason)
	}
	// The same client reads the answer of a refusal in the document's shape.
	bad, err := c.QuoteWithResponse(t.Context(), &apiclient.QuoteParams{LocatorCaller: caller},
		apiclient.QuoteRequest{Items: &[]apiclient.QuoteItem{{Symbol: "HT/BX", Quantity: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	if bad.JSON422 == nil || bad.JSON422.Kind != apiclient.ErrorKind("input") || bad.JSON422.Message == "" {
		t.Errorf("a quote of a bad symbol: %s %s; want 422, kind input", bad.Status(), bad.Body)
	}
}
