package engine_test

import (
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// queueThenStop asks the engine for qty of symbol while an earlier quote of
// the symbol holds it behind the same-symbol spacing (spec "Locate
// limits"), then stops the engine, as a kill would, with the clock held so
// the request is still waiting in requested; it returns the workflow's id.
func queueThenStop(t *testing.T, b *testBundle, held *atomic.Bool, symbol string, qty int64) string {
	t.Helper()
	held.Store(true)
	h, err := b.engine.Locate(t.Context(), engine.Request{Symbol: symbol, Quantity: qty, Policy: auto("0.02")})
	if err != nil {
		t.Fatal(err)
	}
	b.engine.Close()
	w, err := b.store.Get(t.Context(), h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w.State != states.Requested {
		t.Fatalf("stopped with %s in %s, want it queued in requested", w.ID, w.State)
	}
	return h.ID
}

// quotedQuantities returns the quantity of every quote of symbol the
// simulator received, in order.
func quotedQuantities(t *testing.T, b *testBundle, symbol string) []int64 {
	t.Helper()
	var out []int64
	for _, r := range b.requests("POST /v1/api/accounts/locates/quote") {
		var q struct {
			Symbol   string
			Quantity int64
		}
		if err := json.Unmarshal([]byte(r.Body), &q); err != nil {
			t.Fatal(err)
		}
		if q.Symbol == symbol {
			out = append(out, q.Quantity)
		}
	}
	return out
}

// Docs/design.md rule 1 and spec "Short locates" rule 1
// (quote only the shortfall): a locate recovered in requested is quoted
// for its request less the located inventory the reconciling read at Start
// found, whether that inventory was filled before the stop (the measured
// bug: 500 filled, 1,500 queued behind the same-symbol spacing, resumed
// 35 s later and quoted 1,500) or by another workflow while no engine ran.
func TestRecoveredRequestQuotesOnlyItsShortfall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// before runs on the first engine, leaving HTBX inside its
		// same-symbol spacing; down runs while no engine runs.
		before func(t *testing.T, b *testBundle)
		down   func(t *testing.T, b *testBundle)
		quotes []int64
	}{
		{
			name:   "filled before the stop",
			before: func(t *testing.T, b *testBundle) { expect(t, b.locate(t, "HTBX", 500, auto("0.02")), states.Filled) },
			quotes: []int64{500, 1000},
		},
		{
			name: "another workflow filled while down",
			before: func(t *testing.T, b *testBundle) {
				expect(t, b.locate(t, "HTBX", 500, auto("0.01")), states.Declined) // 0.015 is above the cap
			},
			down: func(t *testing.T, b *testBundle) {
				// Another process of the account quotes and accepts 500.
				c, id := b.sim.Client(t, b.sim.Live), uuid.NewString()
				b.sim.Advance(31 * time.Second)
				if _, _, err := c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 500, QuoteReqID: id}); err != nil {
					t.Fatal(err)
				}
				b.sim.Advance(5 * time.Second)
				if _, _, err := c.Locates.Accept(t.Context(), "LV100001", id); err != nil {
					t.Fatal(err)
				}
			},
			quotes: []int64{500, 500, 1000},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var held atomic.Bool
			b := setup(t, setupOpt{clockRuns: func() bool { return !held.Load() }})
			tc.before(t, b)
			id := queueThenStop(t, b, &held, "HTBX", 1500)
			if tc.down != nil {
				tc.down(t, b)
			}
			b.sim.Advance(35 * time.Second)
			held.Store(false)
			b.engine = b.start(t, nil)
			w := b.wait(t, id)
			expect(t, w, states.Filled)
			if w.Quantity != 1000 {
				t.Errorf("recovered request quoted %d shares, want the 1,000 shortfall", w.Quantity)
			}
			if got := quotedQuantities(t, b, "HTBX"); !slices.Equal(got, tc.quotes) {
				t.Errorf("HTBX quotes of %v shares, want %v", got, tc.quotes)
			}
			inv, _, err := b.sim.Client(t, b.sim.Live).Locates.Inventory(t.Context(), "LV100001")
			if err != nil {
				t.Fatal(err)
			}
			if got := brokerclient.Available(inv, "HTBX"); got != 1500 {
				t.Errorf("HTBX available %d after the recovery, want the 1,500 asked for", got)
			}
		})
	}
}

// docs/design.md rule 1: nothing the broker's history
// shows settled is sent again after a restart. A process died after its
// last write reached the broker: an accept (spec "Short locates" rule 3:
// the broker fills an accepted offer), or the cancel of an offer the policy
// refused (status 52). The next engine's reconciling read finds the
// outcome, and the write, which resuming would otherwise send again while
// the window is open, is not re-sent.
func TestRecoveredWriteSettledByHistoryIsNotResent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy workflow.Policy
		dying  states.State // the dead process's last state
		route  string       // the write it had sent
		end    states.State
	}{
		{"accept", auto("0.02"), states.Accepting, "POST /v1/api/accounts/locates/accept", states.Filled},
		{"decline's cancel", auto("0.01"), states.Declining, "DELETE /v1/api/accounts/locates/cancel", states.Declined},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpt{noStart: true})
			ctx, c := t.Context(), b.sim.Client(t, b.sim.Live)
			w := &workflow.Workflow{ID: "wf-died", Kind: states.Locate, Account: "LV100001", Symbol: "HTBX", Requested: 300,
				QuoteReqID: uuid.NewString(), State: states.Requested, Policy: tc.policy}
			w.MAC = rowKey(t, c).Workflow(w) // the dead process held the key pair
			if err := b.store.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			// The dead process's steps, taken through the pure step and
			// committed as its loop would have, with the broker writes each
			// one sent.
			take := func(in workflow.Input) {
				t.Helper()
				s := workflow.StepWorkflow(w, in, workflow.Env{Now: b.sim.Clock.Now()})
				if s.Err != nil || s.Next == nil {
					t.Fatalf("step %T from %s: %v", in, w.State, s.Err)
				}
				saved, err := b.store.Commit(ctx, w, s.Next, s.Transition)
				if err != nil {
					t.Fatal(err)
				}
				w = saved
			}
			take(workflow.QuoteTurn{})
			if _, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: w.Quantity, QuoteReqID: w.QuoteReqID}); err != nil {
				t.Fatal(err)
			}
			b.sim.Advance(5 * time.Second)
			rows, _, err := c.Locates.History(ctx, "LV100001")
			if err != nil {
				t.Fatal(err)
			}
			in := workflow.Rows{Legs: map[string]workflow.Leg{}, Latest: w.QuoteReqID}
			for _, r := range rows {
				if r.QuoteReqID == w.QuoteReqID {
					in.Legs[r.QuoteReqID] = workflow.Leg{Status: r.LocateStatus, Price: r.LocatePrice, Type: r.LocateType, Shares: r.LocateShares}
				}
			}
			take(in)
			take(workflow.Decide{})
			if w.State != tc.dying {
				t.Fatalf("the dead process's record is %s, want %s", w.State, tc.dying)
			}
			if tc.dying == states.Accepting {
				_, _, err = c.Locates.Accept(ctx, "LV100001", w.AcceptedID)
			} else {
				_, _, err = c.Locates.Cancel(ctx, "LV100001", w.QuoteReqID)
			}
			if err != nil {
				t.Fatal(err)
			}

			b.engine = b.start(t, nil)
			expect(t, b.wait(t, w.ID), tc.end)
			if n := len(b.requests(tc.route)); n != 1 {
				t.Errorf("%d of %s reached the broker, want the dead process's one: the history showed its outcome", n, tc.route)
			}
		})
	}
}
