package notify_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/internal/notifytest"
)

// env is a fake environment.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

var event = notify.Event{
	Kind: notify.JobFailed, Job: "premarket", JobKind: "locate", Account: "LV100001",
	Time:        time.Date(2026, 11, 25, 14, 0, 5, 0, time.UTC),
	RunID:       12,
	Detail:      "HTBX filled 100 @ 0.0150 [w1]; HTBY declined (price 0.03 > max 0.02) [w2]",
	WorkflowIDs: []string{"w2"},
}

// One event reaches a json and a slack webhook once each: the JSON body
// carries every field, the Slack one a text naming job, account, run,
// detail and workflows.
func TestNotifyJSONAndSlack(t *testing.T) {
	t.Parallel()
	rcv := notifytest.NewReceiver(t)
	n, err := notify.New(notify.Config{
		Webhooks:  []notify.Webhook{{URLEnv: "HOOK_JSON", Format: notify.FormatJSON}, {URLEnv: "HOOK_SLACK", Format: notify.FormatSlack}},
		LookupEnv: env(map[string]string{"HOOK_JSON": rcv.URL + "/json", "HOOK_SLACK": rcv.URL + "/services/T0/B0/secret"}),
		Clock:     clock.NewFake(event.Time),
	})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(event)
	n.Close(t.Context())
	byPath := map[string]notifytest.Post{}
	for range 2 {
		r := rcv.Next(t)
		byPath[r.Path] = r
	}
	select {
	case r := <-rcv.Got:
		t.Fatalf("a third request: %s %s", r.Path, r.Body)
	default:
	}
	want := map[string]any{
		"event": "job_failed", "job": "premarket", "jobKind": "locate", "account": "LV100001",
		"time": "2026-11-25T14:00:05Z", "run": float64(12), "detail": event.Detail, "workflowIds": []any{"w2"},
	}
	wantText := ":warning: locator: job premarket (locate) failed on account LV100001 at 2026-11-25 09:00:05 EST (run 12)\n" +
		"HTBX filled 100 @ 0.0150 [w1]; HTBY declined (price 0.03 &gt; max 0.02) [w2]\nworkflows: w2"
	checkBodies(t, byPath["/json"], byPath["/services/T0/B0/secret"], want, wantText)
	for p, r := range byPath {
		if r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: content type %q", p, r.Header.Get("Content-Type"))
		}
	}
}

// A 500 is retried after the backoff, on the injected clock; the 200 that
// follows ends the delivery: two requests in all.
func TestNotifyRetries500Once(t *testing.T) {
	t.Parallel()
	rcv := notifytest.NewReceiver(t, http.StatusInternalServerError, http.StatusOK)
	clk := clock.NewFake(event.Time)
	n, err := notify.New(notify.Config{
		Webhooks:  []notify.Webhook{{URLEnv: "HOOK", Format: notify.FormatJSON}},
		LookupEnv: env(map[string]string{"HOOK": rcv.URL}),
		Clock:     clk,
		Backoff:   5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(event)
	rcv.Next(t)
	<-clk.BlockUntil(1) // the worker waits out the backoff
	clk.Advance(4 * time.Second)
	select {
	case r := <-rcv.Got:
		t.Fatalf("retried before the backoff ended: %s", r.Body)
	default:
	}
	clk.Advance(time.Second)
	rcv.Next(t)
	n.Close(t.Context())
	select {
	case r := <-rcv.Got:
		t.Fatalf("a third request after the 200: %s", r.Body)
	default:
	}
}

// Neither the URL nor its host reaches the log, whether the receiver
// answers 200, keeps failing with 503, refuses with 404, or is not there at
// all; the log names the variable instead.
func TestNotifyNeverLogsURL(t *testing.T) {
	t.Parallel()
	ok, failing, refusing := notifytest.NewReceiver(t), notifytest.NewReceiver(t, http.StatusServiceUnavailable), notifytest.NewReceiver(t, http.StatusNotFound)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	urls := map[string]string{
		"HOOK_OK": ok.URL + "/ok/s3cret-ok", "HOOK_FAILING": failing.URL + "/failing/s3cret-failing",
		"HOOK_REFUSING": refusing.URL + "/refusing/s3cret-refusing", "HOOK_GONE": gone.URL + "/gone/s3cret-gone",
	}
	var hooks []notify.Webhook
	for name := range urls {
		hooks = append(hooks, notify.Webhook{URLEnv: name, Format: notify.FormatSlack})
	}
	logs := &notifytest.Log{}
	clk := clock.NewFake(event.Time)
	defer clk.Drive(1, nil)() // jump over every backoff
	n, err := notify.New(notify.Config{
		Webhooks: hooks, LookupEnv: env(urls), Clock: clk,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(event)
	n.Close(t.Context())
	out := logs.String()
	t.Logf("log:\n%s", out)
	for name, u := range urls {
		host := strings.SplitN(u, "/", 4)[2] // 127.0.0.1:PORT
		for _, secret := range []string{u, "s3cret", host} {
			if strings.Contains(out, secret) {
				t.Errorf("the log holds %q (of %s)", secret, name)
			}
		}
	}
	for _, want := range []string{"webhook=HOOK_FAILING", "reason=\"HTTP 503\"", "attempts=3", "webhook=HOOK_REFUSING", "reason=\"HTTP 404\"", "attempts=1", "webhook=HOOK_GONE", "HOOK_GONE host", "webhook=HOOK_OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

// A configuration mistake names the variable, never its value.
func TestNewRefusesBadWebhooks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		hook notify.Webhook
		env  map[string]string
		want string
	}{
		{notify.Webhook{URLEnv: "UNSET", Format: notify.FormatJSON}, nil, "webhook UNSET: the environment variable is not set"},
		{notify.Webhook{URLEnv: "NOT_URL", Format: notify.FormatJSON}, map[string]string{"NOT_URL": "s3cret"}, "webhook NOT_URL: webhook address refused: want https://"},
		// An event names accounts and workflows; it crosses a
		// network only encrypted.
		{notify.Webhook{URLEnv: "PLAIN", Format: notify.FormatJSON}, map[string]string{"PLAIN": "http://hooks.example/s3cret"}, "webhook PLAIN: webhook address refused: http:// beyond this machine's loopback"},
		{notify.Webhook{URLEnv: "USER", Format: notify.FormatJSON}, map[string]string{"USER": "https://me:s3cret@hooks.example/x"}, "webhook USER: webhook address refused: it carries a user name or password"},
		{notify.Webhook{URLEnv: "https://hooks.example/s3cret", Format: notify.FormatJSON}, nil, "urlEnv must name an environment variable"},
		{notify.Webhook{URLEnv: "H", Format: "xml"}, map[string]string{"H": "https://x.example/s3cret"}, `format "xml": want json, slack or ntfy`},
		{notify.Webhook{URLEnv: "H", Format: notify.FormatNtfy, Events: []notify.Kind{"offer"}}, map[string]string{"H": "https://x.example/s3cret"}, `event "offer": want one of job_failed, fee_problem, offer_waiting`},
	} {
		_, err := notify.New(notify.Config{Webhooks: []notify.Webhook{c.hook}, LookupEnv: env(c.env)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.hook, err, c.want)
		}
		if err != nil && strings.Contains(strings.TrimPrefix(err.Error(), "webhook https://hooks.example/s3cret"), "s3cret") {
			t.Errorf("%+v: error %q quotes the secret", c.hook, err)
		}
	}
}

// Notify never waits for a receiver: with one that hangs, a burst larger
// than the queue returns at once, the excess dropped and logged; Close
// gives up on the hung delivery when its context ends.
func TestNotifyNeverBlocks(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(release)
	logs := &notifytest.Log{}
	n, err := notify.New(notify.Config{
		Webhooks:  []notify.Webhook{{URLEnv: "HOOK", Format: notify.FormatJSON}},
		LookupEnv: env(map[string]string{"HOOK": hung.URL}),
		Clock:     clock.NewFake(event.Time),
		Logger:    slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for range 200 {
			n.Notify(event)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Notify blocked on a hung receiver")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	n.Close(ctx)
	if !strings.Contains(logs.String(), "queue is full") {
		t.Errorf("no drop logged:\n%s", logs.String())
	}
	var nilNotifier *notify.Notifier
	nilNotifier.Notify(event) // notifies nobody, and does not panic
}

// A signing secret shorter than MinSecret is refused at start,
// naming its variable and never quoting it.
func TestShortSigningSecretRefused(t *testing.T) {
	t.Parallel()
	const short = "too-short-secret"
	_, err := notify.New(notify.Config{Secret: []byte(short)})
	if err == nil || !strings.Contains(err.Error(), notify.SecretEnv) || strings.Contains(err.Error(), short) {
		t.Errorf("err = %v, want a refusal naming %s without the secret", err, notify.SecretEnv)
	}
}

// checkBodies checks what a JSON webhook got against want, field by
// field, and the text a Slack one got against wantText.
func checkBodies(t *testing.T, jsonPost, slackPost notifytest.Post, want map[string]any, wantText string) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(jsonPost.Body, &got); err != nil {
		t.Fatalf("json body %q: %v", jsonPost.Body, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("json body (-want +got):\n%s", diff)
	}
	var slack struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(slackPost.Body, &slack); err != nil {
		t.Fatalf("slack body %q: %v", slackPost.Body, err)
	}
	if slack.Text != wantText {
		t.Errorf("slack text\n%q\nwant\n%q", slack.Text, wantText)
	}
}
