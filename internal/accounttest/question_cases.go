// Question cases: how a locate's offer is answered — at the prompt, by a
// person elsewhere, by link, by policy — and how it is withdrawn.

package accounttest

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// An offer put to the asker and refused at its prompt: declined at the
// prompt, a person's choice (exit 0), and cancelled at the broker.
func promptNo(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test prompt", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	w, _ := follow(t, a, id)
	if q := k.question(t); q.Offer == nil || q.Offer.WorkflowID != id || q.Deadline.IsZero() {
		t.Errorf("question %+v, want the offer of %s with a deadline", q, id)
	}
	wantOutcome(t, w, states.Declined, "declined at the prompt", console.ExitOK)
	if a, c := count(e, "POST", "/locates/accept"), count(e, "DELETE", "/locates/cancel/"); a != 0 || c == 0 {
		t.Errorf("%d accepts and %d cancels sent, want none and at least one", a, c)
	}
}

// A person's decline from elsewhere (locator decline) while the asker
// waits: the asker's question is withdrawn, and the outcome is the
// person's, exit 0, in its own words.
func declineByAPerson(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	done := make(chan *workflow.Workflow, 1)
	go func() { w, _ := a.Follow(context.WithoutCancel(ctx(t)), account.FollowRequest{ID: id}, nil); done <- w }()
	k.question(t)
	other := e.Open(caller("test other shell", nil))
	if err := other.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: false, Via: "'locator decline'"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.withdrawn:
	case <-ctx(t).Done():
		t.Fatal("the asker's question was not withdrawn")
	}
	w := <-done
	wantOutcome(t, w, states.Declined, "declined by a person with 'locator decline'", console.ExitOK)
	if n := count(e, "POST", "/locates/accept"); n != 0 {
		t.Errorf("%d accepts sent, want 0", n)
	}
}

// A person's approval from elsewhere fills the offer the asker was asked
// about, exactly once, and withdraws the asker's question.
func approveElsewhere(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	other := e.Open(caller("test dashboard", nil))
	if err := other.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Via: "the dashboard"}); err != nil {
		t.Fatal(err)
	}
	<-k.withdrawn
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled", console.ExitOK)
	if n := count(e, "POST", "/locates/accept"); n != 1 {
		t.Errorf("%d accepts sent, want 1", n)
	}
}

// docs/design.md: an approval is bound to the offer seen: one for another
// leg is refused and nothing is sent.
func changedOffer(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	for name, req := range map[string]account.AnswerRequest{
		"another leg":   {ID: id, Accept: true, Offer: "another-leg"},
		"another price": {ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Price: q.Offer.Price.Add(decimal.RequireFromString("0.0001"))},
	} {
		if err := a.Answer(ctx(t), req); account.KindOf(err) != account.KindChanged || console.ExitOf(err) != console.ExitUsage {
			t.Errorf("answer for %s: %v, want kind changed (exit 2)", name, err)
		}
	}
	if n := count(e, "POST", "/locates/accept"); n != 0 {
		t.Errorf("%d accepts sent, want 0", n)
	}
	ok(t, a.Cancel(ctx(t), account.CancelRequest{ID: id}))
	follow(t, a, id)
}

// Spec "Short locates" rule 2: while a Reg SHO pair's
// offer waits on the asker (locate RSHO 1000 --allow-single-use), another
// shell's Status shows it open with the side and price the asker was
// asked (workflow.Offered: SingleUse, id.SU, 0.0400), and an approval
// bound to what that shell saw fills exactly that side at that price.
func waitingOfferSeenElsewhere(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	it := account.LocateItem{Symbol: "RSHO", Quantity: 1000}
	it.Policy.AllowSingleUse = true
	id := locateOne(t, a, it, true)
	q := k.question(t)
	if q.Offer == nil || !strings.HasSuffix(q.Offer.QuoteReqID, ".SU") || !q.Offer.Price.Equal(decimal.RequireFromString("0.04")) {
		t.Fatalf("question %+v, want the SingleUse side at 0.0400", q.Offer)
	}
	other := e.Open(caller("test other shell", nil))
	st, err := other.Status(ctx(t), account.StatusRequest{})
	ok(t, err)
	var seen *workflow.Offer
	for i := range st.Open {
		if w := &st.Open[i]; w.ID == id {
			if w.State != states.Offered {
				t.Fatalf("%s is %s in the other shell's status, want offered", id, w.State)
			}
			seen = workflow.Offered(w)
		}
	}
	if seen == nil || seen.QuoteReqID != q.Offer.QuoteReqID || !seen.Price.Equal(q.Offer.Price) || seen.LocateType != q.Offer.LocateType {
		t.Fatalf("the other shell sees the offer %+v, want the one asked %+v", seen, q.Offer)
	}
	ok(t, other.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: true, Offer: seen.QuoteReqID, Price: seen.Price, Via: "'locator approve'"}))
	<-k.withdrawn
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled — 1000 shares at 0.0400 (SingleUse) = 40.00", console.ExitOK)
	if n := count(e, "POST", "/locates/accept"); n != 1 || w.AcceptedID != q.Offer.QuoteReqID {
		t.Errorf("%d accepts sent, accepted %s; want one, of %s", n, w.AcceptedID, q.Offer.QuoteReqID)
	}
}

// An answer by signed link (account.AnswerRequest.ByLink) approves its
// offer once: one accept is sent, and a second use of the offer's links,
// to approve or to decline, is refused as used (exit 2) and sends nothing.
// One that does not name its offer is refused before anything is recorded.
func answerByLink(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	link := e.Open(caller("test link", nil))
	if err := link.Answer(ctx(t), account.AnswerRequest{ID: id, Accept: true, ByLink: true}); account.KindOf(err) != account.KindInput {
		t.Errorf("answer by link without its offer: %v, want kind input", err)
	}
	req := account.AnswerRequest{ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Price: q.Offer.Price, Via: "a signed link", ByLink: true}
	ok(t, link.Answer(ctx(t), req))
	<-k.withdrawn
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Filled, "filled", console.ExitOK)
	before := writes(e)
	for _, accept := range []bool{true, false} {
		req.Accept = accept
		if err := link.Answer(ctx(t), req); account.KindOf(err) != account.KindUsed || console.ExitOf(err) != console.ExitUsage {
			t.Errorf("second use of the offer's links (accept %v): %v, want kind used (exit 2)", accept, err)
		}
	}
	if n := writes(e) - before; n != 0 {
		t.Errorf("%d writes sent after the link's use, want 0", n)
	}
	if n := count(e, "POST", "/locates/accept"); n != 1 {
		t.Errorf("%d accepts sent, want 1", n)
	}
}

// A link used after its offer was answered another way (at the prompt) is
// refused, as no offer waits, and uses the offer's links all the same: the
// next use is refused as used. Nothing is sent by either.
func linkAfterElsewhere(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	q := k.question(t)
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Declined, "declined", console.ExitOK)
	before := writes(e)
	link := e.Open(caller("test link", nil))
	req := account.AnswerRequest{ID: id, Accept: true, Offer: q.Offer.QuoteReqID, Price: q.Offer.Price, Via: "a signed link", ByLink: true}
	if err := link.Answer(ctx(t), req); account.KindOf(err) != account.KindNotOpen {
		t.Errorf("link after the prompt's answer: %v, want kind not open", err)
	}
	if err := link.Answer(ctx(t), req); account.KindOf(err) != account.KindUsed {
		t.Errorf("link used again: %v, want kind used", err)
	}
	if n := writes(e) - before; n != 0 {
		t.Errorf("%d writes sent by the links, want 0", n)
	}
}

// An offer above the cap is declined by the cost policy: exit 4.
func policyDecline(t *testing.T, e *Env) {
	a := e.Open(caller("test policy", nil))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBY", Quantity: 200, Policy: capped("0.01")}, false)
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Declined, "declined by the cost policy", console.ExitDeclined)
}

// A person's cancel (locator cancel) of an offer waiting on the asker:
// cancelled in its own words, exit 0; nothing is left open.
func cancelByAPerson(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	k.question(t)
	other := e.Open(caller("test cancel", nil))
	ok(t, other.Cancel(ctx(t), account.CancelRequest{ID: id, Via: "'locator cancel'"}))
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Canceled, "canceled by a person with 'locator cancel'", console.ExitOK)
}

// The asker interrupted (Ctrl-C) withdraws its own request: exit 130, and
// the offer is cancelled at the broker.
func interrupt(t *testing.T, e *Env) {
	k := newAsker(nil)
	a := e.Open(caller("test asker", k))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 200}, true)
	k.question(t)
	ok(t, a.Cancel(ctx(t), account.CancelRequest{ID: id, Interrupt: true}))
	w, _ := follow(t, a, id)
	wantOutcome(t, w, states.Canceled, "canceled: interrupted", console.ExitInterrupted)
}
