package engine_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/states"
)

// Spec "Locate status" (a quote settles in 1.5 to 3 s) and "Rate limits"
// (history 2/s): once the broker has answered the quote, the account's
// history is read every half second across the settle window, the first
// read half a second after it opens, so the offer is accepted within half
// a second of settling; nothing is read for it while the quote has not
// left.
//
// Virtual time stands still from the read that shows the offer until the
// accept has reached the broker: the engine's reaction takes no time of
// the broker's, and on a loaded machine the clock driver moved on to the
// next read between the two (accepted 1.7 s after the offer, under two
// suites side by side).
func TestHistoryFollowsTheQuoteFromItsAnswer(t *testing.T) {
	t.Parallel()
	var state atomic.Value // the workflow's last state published
	var bundle atomic.Pointer[testBundle]
	b := setup(t, setupOpt{
		onUpdate: func(u engine.Update) {
			if u.Workflow != nil {
				state.Store(u.Workflow.State)
			}
		},
		clockRuns: func() bool {
			switch state.Load() {
			case states.Offered:
				return false
			case states.Accepting:
				b := bundle.Load()
				return b != nil && len(b.requests("/locates/accept")) > 0
			}
			return true
		},
	})
	bundle.Store(b)
	w := b.locate(t, "HTBX", 100, auto("0.02"))
	expect(t, w, states.Filled)
	quotes, accepts := b.requests("/locates/quote"), b.requests("/locates/accept")
	if len(quotes) != 1 || len(accepts) != 1 {
		t.Fatalf("%d quotes and %d accepts, want one of each", len(quotes), len(accepts))
	}
	quoted, accepted := quotes[0].Time, accepts[0].Time
	var offered time.Time
	for _, r := range b.sim.Sim.Locates() {
		if r.QuoteReqID == w.QuoteReqID {
			offered = r.Offered
		}
	}
	if offered.IsZero() {
		t.Fatalf("the simulator has no offer of %s", w.QuoteReqID)
	}
	var reads []time.Duration
	for _, r := range b.requests("/locates/history") {
		if r.Time.After(quoted) && !r.Time.After(accepted) {
			reads = append(reads, r.Time.Sub(quoted))
		}
	}
	t.Logf("reads after the quote: %v; offered %v after it", reads, offered.Sub(quoted))
	if len(reads) == 0 || reads[0] < 2*time.Second {
		t.Fatalf("history reads after the quote, from it: %v; want the first 2 s after it", reads)
	}
	for i := 1; i < len(reads); i++ {
		if gap := reads[i] - reads[i-1]; gap > 500*time.Millisecond {
			t.Errorf("history reads %v and %v after the quote: %v apart while it waited for its offer, want 500ms", reads[i-1], reads[i], gap)
		}
	}
	if wait := accepted.Sub(offered); wait > 500*time.Millisecond {
		t.Errorf("offer at %v after the quote accepted %v after it, want within half a second", offered.Sub(quoted), wait)
	}
}

// An account with nothing open reads the broker at most once a virtual
// minute (history every 2 minutes; inventory only when history changed:
// only another program could change them), and a locate started on it
// wakes its reads at once: its quote's settle window is read from half a
// second after it opens ("Locate status"), not at the next quiet read.
func TestIdleAccountReadsOnceAMinuteAndWakesForALocate(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpt{})
	started := b.sim.Clock.Now()
	idle := b.sim.Clock.NewTimer(10 * time.Minute) // the engine idles meanwhile, on virtual time
	select {
	case <-idle.C():
	case <-time.After(20 * time.Second): // a hang guard, never a timing
		t.Fatal("10 virtual minutes never passed")
	}
	perMinute := map[time.Duration]int{}
	for _, r := range b.sim.Sim.Requests() {
		if at := r.Time.Sub(started); at >= time.Minute { // the start-up reads aside
			perMinute[at/time.Minute]++
		}
	}
	for m, n := range perMinute {
		if n > 1 {
			t.Errorf("idle minute %d: %d broker requests, want at most 1", m, n)
		}
	}
	if len(perMinute) == 0 {
		t.Error("no broker read in 9 idle minutes, want one every 2 minutes")
	}
	w := b.locate(t, "HTBX", 100, auto("0.02"))
	expect(t, w, states.Filled)
	quotes := b.requests("/locates/quote")
	if len(quotes) != 1 {
		t.Fatalf("%d quotes, want 1", len(quotes))
	}
	for _, r := range b.requests("/locates/history") {
		if r.Time.After(quotes[0].Time) {
			if after := r.Time.Sub(quotes[0].Time); after > 2*time.Second+500*time.Millisecond {
				t.Errorf("the first history read %v after the quote, want by 2 s (its window opens 1.5 s after)", after)
			}
			break
		}
	}
}
