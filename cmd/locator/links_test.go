package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/notify"
)

// End to end, for both daemons: `locator run` (its jobs
// file's "notify" block) and `locator serve --notify` (a file holding that
// block alone) own the account with a webhook asking for offers and answer
// links on their dashboard; an offer waiting at another process's prompt
// is sent to the webhook once, with its links; a link with a character
// changed, or posted without its page's form token, is refused and sends
// nothing; the approve link's button approves exactly once (one accept in the simulator's request log), the prompt's
// question is withdrawn and its locate ends filled; the link used again is
// refused (spec "Short locates" rule 1 and "Locate statuses": an Offered
// quote is accepted within its 30-second window).
func TestDaemonsSendOfferLinks(t *testing.T) {
	t.Parallel()
	for _, daemon := range []string{"run", "serve"} {
		t.Run(daemon, func(t *testing.T) {
			t.Parallel()
			offerLinksEndToEnd(t, daemon)
		})
	}
}

func offerLinksEndToEnd(t *testing.T, daemon string) {
	b := setupOwnersAt(t, 0, personSpeed)
	events := make(chan notify.Event, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev notify.Event
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("webhook body %q: %v", body, err)
		}
		events <- ev
	}))
	defer hook.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	notifyBlock := `"notify": {"webhooks": [{"urlEnv": "LOCATOR_TEST_OFFERS", "format": "json", "events": ["offer_waiting"]}],
  "links": {"baseURL": "http://` + listen + `", "secretEnv": "LOCATOR_TEST_LINK_SECRET"}}`
	b.env = append(b.env, "LOCATOR_TEST_OFFERS="+hook.URL, "LOCATOR_TEST_LINK_SECRET=0123456789abcdef0123456789abcdef-e2e")
	args, ready := []string{"serve", "--notify", writeFile(t, "notify.json", "{"+notifyBlock+"}")}, "serving LV100001"
	if daemon == "run" {
		args = []string{"run", "--config", writeFile(t, "jobs.json", `{"jobs": [{"name": "eod", "kind": "credit-back-unused", "schedule": "@close-15m"}], `+notifyBlock+"}")}
		ready = "daemon running"
	}
	run := b.command(context.Background(), append(args, "--listen", listen)...)
	stderr, _ := run.StderrPipe()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), ready) {
	}
	go io.Copy(io.Discard, stderr)

	var stdout, promptErr syncBuffer
	m := b.inProcess(&stdout, &promptErr)
	term, _ := openTerminalPair(t)
	m.Stdin = term
	done := make(chan int, 1)
	go func() { done <- m.Run(t.Context(), []string{"locate", "HTBX", "300"}) }()
	var ev notify.Event
	select {
	case ev = <-events:
	case <-time.After(30 * time.Second):
		t.Fatalf("no notification:\n%s", promptErr.String())
	}
	if ev.Kind != notify.OfferWaiting || ev.Offer == nil || ev.Offer.Symbol != "HTBX" || !strings.HasPrefix(ev.Offer.ApproveURL, "http://"+listen+"/link/") {
		t.Fatalf("notification %+v", ev)
	}
	approve := ev.Offer.ApproveURL
	before := len(b.writesAfter(t, 0))
	i := len(approve) - 10
	changed := approve[:i] + map[bool]string{true: "B", false: "A"}[approve[i] == 'A'] + approve[i+1:]
	for _, c := range []struct {
		method, link string
		status       int
	}{{http.MethodGet, approve, http.StatusOK}, {http.MethodPost, changed, http.StatusForbidden},
		{http.MethodPost, approve, http.StatusForbidden}} { // without the form token of the link's page
		req, _ := http.NewRequestWithContext(t.Context(), c.method, c.link, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != c.status {
			t.Fatalf("%s link: %v %v, want %d", c.method, resp, err, c.status)
		}
		resp.Body.Close()
	}
	if n := len(b.writesAfter(t, 0)) - before; n != 0 {
		t.Fatalf("%d writes sent by opening the link, a changed one and one without its page's form token", n)
	}
	if code := pressLink(t, approve); code != http.StatusOK {
		t.Fatalf("the approve link's button: %d", code)
	}
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stdout.String(), "filled") {
			t.Fatalf("the prompt's locate: exit %d\n%s\n%s", code, stdout.String(), promptErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the prompt's locate did not end:\n%s", promptErr.String())
	}
	if code := pressLink(t, approve); code != http.StatusGone {
		t.Errorf("approve link used again: %d, want 410", code)
	}
	accepts := 0
	for _, r := range b.requests(t) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/locates/accept") {
			accepts++
		}
	}
	if accepts != 1 {
		t.Errorf("%d accepts in the request log, want 1", accepts)
	}
	select {
	case again := <-events:
		t.Errorf("a second notification: %+v", again)
	default:
	}
}

// pressLink opens link's page and presses its button as a person does (a
// POST with the page's form token) and returns the answer's status.
func pressLink(t *testing.T, link string) int {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the link's page has no form token: %s", page)
	}
	resp, err = http.PostForm(link, url.Values{"csrf": {string(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
