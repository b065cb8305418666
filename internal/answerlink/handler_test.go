package answerlink_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/internal/notifytest"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

const acct = "LV100001"

// testBundle is the simulator, a store on a temp file, this process owning
// LV100001 (live), a notifier whose one webhook asks for offers, and the
// links served on an httptest server (the dashboard's part) answering
// through an account the case chooses.
type testBundle struct {
	sim   *simtest.Bundle
	st    *store.Store
	cfg   service.OwnerConfig
	owner atomic.Pointer[service.Owner]
	hold  atomic.Bool // holds the fake clock still while a person acts
	// prompting counts the questions at the case's prompt (offerWaiting):
	// the fake clock stands still while one waits on a person.
	prompting atomic.Int32
	logs      *notifytest.Log
	log       *slog.Logger
	hook      *notifytest.Receiver // the webhook told of offers
	n         *notify.Notifier
	links     *answerlink.Links
	// serve is what the links server answers with (set per case).
	serve atomic.Pointer[http.Handler]
	srv   *httptest.Server
}

func (b *testBundle) get(k string) string {
	return map[string]string{"LINK_SECRET": secret}[k]
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{sim: simtest.New(t), logs: &notifytest.Log{}}
	b.log = slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	db := filepath.Join(t.TempDir(), "locator.db")
	st, err := store.Open(t.Context(), db, b.sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b.st = st
	run, err := os.MkdirTemp("", "lr") // a socket's path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	// Virtual time runs while the engine's poller and dispatcher wait on
	// it (the owner's heartbeat keeps real time), and stands still while
	// an offer waits on a person: from its Offered record on (its
	// question is on its way to the case's prompt, or to a link), while
	// the question waits at the prompt, and while the case holds it. A
	// person takes no virtual time to answer; with the clock running
	// between the offer and its prompt, a loaded machine let the offer's
	// 30 seconds pass before the prompt was up (TestDeclineLink: 410).
	// Nor while the owner holds an event or a question (Owner.Idle).
	b.sim.RunClockWhile(t, 2, func() bool {
		o := b.owner.Load()
		return !b.hold.Load() && b.prompting.Load() == 0 && !b.offered(t) && (o == nil || o.Idle())
	})
	b.cfg = service.OwnerConfig{
		Engine: engine.Config{Client: b.sim.Client(t, b.sim.Live), Store: st, Clock: b.sim.Clock, Account: acct, Env: brokerclient.EnvLive, Logger: b.log},
		DB:     db, BaseURL: b.sim.URL, RuntimeDir: run, Role: wire.RoleCommand,
	}
	b.hook = notifytest.NewReceiver(t)
	b.n, err = notify.New(notify.Config{
		Webhooks:  []notify.Webhook{{URLEnv: "OFFERS", Format: notify.FormatJSON, Events: []notify.Kind{notify.OfferWaiting}}},
		LookupEnv: func(k string) (string, bool) { return b.hook.URL, k == "OFFERS" },
		Clock:     b.sim.Clock, Logger: b.log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.n.Close(t.Context()) })
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*b.serve.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	b.links, err = answerlink.Open(&answerlink.Config{BaseURL: b.srv.URL, SecretEnv: "LINK_SECRET"}, b.get, b.sim.Clock, b.log)
	if err != nil {
		t.Fatal(err)
	}
	b.own(t)
	return b
}

// offered reports whether a workflow of the account is Offered: its
// offer waits on a person.
func (b *testBundle) offered(t *testing.T) bool {
	ws, err := b.st.List(context.WithoutCancel(t.Context()), store.Filter{Account: acct})
	return err == nil && slices.ContainsFunc(ws, func(w *workflow.Workflow) bool { return w.State == states.Offered })
}

// own makes this process the owner (again), its offers notified with
// links.
func (b *testBundle) own(t *testing.T) *service.Owner {
	t.Helper()
	if b.owner.Load() != nil {
		// A next owner's pacer waits out the buckets its predecessor drew
		// on, while nothing else waits on the clock: the restart takes a
		// second.
		b.sim.Clock.Advance(time.Second)
	}
	o, err := service.Own(t.Context(), b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	o.Local().NotifyOffers(b.links.Notifier(acct, b.n))
	b.owner.Store(o)
	return o
}

// answerWith serves the links through a, as the case's process holds the
// account.
func (b *testBundle) answerWith(a account.Account) {
	h := b.links.Handler(map[string]account.Account{acct: a})
	b.serve.Store(&h)
}

// account is the account as a process holding it sees it: the owner's
// own implementation, or a follower's through the socket.
func (b *testBundle) account(t *testing.T, follower bool, name string) account.Account {
	t.Helper()
	c := account.Caller{ID: uuid.NewString(), Name: name, Env: brokerclient.EnvLive}
	if follower {
		cl := wire.Dial(b.owner.Load().Lease().Endpoint, c, b.sim.Client(t, b.sim.Live), b.sim.URL)
		t.Cleanup(cl.Close)
		return cl
	}
	return b.owner.Load().Local().As(c)
}

// offerWaiting starts a locate of 200 HTBX whose offer waits on a person
// at a prompt (who never answers there), and returns its workflow id and
// the offer's notification.
func (b *testBundle) offerWaiting(t *testing.T) (string, notify.Event) {
	t.Helper()
	asked := make(chan struct{}, 1)
	c := account.Caller{ID: uuid.NewString(), Name: "test prompt", Env: brokerclient.EnvLive,
		Ask: func(ctx context.Context, q account.Question) bool {
			b.prompting.Add(1)
			defer b.prompting.Add(-1)
			asked <- struct{}{}
			<-ctx.Done()
			return false
		}}
	o := b.owner.Load()
	t.Cleanup(o.Local().Listen(c.ID, c.Ask))
	res, err := o.Local().As(c).Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 200}}, Ask: true})
	if err != nil || len(res.Started) != 1 || res.Started[0].ID == "" {
		t.Fatalf("locate: %+v, %v", res, err)
	}
	ev := b.event(t)
	<-asked
	if ev.Kind != notify.OfferWaiting || ev.Offer == nil || ev.Offer.WorkflowID != res.Started[0].ID || ev.Account != acct {
		t.Fatalf("notification %+v, want the offer of %s", ev, res.Started[0].ID)
	}
	return res.Started[0].ID, ev
}

// event waits for the webhook's next notification (a wall-clock bound as a
// safety net for a broken hand-off; nothing waits out a window on it).
func (b *testBundle) event(t *testing.T) notify.Event {
	t.Helper()
	var ev notify.Event
	if p := b.hook.Next(t); json.Unmarshal(p.Body, &ev) != nil {
		t.Fatalf("webhook body %q: want a JSON event", p.Body)
	}
	return ev
}

// writes counts the requests that changed something at the broker.
func (b *testBundle) writes() int {
	n := 0
	for _, r := range b.sim.Sim.Requests() {
		if r.Method != http.MethodGet && !strings.HasPrefix(r.Path, "/_sim/") {
			n++
		}
	}
	return n
}

// accepts counts the accepts the broker received.
func (b *testBundle) accepts() int {
	n := 0
	for _, r := range b.sim.Sim.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/locates/accept") {
			n++
		}
	}
	return n
}

// visit sends method to link and returns the status and the page.
func visit(t *testing.T, method, link string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// formTokenField finds the form token a link's page carries.
var formTokenField = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// formToken is the form token of a link's page ("": none).
func formToken(page string) string {
	if m := formTokenField.FindStringSubmatch(page); m != nil {
		return m[1]
	}
	return ""
}

// post posts link's form with form token csrf ("" leaves it out) and
// returns the status and the page.
func post(t *testing.T, link, csrf string) (int, string) {
	t.Helper()
	form := url.Values{}
	if csrf != "" {
		form.Set("csrf", csrf)
	}
	resp, err := http.PostForm(link, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// press opens link's page and presses its button, as a person does: a
// POST with the page's form token.
func press(t *testing.T, link string) (int, string) {
	t.Helper()
	_, page := visit(t, http.MethodGet, link)
	return post(t, link, formToken(page))
}

// token is a link's token.
func token(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(u.Path, answerlink.Prefix) {
		t.Fatalf("link %q: not under %s", link, answerlink.Prefix)
	}
	return strings.TrimPrefix(u.Path, answerlink.Prefix)
}

// state is workflow id's state as the owner sees it.
func (b *testBundle) state(t *testing.T, a account.Account, id string) states.State {
	t.Helper()
	st, err := a.Status(t.Context(), account.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range st.Open {
		if w.ID == id {
			return w.State
		}
	}
	w, err := b.st.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return w.State
}
