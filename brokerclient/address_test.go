package brokerclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/simtest"
)

// The address rule: TLS beyond loopback, no credentials in the address, no
// query on a base address; and the refusal never quotes the address.
func TestCheckAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		use  brokerclient.AddressUse
		want bool // accepted
	}{
		{"https://broker.example", brokerclient.BrokerAddress, true},
		{"http://127.0.0.1:8700", brokerclient.BrokerAddress, true},
		{"http://localhost:8700", brokerclient.BrokerAddress, true},
		{"http://[::1]:8700", brokerclient.BrokerAddress, true},
		{"http://127.9.9.9", brokerclient.BrokerAddress, true},
		{"http://broker.example", brokerclient.BrokerAddress, false},
		{"http://10.0.0.5:8700", brokerclient.BrokerAddress, false},
		{"http://0.0.0.0:8700", brokerclient.BrokerAddress, false},
		{"http://localhost.evil.example", brokerclient.BrokerAddress, false},
		{"https://user:hunter2@broker.example", brokerclient.BrokerAddress, false},
		{"https://broker.example?key=hunter2", brokerclient.BrokerAddress, false},
		{"https://broker.example#x", brokerclient.BrokerAddress, false},
		{"ftp://broker.example", brokerclient.BrokerAddress, false},
		{"broker.example", brokerclient.BrokerAddress, false},
		{"wss://broker.example", brokerclient.StreamAddress, true},
		{"ws://127.0.0.1:1", brokerclient.StreamAddress, true},
		{"ws://broker.example", brokerclient.StreamAddress, false},
		{"https://broker.example", brokerclient.StreamAddress, false},
		{"https://login.example/authorize?program=1", brokerclient.LoginAddress, true},
		{"http://login.example/authorize", brokerclient.LoginAddress, false},
		{"https://hooks.example/T0/B0?code=hunter2", brokerclient.WebhookAddress, true},
		{"http://hooks.example/hunter2", brokerclient.WebhookAddress, false},
		{"http://127.0.0.1:9/hook", brokerclient.WebhookAddress, true},
	} {
		_, err := brokerclient.CheckAddress(tc.raw, tc.use)
		if got := err == nil; got != tc.want {
			t.Errorf("CheckAddress(%q, %v) = %v, want accepted %v", tc.raw, tc.use, err, tc.want)
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, brokerclient.ErrAddress) || !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("CheckAddress(%q): %v is not ErrAddress and ErrInvalidInput", tc.raw, err)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), ".example") {
			t.Errorf("CheckAddress(%q): the error quotes the address: %v", tc.raw, err)
		}
	}
}

// Every address the client takes passes the rule: plain http to a host
// beyond loopback is refused when the client is built, before any request.
func TestNewClientRefusesPlainHTTPBeyondLoopback(t *testing.T) {
	t.Parallel()
	login := brokerclient.PartnerConfig{ClientID: "c", ClientSecret: "s", LoginURL: "http://login.example/authorize", RedirectURI: "http://127.0.0.1:1/cb"}
	token := login
	token.LoginURL, token.TokenURL = "https://login.example/authorize", "http://login.example/token"
	for name, opts := range map[string][]brokerclient.Option{
		"base":    {brokerclient.WithBaseURL("http://broker.example"), brokerclient.WithCredentials("k", "s")},
		"stream":  {brokerclient.WithBaseURL("https://broker.example"), brokerclient.WithCredentials("k", "s"), brokerclient.WithStreamURL("ws://broker.example")},
		"login":   {brokerclient.WithBaseURL("https://broker.example"), brokerclient.WithPartner(login)},
		"token":   {brokerclient.WithBaseURL("https://broker.example"), brokerclient.WithPartner(token)},
		"userinf": {brokerclient.WithBaseURL("https://u:p@broker.example"), brokerclient.WithCredentials("k", "s")},
	} {
		if _, err := brokerclient.NewClient(opts...); !errors.Is(err, brokerclient.ErrAddress) {
			t.Errorf("%s: NewClient = %v, want ErrAddress", name, err)
		}
	}
}

// redirector is a broker address that answers every request with a
// redirect to target, counting the key pairs it received.
type redirector struct {
	mu    sync.Mutex
	keys  int
	paths []string
}

func (rd *redirector) serve(tb testing.TB, status int, target string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rd.mu.Lock()
		if r.Header.Get("TZ-API-SECRET-KEY") != "" {
			rd.keys++
		}
		rd.paths = append(rd.paths, r.URL.Path)
		rd.mu.Unlock()
		http.Redirect(w, r, target+r.URL.RequestURI(), status)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// A broker address answering with a redirect to another host
// received the key pair, and Go sent it on to the target (it drops only
// Authorization and Cookie). Now the redirect is a fault naming only the
// target's host: the key pair is sent once, and the target (the simulator
// here) receives nothing, for a read, a write that must not be repeated,
// and a stream.
func TestRedirectIsNeverFollowed(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		rd := &redirector{}
		front := rd.serve(t, status, b.URL+"/private/path?token=hunter2")
		c := b.Client(t, b.Live, brokerclient.WithBaseURL(front.URL))

		_, _, err := c.Accounts.Get(t.Context(), "LV100001")
		var re *brokerclient.RedirectError
		if !errors.As(err, &re) || !errors.Is(err, brokerclient.ErrRedirect) {
			t.Fatalf("%d: Accounts.Get = %v, want a RedirectError", status, err)
		}
		simHost := strings.TrimPrefix(b.URL, "http://")
		if re.Host != simHost || !strings.Contains(err.Error(), simHost) {
			t.Errorf("%d: error %q names host %q, want %q", status, err, re.Host, simHost)
		}
		for _, leak := range []string{"hunter2", "private", b.Live.Secret} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%d: error %q carries %q", status, err, leak)
			}
		}

		_, _, err = c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100})
		if !errors.Is(err, brokerclient.ErrOutcomeUnknown) || !errors.Is(err, brokerclient.ErrRedirect) {
			t.Errorf("%d: quote = %v, want an outcome-unknown redirect (the id is looked up, never re-sent)", status, err)
		}

		ws, _ := url.Parse(front.URL)
		ws.Scheme = "ws"
		sc := b.Client(t, b.Live, brokerclient.WithBaseURL(front.URL), brokerclient.WithStreamURL(ws.String()))
		if conn, err := sc.Streams.Dial(t.Context(), brokerclient.StreamPnL); err == nil {
			conn.Close()
			t.Errorf("%d: stream dial through a redirect succeeded", status)
		}

		rd.mu.Lock()
		if rd.keys != 2 {
			t.Errorf("%d: the redirecting address received the key pair %d times, want once per call (2): %v", status, rd.keys, rd.paths)
		}
		rd.mu.Unlock()
		if reqs := b.Sim.Requests(); len(reqs) != 0 {
			t.Errorf("%d: the redirect target received %d requests, want none: %+v", status, len(reqs), reqs)
		}
	}
}

// The token exchange is not carried by a redirect either: the code and the
// client secret reach the configured address only.
func TestTokenExchangeRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	rd := &redirector{}
	front := rd.serve(t, http.StatusTemporaryRedirect, b.URL)
	c := b.PartnerClient(t, b.Partner.LiveClientID, brokerclient.WithBaseURL(front.URL))
	a := brokerclient.NewAttempt()
	cb := aliceSignsIn(t, b, b.PartnerClient(t, b.Partner.LiveClientID), a)
	before := len(b.Sim.Requests())
	_, err := c.Partner.ExchangeCallback(t.Context(), cb.Query(), a)
	var te *brokerclient.TokenError
	if !errors.As(err, &te) || te.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("exchange through a redirect: %v, want the 307 as a TokenError", err)
	}
	rd.mu.Lock()
	if len(rd.paths) != 1 || rd.paths[0] != brokerclient.TokenPath {
		t.Errorf("the redirecting address got %v, want one token post", rd.paths)
	}
	rd.mu.Unlock()
	if n := len(b.Sim.Requests()) - before; n != 0 {
		t.Errorf("the redirect target received %d requests", n)
	}
}
