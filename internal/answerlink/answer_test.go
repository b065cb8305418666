package answerlink_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/answerlink"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
)

// Approve and decline links, for an offer waiting on a person (spec
// "Short locates" rule 1 and "Locate statuses": an Offered quote is
// accepted within its 30-second window, or it expires): the
// offer's notification carries an approve and a decline link; opening one
// (GET) answers nothing; a link with any one character changed, and one
// past its deadline, are refused and send nothing; the button of the
// approve link's page approves exactly once (the simulator's request log
// holds one accept); a second use of it, or of the decline link, is
// refused and sends nothing.
// The link's answer goes through the account API of a process that owns
// the account and of one that follows its owner alike.
func TestApproveLinkOnce(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name     string
		follower bool
	}{{"owner", false}, {"follower", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			a := b.account(t, mode.follower, "test links")
			b.answerWith(a)
			id, ev := b.offerWaiting(t)
			approve, decline := ev.Offer.ApproveURL, ev.Offer.DeclineURL
			if !ev.Offer.Deadline.After(b.sim.Clock.Now()) {
				t.Fatalf("deadline %s is not ahead of now %s", ev.Offer.Deadline, b.sim.Clock.Now())
			}
			before := b.writes()

			// Opening a link shows the offer and a button; it answers nothing.
			status, page := visit(t, http.MethodGet, approve)
			if status != http.StatusOK || !strings.Contains(page, `<button type="submit">Approve</button></form>`) || formToken(page) == "" ||
				!strings.Contains(page, "Locate 200 HTBX") {
				t.Fatalf("GET approve link: %d\n%s", status, page)
			}
			if status, page := visit(t, http.MethodGet, decline); status != http.StatusOK || !strings.Contains(page, `<button type="submit" class="decline">Decline</button>`) {
				t.Fatalf("GET decline link: %d\n%s", status, page)
			}

			// Any one character of the token changed: refused, 403.
			tok := token(t, approve)
			base := strings.TrimSuffix(approve, tok)
			for i := range len(tok) {
				c := byte('A')
				if tok[i] == c {
					c = 'B'
				}
				if status, page := visit(t, http.MethodPost, base+tok[:i]+string(c)+tok[i+1:]); status != http.StatusForbidden ||
					!strings.Contains(page, "Nothing was sent to the broker.") {
					t.Fatalf("POST with character %d changed: %d, want 403\n%s", i, status, page)
				}
			}

			// Past its deadline, on the links' clock: refused, 410.
			late := clock.NewFake(ev.Offer.Deadline)
			expired, err := answerlink.Open(&answerlink.Config{BaseURL: b.srv.URL, SecretEnv: "LINK_SECRET"}, b.get, late, b.log)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptestRecorder(expired.Handler(map[string]account.Account{acct: a}), http.MethodPost, approve)
			if rec.Code != http.StatusGone || !strings.Contains(rec.Body.String(), "expired") {
				t.Fatalf("POST of an expired link: %d, want 410\n%s", rec.Code, rec.Body)
			}
			if n := b.writes() - before; n != 0 {
				t.Fatalf("%d writes sent by pages, changed and expired links, want 0", n)
			}
			if st := b.state(t, a, id); st != states.Offered {
				t.Fatalf("the offer is %s after refused links, want still offered", st)
			}

			// The approve link's button: approved, once.
			if status, page := press(t, approve); status != http.StatusOK || !strings.Contains(page, "<h1>Approved</h1>") {
				t.Fatalf("POST approve link: %d\n%s", status, page)
			}
			w, err := a.Follow(t.Context(), account.FollowRequest{ID: id}, nil)
			if err != nil || w.State != states.Filled {
				t.Fatalf("follow %s: %+v, %v; want filled", id, w, err)
			}
			if n := b.accepts(); n != 1 {
				t.Fatalf("%d accepts in the request log, want 1", n)
			}
			after := b.writes()
			for _, link := range []string{approve, decline} {
				// Refused as used; or, once the virtual clock has passed the
				// offer's deadline (it jumps to the next timer whenever the
				// process is idle, and the account idles once filled), as
				// expired, which a link's deadline says before its use.
				status, page := press(t, link)
				used := status == http.StatusGone && strings.Contains(page, "was used at")
				expired := status == http.StatusGone && strings.Contains(page, "has expired") && !b.sim.Clock.Now().Before(ev.Offer.Deadline)
				if !used && !expired {
					t.Errorf("POST %s again: %d, want 410 (used, or expired past the deadline)\n%s", link[len(link)-8:], status, page)
				}
			}
			if n := b.writes() - after; n != 0 {
				t.Errorf("%d writes sent by links used again, want 0", n)
			}
			if n := b.accepts(); n != 1 {
				t.Errorf("%d accepts in the request log, want 1", n)
			}
			b.n.Close(t.Context())
			assertNoSecrets(t, b, approve, decline)
		})
	}
}

// A link's POST is answered only from the button of its own page, which
// carries the page's form token: without it, or with the other link's
// (a form another page makes a browser post, a page of another user on
// this machine say), it is refused 403, nothing is sent (spec "Short
// locates": no accept) and the offer still waits; the page's own button
// then approves it, and the locate fills.
func TestLinkNeedsItsPageFormToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.account(t, false, "test links")
	b.answerWith(a)
	id, ev := b.offerWaiting(t)
	before := b.writes()
	_, declinePage := visit(t, http.MethodGet, ev.Offer.DeclineURL)
	for name, form := range map[string]string{"no": "", "the decline link's": formToken(declinePage)} {
		if status, page := post(t, ev.Offer.ApproveURL, form); status != http.StatusForbidden || !strings.Contains(page, "Not answered from the link") ||
			!strings.Contains(page, "Nothing was sent to the broker.") {
			t.Errorf("POST approve link with %s form token: %d, want 403\n%s", name, status, page)
		}
	}
	if n := b.writes() - before; n != 0 {
		t.Errorf("%d writes sent by posts without the page's form token, want 0", n)
	}
	if st := b.state(t, a, id); st != states.Offered {
		t.Fatalf("the offer is %s after the refused posts, want still offered", st)
	}
	if status, page := press(t, ev.Offer.ApproveURL); status != http.StatusOK || !strings.Contains(page, "<h1>Approved</h1>") {
		t.Fatalf("the approve link's button: %d\n%s", status, page)
	}
	if w, err := a.Follow(t.Context(), account.FollowRequest{ID: id}, nil); err != nil || w.State != states.Filled {
		t.Errorf("follow %s: %+v, %v; want filled", id, w, err)
	}
}

// The decline link declines the offer in a person's words (exit 0) and
// sends no accept (spec "Short locates" rule 6: the declined offer is
// cancelled); the approve link is refused after it.
func TestDeclineLink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.account(t, false, "test links")
	b.answerWith(a)
	id, ev := b.offerWaiting(t)
	if status, page := press(t, ev.Offer.DeclineURL); status != http.StatusOK || !strings.Contains(page, "<h1>Declined</h1>") {
		t.Fatalf("POST decline link: %d\n%s", status, page)
	}
	w, err := a.Follow(t.Context(), account.FollowRequest{ID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := account.OutcomeOf(w); w.State != states.Declined || !strings.Contains(o.Words, "declined by a person with a signed link") || console.Exit(o.End) != console.ExitOK {
		t.Errorf("outcome %s %q exit %d, want declined by a person with a signed link, exit 0", w.State, o.Words, console.Exit(o.End))
	}
	if status, _ := press(t, ev.Offer.ApproveURL); status != http.StatusGone {
		t.Errorf("approve after decline: %d, want 410", status)
	}
	if n := b.accepts(); n != 0 {
		t.Errorf("%d accepts sent, want 0", n)
	}
}

// A link survives its owner: the owner that sent it stops, the next owner
// (started with the same secret, on the same database) resumes the offer
// (spec "Locate statuses": still 65 Offered within its 30 seconds), raises
// no second notification for it, and answers the link once.
func TestLinkSurvivesOwnerRestart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id, ev := b.offerWaiting(t)
	b.hold.Store(true) // the person is reading their phone
	b.owner.Load().Close()
	next := b.own(t)
	a := next.Local().As(account.Caller{Name: "test links", Env: brokerclient.EnvLive})
	b.answerWith(a)
	if st := b.state(t, a, id); st != states.Offered {
		t.Fatalf("the offer is %s at the next owner, want offered", st)
	}
	if status, page := press(t, ev.Offer.ApproveURL); status != http.StatusOK {
		t.Fatalf("POST approve link at the next owner: %d\n%s", status, page)
	}
	b.hold.Store(false)
	w, err := a.Follow(t.Context(), account.FollowRequest{ID: id}, nil)
	if err != nil || w.State != states.Filled {
		t.Fatalf("follow %s: %+v, %v; want filled", id, w, err)
	}
	if status, _ := press(t, ev.Offer.ApproveURL); status != http.StatusGone {
		t.Errorf("approve link used again: %d, want 410", status)
	}
	if n := b.accepts(); n != 1 {
		t.Errorf("%d accepts in the request log, want 1", n)
	}
	b.n.Close(t.Context())
	if again := b.hook.Received(); len(again) > 0 {
		t.Errorf("a second notification: %s", again[0].Body)
	}
}

// httptestRecorder serves one request of method to link with h.
func httptestRecorder(h http.Handler, method, link string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, link, nil))
	return rec
}

// assertNoSecrets checks that no log line holds a link's token or the
// secret.
func assertNoSecrets(t *testing.T, b *testBundle, links ...string) {
	t.Helper()
	logs := b.logs.String()
	if !strings.Contains(logs, "offer answered by a signed link") || !strings.Contains(logs, "answer link refused") {
		t.Errorf("the log lacks the links' lines:\n%s", logs)
	}
	for _, l := range links {
		if tok := token(t, l); strings.Contains(logs, tok[:16]) || strings.Contains(logs, tok[len(tok)-16:]) {
			t.Errorf("the log holds a link's token:\n%s", logs)
		}
	}
	if strings.Contains(logs, secret) {
		t.Errorf("the log holds the secret")
	}
}
