package dashboard

import (
	"context"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/browsertest"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
)

// A person answers an offer on the page, in a real Chromium: a terminal's
// locate with no cap and no auto-accept puts its offer to that terminal,
// the page shows it counting down on the service's clock (read, the clock
// moved, read again: less), Approve goes through the owner to the
// question the terminal was asked, and the simulator's request log shows
// the accept, the workflow filled. With LOCATOR_SCREENSHOT=FILE it writes
// a PNG of the page showing the offer (docs/dashboard.png).
func TestBrowserApproveOffer(t *testing.T) {
	t.Parallel()
	ctx := browsertest.New(t)
	var hold atomic.Bool // the clock stands still while the offer is on the page
	offered, accepting := make(chan string, 1), make(chan struct{}, 1)
	b := setup(t, setupOpt{
		clock: func(sim *simtest.Bundle) { sim.RunClockWhile(t, 3, func() bool { return !hold.Load() }) },
		onUpdate: func(u engine.Update) {
			switch w := u.Workflow; {
			case w == nil || w.Symbol != askSymbol:
			case w.State == states.Offered:
				hold.Store(true)
				select {
				case offered <- w.ID:
				default:
				}
			case w.State == states.Accepting:
				select {
				case accepting <- struct{}{}:
				default:
				}
			}
		},
	})
	// Earlier in the day: a locate the policy took, its fee synced from
	// the ledger, a job run.
	first := b.locate(t, 300)
	b.syncLedger(t)
	b.jobRun(t, "pre-market", store.JobOK, "DASH filled 300 at 0.02 ["+first.ID+"]")

	srv := httptest.NewServer(b.server.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(b.server.Close) // first: it ends the page's event stream

	// The terminal: it asks, follows, and is put the offer, which its
	// person answers on the page instead.
	asked := make(chan struct{}, 1)
	remote := service.Dial(b.owner.Lease().Endpoint, account.Caller{Name: "terminal", Env: brokerclient.EnvLive,
		Ask: func(ctx context.Context, q account.Question) bool {
			select {
			case asked <- struct{}{}:
			default:
			}
			<-ctx.Done() // answered on the page instead
			return false
		}}, b.sim.Client(t, b.sim.Live), b.sim.URL)
	t.Cleanup(remote.Close)
	res, err := remote.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: askSymbol, Quantity: 500}}, Ask: true})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Started[0].ID
	followCtx, stopFollowing := context.WithCancel(t.Context())
	t.Cleanup(stopFollowing)
	go remote.Follow(followCtx, account.FollowRequest{ID: id}, nil)
	await := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s", what)
		}
	}
	select {
	case got := <-offered:
		if got != id {
			t.Fatalf("offer for %s, want %s", got, id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no offer")
	}
	await("question put to the terminal", asked)

	countdown := chromedp.CSS(`tr[id="` + id + `"] .countdown`)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL),
		chromedp.WaitVisible(countdown),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent === "live"`),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	seconds := func() (string, int) {
		t.Helper()
		text, err := chromedp.Run(ctx, chromedp.Text(countdown))
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		n, err := strconv.Atoi(strings.TrimSuffix(text, "s"))
		if err != nil {
			t.Fatalf("countdown %q: %v", text, err)
		}
		return text, n
	}
	text1, left1 := seconds()
	if left1 < 20 || left1 > 30 {
		t.Fatalf("countdown %q right after the offer", text1)
	}
	b.sim.Advance(3 * time.Second) // the page's next tick is on this clock
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector('tr[id="`+id+`"] .countdown').textContent !== "`+text1+`"`)); err != nil {
		t.Fatalf("browser: countdown stuck at %s: %v", text1, err)
	}
	text2, left2 := seconds()
	if left2 >= left1 || left1-left2 > 4 {
		t.Fatalf("countdown %s, then %s after 3 s", text1, text2)
	}
	if path := os.Getenv("LOCATOR_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("dashboard screenshot: %s", path)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr[id="`+id+`"] button.approve`))); err != nil {
		t.Fatalf("browser: %v", err)
	}
	if msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("status"))); err != nil || msg != "live" {
		t.Logf("page status after Approve: %q %v", msg, err)
	}
	await("accept after Approve", accepting)
	hold.Store(false)
	wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := b.owner.Engine().Wait(wctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if w.State != states.Filled {
		t.Fatalf("workflow ended %s: %s", w.State, w.Reason)
	}
	var accepts int
	for _, r := range b.sim.Sim.Requests() {
		if r.Method == "POST" && r.Path == "/v1/api/accounts/locates/accept" && strings.Contains(r.Body, w.QuoteReqID) {
			accepts++
			if r.Status != 200 {
				t.Errorf("accept answered %d", r.Status)
			}
		}
	}
	if accepts != 1 {
		t.Errorf("%d accepts of %s in the simulator's log, want 1", accepts, w.QuoteReqID)
	}
	// The page follows: the workflow leaves the live list.
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.getElementById("`+id+`") === null`)); err != nil {
		t.Errorf("browser: the filled workflow stays on the page: %v", err)
	}
}
