package dashboard

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// act posts one of the page's forms for LV100001 as its script does
// (answered in JSON) and returns the answer.
func (b *testBundle) act(t *testing.T, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	form.Set("account", "LV100001")
	return b.post(t, path, form, "application/json")
}

// post posts form to path as the page does: from its origin, with the
// session the page opened and its form token (session), keeping the
// cookie that replaces it when it rotates, as a browser does; accept is
// the answer asked for ("" for a form posted without the script).
func (b *testBundle) post(t *testing.T, path string, form url.Values, accept string) *httptest.ResponseRecorder {
	t.Helper()
	cookie, csrf := b.session(t)
	form.Set(csrfField, csrf)
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(cookie)
	rec := b.serve(t, req, nil)
	for _, c := range rec.Result().Cookies() {
		if c.Name == cookie.Name {
			b.sessionMu.Lock()
			b.cookie = c
			b.sessionMu.Unlock()
		}
	}
	return rec
}

// sent counts the simulator's requests that changed something at the
// broker.
func (b *testBundle) sent() int {
	n := 0
	for _, r := range b.sim.Sim.Requests() {
		if r.Method != http.MethodGet && !strings.HasPrefix(r.Path, "/_sim/") {
			n++
		}
	}
	return n
}

// TestActionsBothWays takes every action of the page (locate, credit back
// a row and all unused, cancel an order, decline an offer) through a
// dashboard in the process that owns the account and through one that
// follows it over the owner's socket: each is one call on the account
// API, with the same outcome both ways (spec "Short locates", "Orders").
// Bad input is refused with a clear error and nothing sent.
func TestActionsBothWays(t *testing.T) {
	t.Parallel()
	bothWays(t, actions)
}

// bothWays runs test in parallel subtests for the page in the process
// that owns the account ("owner") and in one that follows it
// ("follower").
func bothWays(t *testing.T, test func(t *testing.T, follower bool)) {
	for _, follower := range []bool{false, true} {
		name := "owner"
		if follower {
			name = "follower"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, follower)
		})
	}
}

func actions(t *testing.T, follower bool) {
	opt := setupOpt{follower: follower}
	held := holdOffer(t, &opt, askSymbol) // the clock stands still while an offer waits on a person
	b := setup(t, opt)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	// Bad input: a clear error, nothing sent.
	before := b.sent()
	for _, c := range []struct {
		path string
		form url.Values
		want string
	}{
		{"/locate", url.Values{"symbols": {"DASH"}, "quantity": {"500"}}, "cap: want the most to pay per share"},
		{"/locate", url.Values{"symbols": {"DASH"}, "quantity": {"five"}, "cap": {"0.05"}}, "quantity: want a whole number"},
		{"/locate", url.Values{"symbols": {" , "}, "quantity": {"500"}, "cap": {"0.05"}}, "symbols: want one or more"},
		{"/locate", url.Values{"symbols": {"DA$H"}, "quantity": {"500"}, "cap": {"0.05"}}, "DA$H"},
		{"/locate", url.Values{"symbols": {"DASH"}, "quantity": {"150"}, "cap": {"0.05"}}, "150"},
		{"/credit-back", url.Values{"symbol": {"DASH"}, "type": {"Locate"}, "quantity": {"lots"}}, "quantity: want a whole number"},
		{"/cancel-order", url.Values{"clientOrderId": {""}}, ""},
		{"/answer", url.Values{"id": {"wf-none"}, "answer": {"maybe"}}, "answer: want approve or decline"},
	} {
		rec := b.act(t, c.path, c.form)
		if rec.Code != http.StatusBadRequest && rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s %v: %d %q, want a refusal saying %q", c.path, c.form, rec.Code, rec.Body.String(), c.want)
		}
	}
	if n := b.sent() - before; n != 0 {
		t.Errorf("bad input sent %d writes to the broker, want 0", n)
	}

	// Locate from the form, under its cap.
	if rec := b.act(t, "/locate", url.Values{"symbols": {"dash"}, "quantity": {"500"}, "cap": {"0.05"}}); rec.Code != http.StatusOK {
		t.Fatalf("locate: %d %s", rec.Code, rec.Body.String())
	}
	ws, err := b.store.List(ctx, store.Filter{Account: "LV100001", Symbol: testSymbol, Kind: states.Locate})
	if err != nil || len(ws) != 1 {
		t.Fatalf("locates of %s in the store: %d %v, want 1", testSymbol, len(ws), err)
	}
	if w, err := b.wait(ctx, ws[0].ID); err != nil || w.State != states.Filled {
		t.Fatalf("the form's locate: %+v %v, want filled", w, err)
	}

	// Credit back part of the row, then all that is unused.
	if rec := b.act(t, "/credit-back", url.Values{"symbol": {testSymbol}, "type": {"Locate"}, "quantity": {"9900"}}); rec.Code != http.StatusBadRequest {
		t.Errorf("credit back more than held: %d %s, want 400", rec.Code, rec.Body.String())
	}
	if rec := b.act(t, "/credit-back", url.Values{"symbol": {testSymbol}, "type": {"Locate"}, "quantity": {"200"}}); rec.Code != http.StatusOK {
		t.Fatalf("credit back: %d %s", rec.Code, rec.Body.String())
	}
	cbs, err := b.store.List(ctx, store.Filter{Account: "LV100001", Kind: states.CreditBack})
	if err != nil || len(cbs) != 1 || cbs[0].Quantity != 200 {
		t.Fatalf("credit-backs: %+v %v, want one of 200", cbs, err)
	}
	if w, err := b.wait(ctx, cbs[0].ID); err != nil || w.State != states.Credited {
		t.Fatalf("the credit-back: %+v %v, want credited", w, err)
	}
	// The answer names what was credited back (not a bare
	// 303 to nothing).
	if rec := b.act(t, "/credit-back-all", url.Values{}); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"done":"crediting back 300 DASH Locate"`) {
		t.Fatalf("credit back all: %d %s, want it to name the 300 DASH credited back", rec.Code, rec.Body.String())
	}
	if cbs, err = b.store.List(ctx, store.Filter{Account: "LV100001", Kind: states.CreditBack}); err != nil || len(cbs) != 2 || cbs[1].Quantity != 300 {
		t.Fatalf("credit-backs after all: %+v %v, want a second one of the 300 left", cbs, err)
	}
	if w, err := b.wait(ctx, cbs[1].ID); err != nil || w.State != states.Credited {
		t.Errorf("the credit-back of all unused: %+v %v, want credited", w, err)
	}
	// Without the page's script, the form's post is answered with a page
	// of what was done: here, nothing left unused.
	if rec := b.post(t, "/credit-back-all", url.Values{"account": {"LV100001"}}, ""); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "credit back all unused: nothing unused to credit back") ||
		!strings.Contains(rec.Body.String(), `href="/"`) {
		t.Errorf("credit back all without a script: %d %s, want a result page saying nothing was unused, with a way back", rec.Code, rec.Body.String())
	}

	// Cancel a working order.
	order := b.workingOrder(t, b.owner.Local().As(account.Caller{Name: "earlier"}))
	if rec := b.act(t, "/cancel-order", url.Values{"clientOrderId": {"no-such-order"}}); rec.Code != http.StatusConflict {
		t.Errorf("cancel an unknown order: %d %s, want 409", rec.Code, rec.Body.String())
	}
	if rec := b.act(t, "/cancel-order", url.Values{"clientOrderId": {order}}); rec.Code != http.StatusOK {
		t.Fatalf("cancel order: %d %s", rec.Code, rec.Body.String())
	}
	if o, err := b.store.GetOrder(ctx, order); err != nil || o.State != states.Canceled {
		t.Errorf("the order after cancel: %+v %v, want canceled", o, err)
	}

	// Decline an offer another process's person was asked.
	id := b.askElsewhere(t, held, account.LocateItem{Symbol: askSymbol, Quantity: 400})
	if rec := b.act(t, "/answer", url.Values{"id": {id}, "answer": {"decline"}, "price": {"0.0500"}}); rec.Code != http.StatusConflict {
		t.Errorf("decline at another price: %d %s, want 409", rec.Code, rec.Body.String())
	}
	if rec := b.act(t, "/answer", url.Values{"id": {id}, "answer": {"decline"}, "price": {"0.0400"}}); rec.Code != http.StatusOK {
		t.Fatalf("decline: %d %s", rec.Code, rec.Body.String())
	}
	held.release()
	w, err := b.wait(ctx, id)
	if err != nil || w.State != states.Declined || !strings.Contains(w.Reason, "the dashboard") {
		t.Fatalf("the declined offer: %+v %v, want declined with the dashboard", w, err)
	}
	for _, r := range b.sim.Sim.Requests() {
		if r.Path == "/v1/api/accounts/locates/accept" && strings.Contains(r.Body, w.QuoteReqID) {
			t.Errorf("a declined offer was accepted: %s", r.Body)
		}
	}

	// The form's box allows the SingleUse side of a Reg SHO
	// pair: RSHO's SingleUse 0.04 is under the 0.05 cap, its PreBorrow
	// 0.09 is not.
	if rec := b.act(t, "/locate", url.Values{"symbols": {"RSHO"}, "quantity": {"300"}, "cap": {"0.05"}, "allowSingleUse": {"1"}}); rec.Code != http.StatusOK {
		t.Fatalf("locate RSHO: %d %s", rec.Code, rec.Body.String())
	}
	rs, err := b.store.List(ctx, store.Filter{Account: "LV100001", Symbol: "RSHO", Kind: states.Locate})
	if err != nil || len(rs) != 1 {
		t.Fatalf("locates of RSHO in the store: %d %v, want 1", len(rs), err)
	}
	if w, err := b.wait(ctx, rs[0].ID); err != nil || w.State != states.Filled || w.LocateType != "SingleUse" {
		t.Fatalf("the form's RSHO locate: %+v %v, want filled on its SingleUse side", w, err)
	}
}

// The fees panel is current under serve with nothing run by hand: the
// owner syncs today's ledger on its schedule (service.LedgerSyncEvery), so
// a fill's charge shows beside its expected fee once the next sync has
// read it (spec "Cash ledger").
func TestFeesPanelSyncedByOwner(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	if w := b.locate(t, 300); w.State != states.Filled {
		t.Fatalf("locate ended %s: %s", w.State, w.Reason)
	}
	// Virtual time runs on to the owner's next sync; the page is read
	// until it shows the ledger's charge, within a real-time bound.
	deadline := time.Now().Add(30 * time.Second)
	for {
		page := b.get(t, "/", nil).Body.String()
		if strings.Contains(page, "charged in the ledger 6.00") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fees panel never showed the ledger's charge:\n%s", page)
		}
		time.Sleep(20 * time.Millisecond) // the owner's sync runs on its own goroutine
	}
	// On the schedule: the broker saw a ledger read within one sync of the
	// accept (judged from its log, since virtual time runs on while the
	// page is read in real time).
	var accepted time.Time
	var reads []time.Time
	for _, r := range b.sim.Sim.Requests() {
		switch {
		case r.Path == "/v1/api/accounts/locates/accept":
			accepted = r.Time
		case strings.Contains(r.Path, "/cash-transactions/"):
			reads = append(reads, r.Time)
		}
	}
	i := slices.IndexFunc(reads, func(at time.Time) bool { return !at.Before(accepted) })
	if accepted.IsZero() || i < 0 || reads[i].Sub(accepted) > service.LedgerSyncEvery {
		t.Errorf("accept at %v, ledger reads at %v: want one within %v of the accept", accepted, reads, service.LedgerSyncEvery)
	}
}

// TestAnswerOfferAtFloatPrice answers, through a dashboard that follows the
// owner over its socket, an offer whose price the broker sent as a float
// (0.013 as 0.013000000000000001, spec "Short locates": locatePrice is a
// JSON number): the page shows it at 4 decimals, and its form's answer is
// taken as the answer of that offer, while an answer of another price or
// another leg is refused with nothing sent.
func TestAnswerOfferAtFloatPrice(t *testing.T) {
	t.Parallel()
	opt := setupOpt{follower: true}
	held := holdOffer(t, &opt, floatSymbol) // the clock stands still while the offer waits on a person
	b := setup(t, opt)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	id := b.askElsewhere(t, held, account.LocateItem{Symbol: floatSymbol, Quantity: 1000})

	// The page's offer: its price shown, and the fields its form posts.
	page := b.get(t, "/", nil).Body.String()
	start := strings.Index(page, `id="offer-`+id+`"`)
	if start < 0 {
		t.Fatalf("no offer %s on the page:\n%s", id, page)
	}
	banner := page[start:]
	banner = banner[:strings.Index(banner, "</section>")]
	if !strings.Contains(banner, `<dd class="price">0.0130</dd>`) {
		t.Errorf("the banner does not show the price at 4 decimals:\n%s", banner)
	}
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)">`).FindAllStringSubmatch(banner, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if form.Get("id") != id || form.Get("offer") == "" || form.Get("price") == "" {
		t.Fatalf("the banner's form posts %v", form)
	}

	// Another price, or another leg: refused, nothing sent.
	before := b.sent()
	for _, other := range []url.Values{{"price": {"0.0131"}}, {"price": {"0.013"}, "offer": {"q-another"}}} {
		f := url.Values{"answer": {"approve"}}
		for k := range form {
			f.Set(k, form.Get(k))
		}
		for k := range other {
			f.Set(k, other.Get(k))
		}
		if rec := b.act(t, "/answer", f); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "nothing was sent") {
			t.Errorf("approve %v: %d %s, want 409: not the offer waiting", other, rec.Code, rec.Body.String())
		}
	}
	if n := b.sent() - before; n != 0 {
		t.Errorf("%d requests sent for refused answers", n)
	}

	// The offer shown: taken.
	form.Set("answer", "approve")
	if rec := b.act(t, "/answer", form); rec.Code != http.StatusOK {
		t.Fatalf("approve the offer shown: %d %s", rec.Code, rec.Body.String())
	}
	held.release()
	w, err := b.wait(ctx, id)
	if err != nil || w.State != states.Filled || !w.Price.Equal(floatPrice()) {
		t.Fatalf("the approved offer: %+v %v, want filled at %s", w, err, floatPrice())
	}
}

// Spec "Short locates" (size shorts from available): a row's credit-back
// button offers the unused shares, not the available ones. With 500 DASH
// located and a working stop short of 100 (which the located shares cover),
// the button credits back the 400 that no working sale needs, and says so; an
// explicit 500 is refused with the numbers. Both ways: the page on the owner
// and on a follower.
func TestRowCreditBackKeepsWorkingSellsLocates(t *testing.T) {
	t.Parallel()
	bothWays(t, rowCreditBack)
}

func rowCreditBack(t *testing.T, follower bool) {
	b := setup(t, setupOpt{follower: follower})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if rec := b.act(t, "/locate", url.Values{"symbols": {testSymbol}, "quantity": {"500"}, "cap": {"0.05"}}); rec.Code != http.StatusOK {
		t.Fatalf("locate: %d %s", rec.Code, rec.Body.String())
	}
	ws, err := b.store.List(ctx, store.Filter{Account: "LV100001", Symbol: testSymbol, Kind: states.Locate})
	if err != nil || len(ws) != 1 {
		t.Fatalf("locates of %s: %d %v, want 1", testSymbol, len(ws), err)
	}
	if w, err := b.wait(ctx, ws[0].ID); err != nil || w.State != states.Filled {
		t.Fatalf("the form's locate: %+v %v, want filled", w, err)
	}
	// A stop under the market waits: 100 of the located shares are
	// held for it.
	b.sim.Sim.SetPrice(testSymbol, decimal.NewFromInt(20))
	res, err := b.owner.Local().As(account.Caller{Name: "desk"}).Short(ctx, account.ShortRequest{Symbol: testSymbol, Quantity: 100,
		OrderType: "Stop", Stop: decimal.NewFromInt(19), Policy: workflow.Policy{AutoAccept: true, MaxPrice: decimal.RequireFromString("0.05")},
		Guard: workflow.Guard{RefPrice: decimal.NewFromInt(20)}})
	if err != nil || res.Order == nil || res.Order.Terminal() {
		t.Fatalf("stop short: %+v %v, want it working", res, err)
	}
	if rec := b.act(t, "/credit-back", url.Values{"symbol": {testSymbol}, "type": {"Locate"}, "quantity": {"500"}}); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "400 of them are unused") {
		t.Errorf("credit back all 500: %d %s, want 400 naming the 400 unused", rec.Code, rec.Body.String())
	}
	page := b.serve(t, httptest.NewRequest(http.MethodGet, "/", nil), nil).Body.String()
	if !strings.Contains(page, "Credit back unused") || !strings.Contains(page, `name="unused" value="1"`) || strings.Contains(page, "Credit back 500") {
		t.Errorf("the row's button: want 'Credit back unused', not the 500 available")
	}
	rec := b.act(t, "/credit-back", url.Values{"symbol": {testSymbol}, "type": {"Locate"}, "unused": {"1"}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "crediting back 400 DASH Locate") {
		t.Fatalf("the row's button: %d %s, want 400 credited back", rec.Code, rec.Body.String())
	}
	cbs, err := b.store.List(ctx, store.Filter{Account: "LV100001", Kind: states.CreditBack})
	if err != nil || len(cbs) != 1 || cbs[0].Quantity != 400 {
		t.Fatalf("credit-backs: %+v %v, want one of 400", cbs, err)
	}
	if w, err := b.wait(ctx, cbs[0].ID); err != nil || w.State != states.Credited {
		t.Errorf("the credit-back: %+v %v, want credited", w, err)
	}
}
