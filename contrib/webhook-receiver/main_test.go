package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/notify"
)

const testSecret = "0123456789abcdef0123456789abcdef-receiver"

// post is one request the receiver got, as sent.
type post struct {
	header http.Header
	body   []byte
	status int
}

// serve runs the example's receiver on clk's time behind a recorder of
// each post and its answer; handled gets each body the receiver accepted.
func serve(t *testing.T, clk clock.Clock) (srv *httptest.Server, posts <-chan post, handled <-chan []byte) {
	t.Helper()
	got := make(chan post, 8)
	ok := make(chan []byte, 8)
	h := receiver([]byte(testSecret), clk.Now, func(body []byte) { ok <- body })
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		got <- post{header: r.Header.Clone(), body: body, status: rec.Code}
		w.WriteHeader(rec.Code)
	}))
	t.Cleanup(srv.Close)
	return srv, got, ok
}

// notifier posts json events to srv, signed with secret (nil: unsigned).
func notifier(t *testing.T, srv *httptest.Server, clk clock.Clock, secret []byte) *notify.Notifier {
	t.Helper()
	n, err := notify.New(notify.Config{
		Webhooks:  []notify.Webhook{{URLEnv: "HOOK", Format: notify.FormatJSON}},
		LookupEnv: func(string) (string, bool) { return srv.URL, true },
		Clock:     clk, Secret: secret, Retries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(t.Context()) })
	return n
}

// The receiver docs/operations.md shows accepts locator's signed posts and
// refuses, unhandled, a post without a signature, one signed with another
// secret, one whose body was changed, and a replay of a real post once its
// signature is older than five minutes (the fake clock moved on).
func TestReceiverVerifiesLocatorsPosts(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC))
	srv, posts, handled := serve(t, clk)
	ev := notify.Event{Kind: notify.JobFailed, Job: "eod", Account: "LV100001", Time: clk.Now(), Detail: "boom"}

	notifier(t, srv, clk, []byte(testSecret)).Notify(ev)
	p := <-posts
	if p.status != http.StatusNoContent {
		t.Fatalf("a signed post: %d, want 204 (header %q)", p.status, p.header.Get(notify.SignatureHeader))
	}
	var got notify.Event
	if err := json.Unmarshal(<-handled, &got); err != nil || got.Job != "eod" || got.Kind != notify.JobFailed {
		t.Errorf("handled %+v, %v", got, err)
	}

	resend := func(name string, header string, body []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, bytes.NewReader(body))
		if header != "" {
			req.Header.Set(notify.SignatureHeader, header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if p := <-posts; p.status != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, p.status)
		}
	}
	sig := p.header.Get(notify.SignatureHeader)
	forged := bytes.Replace(p.body, []byte(`"eod"`), []byte(`"eoe"`), 1)
	resend("no signature", "", p.body)
	resend("another secret", notify.Sign([]byte(strings.Repeat("x", 32)), p.body, clk.Now()), p.body)
	resend("a changed body", sig, forged)
	clk.Advance(tolerance + time.Second)
	resend("a replay six minutes on", sig, p.body)

	notifier(t, srv, clk, nil).Notify(ev)
	if p := <-posts; p.status != http.StatusUnauthorized || p.header.Get(notify.SignatureHeader) != "" {
		t.Errorf("an unsigned notifier's post: %d %q, want 401 without a signature", p.status, p.header.Get(notify.SignatureHeader))
	}
	select {
	case b := <-handled:
		t.Errorf("handled a refused post: %s", b)
	default:
	}
}

// docs/operations.md shows this very program: the receiver the test above runs.
func TestREADMEShowsTheReceiver(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, append(append([]byte("```go\n"), src...), "```\n"...)) {
		t.Error("docs/operations.md does not hold contrib/webhook-receiver/main.go verbatim in a go block: copy it there")
	}
}
