package dashboard

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/browsertest"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// overflowJS lists, as "what: why" lines, every element of the offer
// banner, the tables and the forms whose box leaves its container's (the
// banner or the panel it is in), and a page wider than the window.
const overflowJS = `(() => {
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth) out.push("page: " + root.scrollWidth + " px wide in a " + window.innerWidth + " px window");
  const name = el => el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "") + " " + JSON.stringify((el.textContent || "").trim().slice(0, 30));
  for (const box of document.querySelectorAll(".offer, article")) {
    const b = box.getBoundingClientRect();
    if (b.left < -0.5 || b.right > window.innerWidth + 0.5) out.push(name(box) + ": leaves the window");
    for (const el of box.querySelectorAll("table, thead, tbody, tr, th, td, form, input, button, label, dl, dt, dd, span, svg, p")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5) {
        out.push(name(el) + ": [" + Math.round(r.left) + "," + Math.round(r.right) + "] leaves " + name(box) + " [" + Math.round(b.left) + "," + Math.round(b.right) + "]");
      }
    }
  }
  return out;
})()`

// TestBrowserTradingScreen drives the page in a real Chromium at a desk's
// width (1400 px) and a phone's (390 px): an offer that waits on a person
// is a banner with the shares offered, nothing of the banner, the tables
// or the forms leaves its container, the key Y approves the offer (the
// simulator's log shows one accept, spec "Short locates"), the positions
// and P&L on the page equal the P&L stream's snapshot after a price moves
// (spec "P&L stream"), every form carries the session's form token, and
// stopping the simulator turns the connection state red within 5 s. With
// LOCATOR_SCREENSHOT=DIR it writes DIR/dashboard-1400.png and
// DIR/dashboard-390.png (docs/).
func TestBrowserTradingScreen(t *testing.T) {
	t.Parallel()
	for _, width := range []int64{1400, 390} {
		t.Run(strconv.FormatInt(width, 10), func(t *testing.T) {
			t.Parallel()
			tradingScreen(t, width)
		})
	}
}

func tradingScreen(t *testing.T, width int64) {
	ctx := browsertest.New(t)
	// A budget of long numbers, shown under the account.
	budget, err := workflow.ParseBudget("1234567.89,DASH=987654.32,HTBX=123456.78")
	if err != nil {
		t.Fatal(err)
	}
	opt := setupOpt{budget: budget}
	held := holdOffer(t, &opt, askSymbol) // the clock stands still while the offer is on the page
	b := setup(t, opt)
	// Earlier in the day: a locate the policy took and part of it credited
	// back, one it declined over its cap, a job run, the fees synced, and
	// a working order.
	a := b.owner.Local().As(account.Caller{Name: "earlier", Env: brokerclient.EnvLive})
	b.locate(t, 500)
	b.await(t, a, b.creditBack(t, a, 200))
	declined := b.locateCapped(t, a, "HTBX", 300, "0.01")
	if declined.State != states.Declined {
		t.Fatalf("capped locate ended %s: %s", declined.State, declined.Reason)
	}
	b.syncLedger(t)
	b.jobRun(t, "pre-market", locator.JobOK, "DASH filled 500 at 0.02")
	// Many runs, with long words and numbers (the page at both
	// widths with long numbers and many job runs).
	for i := range 30 {
		b.jobRun(t, fmt.Sprintf("watchlist-%02d-end-of-day-credit-back", i), locator.JobOK,
			fmt.Sprintf("credited back 1234567 DASH (Locate) = 24691.34; skipped 9876543 RSHO (SingleUse): it cannot be credited back once used; run %d", i))
	}
	order := b.workingOrder(t, a)

	srv := httptest.NewServer(b.server.handler)
	t.Cleanup(srv.Close)
	t.Cleanup(b.server.Close) // first: it ends the page's event stream

	// The terminal: it asks, follows, and is put the offer, which its
	// person answers on the page instead.
	asked := make(chan struct{}, 1)
	remote := wire.Dial(b.owner.Lease().Endpoint, account.Caller{Name: "terminal", Env: brokerclient.EnvLive,
		Ask: func(ctx context.Context, q account.Question) bool {
			select {
			case asked <- struct{}{}:
			default:
			}
			<-ctx.Done() // answered on the page instead
			return false
		}}, b.sim.Client(t, b.sim.Live), b.sim.URL)
	t.Cleanup(remote.Close)
	res, err := remote.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: askSymbol, Quantity: 1000}}, Ask: true})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Started[0].ID
	followCtx, stopFollowing := context.WithCancel(t.Context())
	t.Cleanup(stopFollowing)
	go remote.Follow(followCtx, account.FollowRequest{ID: id}, nil)
	held.await(t, id)
	awaitSignal(t, "question put to the terminal", asked)

	banner := `#offer-` + id
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, 900),
		chromedp.Navigate(srv.URL),
		chromedp.WaitVisible(chromedp.CSS(banner+` .countdown`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent === "broker up"`),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-order="`+order+`"]') !== null`),
		chromedp.Poll[chromedp.Void](`(document.querySelector('[data-field="budget"]')?.textContent ?? "").includes("987654.32")`),
		chromedp.Poll[chromedp.Void](`document.body.textContent.includes("watchlist-29-end-of-day-credit-back")`),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	// Read in the page (the banner is drawn again every second, so a node
	// found by one call may be gone by the next).
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`(document.querySelector("`+banner+` .shares")?.textContent ?? "").startsWith("1000")`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Errorf("banner's shares are not the 1000 offered: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.title.includes("OFFER `+askSymbol+` 1000 @ 0.0400")`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Errorf("browser: the title does not flash the offer: %v", err)
	}
	formsCarryToken(t, ctx, "/answer", "/cancel-order", "/credit-back", "/credit-back-all", "/locate")
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowJS))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	for _, b := range bad {
		t.Errorf("at %d px: %s", width, b)
	}
	// No number or time is split across lines ("130" over "0").
	split, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("td.num, td.when, th.num, .budget b")].filter(el => {
		const r = document.createRange(); r.selectNodeContents(el);
		// Text on two lines: one piece lies wholly below another (a smaller
		// word on the same line, such as a price's type, overlaps it).
		const rs = [...r.getClientRects()].filter(x => x.height > 0);
		return el.textContent.trim() !== "" && rs.some(a => rs.some(b => b.top >= a.bottom - 1));
	}).map(el => el.textContent.trim())`))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if len(split) > 0 {
		t.Errorf("at %d px: split across lines: %q", width, split)
	}
	if dir := os.Getenv("LOCATOR_SCREENSHOT"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		path := filepath.Join(dir, fmt.Sprintf("dashboard-%d.png", width))
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("dashboard screenshot: %s", path)
	}

	// Y approves the banner's offer.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("y")); err != nil {
		t.Fatalf("browser: %v", err)
	}
	awaitSignal(t, "accept after Y", held.accepting)
	held.release()
	wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := b.wait(wctx, id)
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
		}
	}
	if accepts != 1 {
		t.Errorf("%d accepts of %s in the simulator's log, want 1", accepts, w.QuoteReqID)
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector(".offer") === null && document.title === "locator"`)); err != nil {
		t.Errorf("browser: the answered offer stays on the page: %v", err)
	}

	// The price of the position moves: the page follows the stream.
	pw, err := b.sim.Client(t, b.sim.Live).Streams.WatchPnL(t.Context(), []string{"LV100001"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pw.Close)
	if err := pw.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	before, _ := pw.Snapshot("LV100001")
	changed := pw.Changed()
	b.sim.Sim.SetPrice("MSFT", decimal.RequireFromString("431.25"))
	var snap brokerclient.PnLSnapshot
	for {
		select {
		case <-changed:
		case <-wctx.Done():
			t.Fatal("the stream did not move with the price")
		}
		changed = pw.Changed()
		if snap, _ = pw.Snapshot("LV100001"); !snap.TotalUnrealized.Equal(before.TotalUnrealized) && len(snap.Positions) == 1 &&
			!snap.Positions[0].PnLCalc.UnrealizedPnL.Equal(before.Positions[0].PnLCalc.UnrealizedPnL) {
			break
		}
	}
	pnl := snap.Positions[0]
	want := map[string]decimal.Decimal{
		`.pnl .figures [data-field="dayPnl"]`:                                           snap.DayPnl,
		`.pnl .figures [data-field="totalUnrealized"]`:                                  snap.TotalUnrealized,
		`.pnl .figures [data-field="dayUnrealized"]`:                                    snap.DayUnrealized,
		`[data-position="` + string(pnl.PositionID) + `"] [data-field="unrealizedPnL"]`: pnl.PnLCalc.UnrealizedPnL,
		`[data-position="` + string(pnl.PositionID) + `"] [data-field="dayPnl"]`:        pnl.PnLCalc.DayRealizedPnl.Add(pnl.PnLCalc.DayUnrealizedPnL),
	}
	for sel, v := range want {
		js := `(() => { const el = document.querySelector('` + sel + `'); return el !== null && el.dataset.value === "` + v.String() +
			`" && el.textContent === "` + v.StringFixed(2) + `"; })()`
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('`+sel+`') || {}).textContent || "none"`))
			t.Errorf("%s on the page: %s, want the stream's %s", sel, got, v.StringFixed(2))
		}
	}

	// The broker goes away: the owner's next read fails, and the page
	// says so (0.4 s beside another suite; the page is polled for a minute
	// of wall time as a hang guard only: virtual time, which the owner's
	// reads run on, races ahead of the page and waits for a loaded
	// machine, so neither clock gives a fair bound).
	b.sim.Server.CloseClientConnections()
	b.sim.Server.Close()
	stopped := time.Now()
	// Red from the owner's state, not from the page losing its own stream.
	red := `document.getElementById("status").classList.contains("bad") &&
		[...document.querySelectorAll(".conn.bad")].some(e => e.textContent.includes("broker unreachable"))`
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](red, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("browser: the connection state does not say the broker is unreachable a minute after it went away: %v", err)
	}
	t.Logf("red after %v", time.Since(stopped).Round(time.Millisecond))
}

// formsCarryToken checks that the page's forms post to each of actions,
// and to nothing else, all with the one form token of the page's session.
func formsCarryToken(t *testing.T, ctx context.Context, actions ...string) {
	t.Helper()
	type forms struct{ Actions, Without []string }
	fs, err := chromedp.Run(ctx, chromedp.Evaluate[forms](`(() => {
		const fs = [...document.querySelectorAll('form[method="post"]')], first = fs[0]?.elements.csrf?.value;
		return {Actions: [...new Set(fs.map(f => new URL(f.action).pathname))],
			Without: fs.filter(f => !first || f.elements.csrf?.value !== first).map(f => new URL(f.action).pathname)};
	})()`))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !slices.Equal(slices.Sorted(slices.Values(fs.Actions)), slices.Sorted(slices.Values(actions))) || len(fs.Without) > 0 {
		t.Errorf("the page's forms %v (want %v), without the session's form token: %v", fs.Actions, actions, fs.Without)
	}
}

// awaitSignal waits for ch.
func awaitSignal(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
	}
}

// creditBack starts a credit-back of qty Locate shares of testSymbol.
func (b *testBundle) creditBack(t *testing.T, a account.Account, qty int64) string {
	t.Helper()
	s, err := a.CreditBack(t.Context(), account.CreditBackRequest{Symbol: testSymbol, Quantity: qty, Type: brokercode.LocateTypeLocate})
	if err != nil {
		t.Fatal(err)
	}
	return s.Started[0].ID
}

// await follows workflow id to its end.
func (b *testBundle) await(t *testing.T, a account.Account, id string) *workflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := a.Follow(ctx, account.FollowRequest{ID: id}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// locateCapped locates qty of symbol under a cap and waits for its end.
func (b *testBundle) locateCapped(t *testing.T, a account.Account, symbol string, qty int64, capPrice string) *workflow.Workflow {
	t.Helper()
	res, err := a.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: symbol, Quantity: qty,
		Policy: workflow.Policy{MaxPrice: decimal.RequireFromString(capPrice)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return b.await(t, a, res.Started[0].ID)
}

// workingOrder places a buy of MSFT far under the market, which stays
// working, and returns its clientOrderId.
func (b *testBundle) workingOrder(t *testing.T, a account.Account) string {
	t.Helper()
	// Far under the market, past the fat-finger guard on purpose.
	o, err := a.PlaceOrder(t.Context(), account.PlaceOrderRequest{Order: workflow.Order{Symbol: "MSFT", Side: "Buy", OpenClose: "Open",
		OrderType: "Limit", TimeInForce: "Day", Quantity: 10, LimitPrice: decimal.RequireFromString("1.00"), Route: "SMART"}, Guard: workflow.Guard{Force: true}})
	// Placed again under its id, it is followed on until the broker has
	// it working (on a loaded machine the first answer may still be sent).
	for err == nil && o.State != states.OrderWorking && !o.Terminal() {
		o, err = a.PlaceOrder(t.Context(), account.PlaceOrderRequest{Order: workflow.Order{ClientOrderID: o.ClientOrderID}})
	}
	if err != nil {
		t.Fatal(err)
	}
	if o.Terminal() {
		t.Fatalf("order %s: %s", o.State, o.Reason)
	}
	return o.ClientOrderID
}

// TestBrowserApprovesFloatPrice answers in a real Chromium two offers the
// broker priced 0.013 and sent as the float 0.013000000000000001 (spec
// "Short locates": locatePrice is a JSON number): the banner shows 0.0130,
// and the key Y takes the first, the Approve button the second, each with
// one accept in the simulator's log (not both refused as "not
// the one answered").
func TestBrowserApprovesFloatPrice(t *testing.T) {
	t.Parallel()
	ctx := browsertest.New(t)
	var opt setupOpt
	held := holdOffer(t, &opt, floatSymbol) // the clock stands still while an offer is on the page
	b := setup(t, opt)
	srv := httptest.NewServer(b.server.handler)
	t.Cleanup(srv.Close)
	t.Cleanup(b.server.Close) // first: it ends the page's event stream
	remote := wire.Dial(b.owner.Lease().Endpoint, account.Caller{Name: "terminal", Env: brokerclient.EnvLive,
		Ask: func(ctx context.Context, q account.Question) bool { <-ctx.Done(); return false }}, b.sim.Client(t, b.sim.Live), b.sim.URL)
	t.Cleanup(remote.Close)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatalf("browser: %v", err)
	}

	for _, by := range []struct {
		name   string
		answer chromedp.Action[chromedp.Void]
		shares int64 // more than the inventory holds: quoted
	}{
		{"the key Y", chromedp.KeyEvent("y"), 1000},
		// One call in the page: the banner is drawn again every second.
		{"the Approve button", chromedp.Evaluate[chromedp.Void](`document.querySelector(".offer button.approve").click()`), 3000},
	} {
		res, err := remote.Locate(t.Context(), account.LocateRequest{Items: []account.LocateItem{{Symbol: floatSymbol, Quantity: by.shares}}, Ask: true})
		if err != nil {
			t.Fatal(err)
		}
		id := res.Started[0].ID
		held.await(t, id)
		// The page opened on the offer: the clock stands still, so no
		// tick draws the page again.
		banner := `#offer-` + id
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL),
			chromedp.Poll[chromedp.Void](`(document.querySelector("`+banner+` .price")?.textContent ?? "") === "0.0130"`,
				chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("browser: the banner does not show the offer at 0.0130: %v", err)
		}
		if err := chromedp.Do(ctx, by.answer); err != nil {
			t.Fatalf("browser: %v", err)
		}
		awaitSignal(t, "accept after "+by.name, held.accepting)
		held.release()
		wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		w, err := b.wait(wctx, id)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if w.State != states.Filled || !w.Price.Equal(floatPrice()) {
			t.Fatalf("approved by %s: %s at %s (%s), want filled at %s", by.name, w.State, w.Price, w.Reason, floatPrice())
		}
		accepts := 0
		for _, r := range b.sim.Sim.Requests() {
			if r.Method == "POST" && r.Path == "/v1/api/accounts/locates/accept" && strings.Contains(r.Body, w.QuoteReqID) {
				accepts++
			}
		}
		if accepts != 1 {
			t.Errorf("%d accepts of %s in the simulator's log, want 1", accepts, w.QuoteReqID)
		}
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.querySelector(".offer") === null`)); err != nil {
			t.Errorf("browser: the answered offer stays on the page: %v", err)
		}
	}
}

// A page of another local user on another 127.0.0.1 port gets nothing of
// the dashboard and places nothing, in a real Chromium logged in to it.
// The other user (a throwaway one, peerUser) serves a page from this test
// binary (collectAndReplay): an <img> whose address redirects to its own
// collector, which the browser hands the login cookie (cookies are not
// kept apart by port), then replays it as curl would, from that user:
// GET / and POST /locate with the dashboard's Origin (and the page's form
// token, had the page been served). Both are refused 403 as another
// user's. The page also posts a locate form to the dashboard from the
// browser itself (same site, another origin), which carries the cookie and
// comes from the owner's user, but neither the page's origin nor its form
// token. The browser's login still serves its own page, and nothing was
// placed: no locate workflow in the store and no quote in the simulator's
// log (spec "Short locates": a locate begins with POST .../locates/quote).
// Without the user rule the replayed page gives its form token away and
// the replayed locate is quoted.
func TestBrowserOtherUserGetsNothing(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root: the other user is made with useradd and its process started as that user (exec with SysProcAttr.Credential)")
	}
	uid, gid := peerUser(t)
	ctx := browsertest.New(t)
	// The clock stands still: nothing here waits on it, and the login
	// lasts the test however slow the machine.
	const token = "tok-other-user"
	b := setup(t, setupOpt{token: token, clock: func(*simtest.Bundle, func() bool) {}})
	base, addr := b.start(t)
	out, ready := asUser(t, uid, gid, collectEnv+"="+base)
	page, ok := strings.CutPrefix(ready, "ready ")
	if !ok {
		t.Fatalf("the other user's page said %q", ready)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/?token="+token),
		chromedp.WaitVisible(chromedp.CSS(".locate-form")),
		chromedp.Navigate(page),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	// What the other user's process saw and was answered, one line each
	// (a minute of wall time is a hang guard only).
	lines := make(chan string)
	go func() {
		defer close(lines)
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	said := map[string]string{}
	for len(said) < 4 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the other user's page ended after %v", said)
			}
			what, result, _ := strings.Cut(line, ": ")
			said[what] = result
		case <-time.After(time.Minute):
			t.Fatalf("the other user's page said only %v in a minute", said)
		}
	}
	t.Logf("the other user's page: %q", said)
	cookie := fmt.Sprintf("%s_%d", cookieBase, addr.(*net.TCPAddr).Port)
	if !slices.Contains(strings.Split(said["collected"], ","), cookie) {
		t.Errorf("the other user's page collected %q, not the login cookie %s: the attack this test replays did not happen", said["collected"], cookie)
	}
	for _, what := range []string{"replay GET /", "replay POST /locate"} {
		if !strings.HasPrefix(said[what], "403 ") || !strings.Contains(said[what], "answers only the user running it") {
			t.Errorf("%s from the other user: %q, want 403 saying why", what, said[what])
		}
	}
	if said["form posted"] != "from the browser" {
		t.Errorf("the page's form: %q", said["form posted"])
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".locate-form"))); err != nil {
		t.Errorf("browser: the owner's page after the attack: %v", err)
	}
	ws, err := b.store.List(t.Context(), store.Filter{Account: "LV100001", Kind: states.Locate})
	if err != nil || len(ws) != 0 {
		t.Errorf("locate workflows after the attack: %d %v, want none", len(ws), err)
	}
	for _, r := range b.sim.Sim.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/api/accounts/locates/quote" {
			t.Errorf("a quote reached the simulator: %s", r.Body)
		}
	}
}

// peerUserName is the throwaway user the tests of another local user run
// a process as.
const peerUserName = "locator-peer"

// peerUser is the uid and gid of peerUserName, made with useradd (a system
// user, no home, no login shell) when it is missing, and kept for the next
// run. Root only.
func peerUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	u, err := user.Lookup(peerUserName)
	if _, unknown := errors.AsType[user.UnknownUserError](err); unknown {
		add := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", peerUserName)
		out, addErr := add.CombinedOutput()
		// Another test may have made it meanwhile: look again either way.
		if u, err = user.Lookup(peerUserName); err != nil {
			t.Fatalf("useradd %s: %v: %s", peerUserName, addErr, out)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	group, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(id), uint32(group)
}

// collectEnv, set to the dashboard's base address, makes this test binary
// the other user's page (collectAndReplay).
const collectEnv = "LOCATOR_TEST_COLLECT_COOKIE"

// collectAndReplay serves, on a port of 127.0.0.1, a page that has the
// browser visiting it hand over the cookies it holds for 127.0.0.1 (an
// <img> redirected to /collect) and post a locate form to the dashboard;
// it says "ready ADDRESS", then one line per thing seen: the names of the
// cookies collected (never their values), what the dashboard answered the
// cookies replayed from here (GET /, and POST /locate with the dashboard's
// Origin and any form token the page gave away, as curl would), and that
// the form was posted. It serves until its stdin closes.
func collectAndReplay(dashboard string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var said sync.Mutex
	say := func(what, result string) {
		said.Lock()
		defer said.Unlock()
		result = strings.Join(strings.Fields(result), " ")
		fmt.Printf("%s: %.300s\n", what, result)
	}
	form := url.Values{"account": {"LV100001"}, "symbols": {testSymbol}, "quantity": {"500"}, "cap": {"0.05"}}
	var replay sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>pictures</title><img src="/bounce" alt="">
<iframe name="sink"></iframe><form method="post" action="%s/locate" target="sink">`, html.EscapeString(dashboard))
		for k, v := range form {
			fmt.Fprintf(w, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(v[0]))
		}
		fmt.Fprint(w, `</form><script>
document.querySelector("iframe").addEventListener("load", () => fetch("/posted"), {once: true});
document.forms[0].submit();
</script>`)
	})
	mux.HandleFunc("GET /bounce", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/collect", http.StatusFound) })
	mux.HandleFunc("GET /collect", func(w http.ResponseWriter, r *http.Request) {
		replay.Do(func() {
			var names []string
			for _, c := range r.Cookies() {
				names = append(names, c.Name)
			}
			say("collected", strings.Join(names, ","))
			cookies := r.Header.Get("Cookie")
			page := replayed(http.MethodGet, dashboard+"/", cookies, dashboard, nil)
			say("replay GET /", page)
			if m := formToken.FindStringSubmatch(page); m != nil {
				form.Set(csrfField, m[1]) // what a page served to the cookie would give away
			}
			say("replay POST /locate", replayed(http.MethodPost, dashboard+"/locate", cookies, dashboard, form))
		})
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /posted", func(w http.ResponseWriter, r *http.Request) { say("form posted", "from the browser") })
	go http.Serve(ln, mux)
	fmt.Printf("ready http://%s/\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
}

// replayed sends one request to target with the cookies and origin given
// (and form as its body), as curl would, and returns its status and its
// answer (the first 64 KiB).
func replayed(method, target, cookies, origin string, form url.Values) string {
	req, err := http.NewRequest(method, target, strings.NewReader(form.Encode()))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Cookie", cookies)
	req.Header.Set("Origin", origin)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return strconv.Itoa(resp.StatusCode) + " " + string(body)
}
