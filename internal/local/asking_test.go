package local

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// A question about an offer that was answered before the question was
// out (the dashboard declined it as the offer showed; its update was
// published before the question could be withdrawn) is not put to the
// person: put, it waited until the offer's deadline, and a driver of
// virtual time, which holds the clock still while a person is asked,
// never reached that deadline. A question about an offer still waiting is
// put.
func TestNoQuestionAboutAnAnsweredOffer(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC))
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "locator.db"), clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for id, state := range map[string]states.State{"wf-declined": states.Declining, "wf-offered": states.Offered} {
		w := &workflow.Workflow{ID: id, Kind: states.Locate, Account: "LV100001", Symbol: "KITE", Requested: 100, QuoteReqID: "q-" + id,
			State: state, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.02")}}
		if err := st.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	subscribed := 0
	subscribe := func(ctx context.Context) <-chan engine.Update {
		subscribed++
		ch := make(chan engine.Update)
		context.AfterFunc(ctx, func() { close(ch) })
		return ch
	}
	l := &Account{st: st, clk: clk, subscribe: subscribe}
	asked := 0
	person := func(context.Context, account.Question) bool { asked++; return true }
	if l.put(t.Context(), person, account.Question{Offer: &workflow.Offer{WorkflowID: "wf-declined"}}) || asked != 0 {
		t.Errorf("the declined offer's question: asked %d times; want none, and no", asked)
	}
	if !l.put(t.Context(), person, account.Question{Offer: &workflow.Offer{WorkflowID: "wf-offered"}}) || asked != 1 {
		t.Errorf("the waiting offer's question: asked %d times; want once, and its yes", asked)
	}
	if l.waiting != 0 || subscribed != 2 {
		t.Errorf("after both: %d waiting, %d subscriptions; want none waiting, one subscription a question", l.waiting, subscribed)
	}
}
