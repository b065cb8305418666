package brokerclient_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// setFaults installs a fault script on the simulator.
func setFaults(t *testing.T, b *simtest.Bundle, steps ...brokersim.FaultStep) {
	t.Helper()
	if err := b.Sim.SetFaults(brokersim.Faults{Script: steps}); err != nil {
		t.Fatal(err)
	}
}

// gaps returns the simulator-clock time between consecutive requests.
func gaps(reqs []brokersim.RequestRecord) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(reqs); i++ {
		out = append(out, reqs[i].Time.Sub(reqs[i-1].Time))
	}
	return out
}

func statuses(reqs []brokersim.RequestRecord) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, r.Status)
	}
	return out
}

const historyLV100001 = "GET /v1/api/accounts/LV100001/locates/history"

// Spec: Limits, "Rate limits", recovery: "wait at least 1 to 2 seconds after
// a 429, retry once; if it persists use exponential backoff with jitter (2,
// 4, 8 seconds, capped at 60)". A burst of three 429s on a read ends in
// success, and the waits, read off the simulator's clock in its request
// log, follow that schedule.
func TestRetry429Schedule(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	setFaults(t, b, brokersim.FaultStep{Match: historyLV100001, Kind: "429", Count: 3})

	_, resp, err := c.Locates.History(t.Context(), "LV100001")
	if err != nil {
		t.Fatalf("history after three 429s: %v", err)
	}
	if resp.Attempts != 4 {
		t.Errorf("Attempts = %d, want 4", resp.Attempts)
	}
	reqs := loggedRequests(b, "GET", "/locates/history")
	if got, want := statuses(reqs), []int{429, 429, 429, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	bounds := []struct{ lo, hi time.Duration }{
		{1 * time.Second, 2 * time.Second}, // "wait at least 1 to 2 seconds, retry once"
		{2 * time.Second, 3 * time.Second}, // then 2 s with jitter
		{4 * time.Second, 6 * time.Second}, // then 4 s with jitter
	}
	for i, g := range gaps(reqs) {
		if g < bounds[i].lo || g > bounds[i].hi {
			t.Errorf("wait %d was %v, want %v..%v", i+1, g, bounds[i].lo, bounds[i].hi)
		}
	}
}

// Spec: Limits, "Rate limits": "A 429 is transient" and the service answers
// it without processing, so even a write that must never repeat (quote) is
// retried after one; it reaches the simulator processed exactly once.
func TestRetry429OnQuoteIsResent(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	setFaults(t, b, brokersim.FaultStep{Match: "POST /v1/api/accounts/locates/quote", Kind: "429", Count: 1})

	ack, _, err := c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100})
	if err != nil {
		t.Fatal(err)
	}
	reqs := loggedRequests(b, "POST", "/locates/quote")
	if got, want := statuses(reqs), []int{429, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if g := gaps(reqs)[0]; g < time.Second || g > 2*time.Second {
		t.Errorf("wait after the 429 was %v, want 1..2 s", g)
	}
	if rows := locHistory(t, c, "LV100001"); len(rows) != 1 || rows[0].QuoteReqID != ack.QuoteReqID {
		t.Errorf("history = %+v, want the one quote", rows)
	}
}

// Spec: "HTTP status map" and STYLE rule 4: reads are retried on 5xx (with
// a doubling back-off) and succeed once the server recovers; the waits grow.
func TestRetry5xxOnReads(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	setFaults(t, b,
		brokersim.FaultStep{Match: historyLV100001, Kind: "500", Count: 1},
		brokersim.FaultStep{Match: historyLV100001, Kind: "503", Count: 2},
	)
	_, resp, err := c.Locates.History(t.Context(), "LV100001")
	if err != nil {
		t.Fatalf("history after 500, 503, 503: %v", err)
	}
	if resp.Attempts != 4 {
		t.Errorf("Attempts = %d, want 4", resp.Attempts)
	}
	reqs := loggedRequests(b, "GET", "/locates/history")
	if got, want := statuses(reqs), []int{500, 503, 503, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	// The client's documented back-off: 250 ms doubling, plus up to half
	// again; a retry also waits for the route's pacer (history: its whole
	// 2/s, burst 1), so no wait is shorter than its interval.
	base := 250 * time.Millisecond
	paced := 2.0 // per second
	pace := time.Duration(float64(time.Second) / paced)
	for i, g := range gaps(reqs) {
		lo, hi := max(base, pace), max(base*3/2, pace+10*time.Millisecond)
		if g < lo || g > hi {
			t.Errorf("wait %d was %v, want %v..%v", i+1, g, lo, hi)
		}
		base *= 2
	}
}

// Spec: "Short locates" rule 3: "re-sending an accept is safe", so a 5xx on
// accept is retried.
func TestRetryAcceptOn500(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	setFaults(t, b, brokersim.FaultStep{Match: "POST /v1/api/accounts/locates/accept", Kind: "500", Count: 1})
	_, resp, err := c.Locates.Accept(t.Context(), "LV100001", "never-quoted")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 {
		t.Errorf("Attempts = %d, want 2", resp.Attempts)
	}
	if got := statuses(loggedRequests(b, "POST", "/locates/accept")); !slices.Equal(got, []int{500, 200}) {
		t.Errorf("statuses %v, want [500 200]", got)
	}
}

// Spec: "Short locates" ("quoteReqID ... unique, client-generated"); STYLE
// rule 4: a quote answered 500 is an unknown outcome, never re-sent; the
// history, polled as rule 7 says (wait ~2 s, then up to four reads 2 s
// apart), shows it never arrived, and only then may a new quote go out.
func TestRetryQuote500IsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	setFaults(t, b, brokersim.FaultStep{Match: "POST /v1/api/accounts/locates/quote", Kind: "500", Count: 1})

	_, _, err := c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100, QuoteReqID: "lost-500"})
	var ou *brokerclient.OutcomeUnknownError
	if !errors.As(err, &ou) || !errors.Is(err, brokerclient.ErrOutcomeUnknown) || ou.ClientID != "lost-500" {
		t.Fatalf("err = %v, want an OutcomeUnknownError carrying lost-500", err)
	}
	if !errors.Is(err, brokerclient.ErrServer) {
		t.Errorf("err = %v, want it to wrap the 5xx (ErrServer)", err)
	}
	quotes := loggedRequests(b, "POST", "/locates/quote")
	if len(quotes) != 1 || quotes[0].Status != http.StatusInternalServerError {
		t.Fatalf("quote requests %v, want exactly one, answered 500", statuses(quotes))
	}

	rows, _, err := c.Locates.ResolveQuote(t.Context(), "LV100001", ou.ClientID)
	var nf *brokerclient.QuoteNotFoundError
	if !errors.Is(err, brokerclient.ErrQuoteNotFound) || !errors.As(err, &nf) || nf.QuoteReqID != "lost-500" || nf.Polls != 4 {
		t.Fatalf("ResolveQuote = %v, %v; want a QuoteNotFoundError after 4 polls", rows, err)
	}
	if n := len(loggedRequests(b, "POST", "/locates/quote")); n != 1 {
		t.Errorf("the quote was sent %d times, want once", n)
	}
	reads := loggedRequests(b, "GET", "/locates/history")
	if len(reads) != 4 {
		t.Fatalf("%d history reads, want 4", len(reads))
	}
	if first := reads[0].Time.Sub(quotes[0].Time); first < 2*time.Second || first > 2500*time.Millisecond {
		t.Errorf("first history read %v after the quote, want about 2 s", first)
	}
	for i, g := range gaps(reads) {
		if g < 2*time.Second || g > 2500*time.Millisecond {
			t.Errorf("history reads %d and %d were %v apart, want about 2 s", i, i+1, g)
		}
	}
}

// Spec: "Short locates" and STYLE rule 4: a quote processed by the service
// whose answer is lost (the connection drops after processing) is an
// OutcomeUnknownError carrying the quoteReqID; it is sent exactly once, and
// ResolveQuote finds its history row.
func TestRetryQuoteLostAnswerResolves(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	setFaults(t, b, brokersim.FaultStep{Match: "POST /v1/api/accounts/locates/quote", Kind: "reset-after", Count: 1})

	_, _, err := c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 300})
	var ou *brokerclient.OutcomeUnknownError
	if !errors.As(err, &ou) || ou.ClientID == "" {
		t.Fatalf("err = %v, want an OutcomeUnknownError carrying the generated quoteReqID", err)
	}
	quotes := loggedRequests(b, "POST", "/locates/quote")
	if len(quotes) != 1 {
		t.Fatalf("%d quote POSTs, want exactly one", len(quotes))
	}
	if got := loggedBody(t, quotes[0])["quoteReqID"]; got != ou.ClientID {
		t.Errorf("error carries %q, the request carried %v", ou.ClientID, got)
	}

	rows, _, err := c.Locates.ResolveQuote(t.Context(), "LV100001", ou.ClientID)
	if err != nil {
		t.Fatalf("ResolveQuote: %v", err)
	}
	if len(rows) != 1 || rows[0].QuoteReqID != ou.ClientID || rows[0].LocateShares != 300 {
		t.Errorf("ResolveQuote rows = %+v, want the one quote row", rows)
	}
	if n := len(loggedRequests(b, "POST", "/locates/quote")); n != 1 {
		t.Errorf("the quote was sent %d times, want once", n)
	}
}

// Spec: "HTTP status map"; STYLE rule 4: a read whose connection drops
// before processing is retried.
func TestRetryReadAfterReset(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	setFaults(t, b, brokersim.FaultStep{Match: "GET /v1/api/accounts/LV100001/locates/inventory", Kind: "reset", Count: 1})
	if _, _, err := c.Locates.Inventory(t.Context(), "LV100001"); err != nil {
		t.Fatalf("inventory after a reset: %v", err)
	}
	reqs := loggedRequests(b, "GET", "/locates/inventory")
	if len(reqs) < 2 || reqs[0].Status != 0 || reqs[len(reqs)-1].Status != http.StatusOK {
		t.Errorf("statuses %v, want a reset (0) then 200", statuses(reqs))
	}
}

// docs/design.md rule 6 ("every request that reaches the broker passes the
// pacer"): when a kept-alive connection drops, net/http would replay a GET
// at once by itself; the client's own retry, paced and backed off, is the
// only one. Two scripted resets on a warm connection show as requests at
// least the back-off apart, never back to back.
func TestNoSilentReplayOfReads(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	if _, _, err := c.Locates.Inventory(t.Context(), "LV100001"); err != nil { // warms a kept-alive connection
		t.Fatal(err)
	}
	setFaults(t, b, brokersim.FaultStep{Match: "GET /v1/api/accounts/LV100001/locates/inventory", Kind: "reset", Count: 2})
	if _, _, err := c.Locates.Inventory(t.Context(), "LV100001"); err != nil {
		t.Fatalf("inventory after two resets: %v", err)
	}
	reqs := loggedRequests(b, "GET", "/locates/inventory")[1:]
	if len(reqs) != 3 {
		t.Fatalf("statuses %v, want two resets then 200", statuses(reqs))
	}
	for i, g := range gaps(reqs) {
		if g < 250*time.Millisecond {
			t.Errorf("attempt %d followed the one before it after %s: a replay outside the client's back-off", i+2, g)
		}
	}
}

// Spec: Limits, "Rate limits" recovery; STYLE ("retries that sleep without
// honouring cancellation" are not worth copying): a call backing off after
// a 429 returns as soon as its ctx is cancelled, without another attempt.
func TestRetryBackoffHonoursCancel(t *testing.T) {
	t.Parallel()
	b := simtest.New(t) // no RunClock: the back-off would wait for ever
	c := b.Client(t, b.Live)
	setFaults(t, b, brokersim.FaultStep{Match: historyLV100001, Kind: "429", Count: 5})

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Locates.History(ctx, "LV100001")
		done <- err
	}()
	<-b.Clock.BlockUntil(1) // asleep in the 1-2 s wait after the first 429
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("returned %v after cancel", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the back-off ignored ctx cancellation")
	}
	if n := len(loggedRequests(b, "GET", "/locates/history")); n != 1 {
		t.Errorf("%d history requests, want 1 (no attempt after cancel)", n)
	}
}
