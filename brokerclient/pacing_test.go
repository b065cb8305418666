package brokerclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/simtest"
)

// Spec: Limits, "Rate limits" (per key pair, per route token buckets;
// locates history 2/s, burst 2): 200 goroutines sharing one client are paced
// by its bucket, so the simulator, whose limits are on, answers no 429.
//
// Virtual time here moves only while every goroutine is asleep on the clock
// (driveWhileAsleep). simtest's RunClock jumps to the next timer every 200µs
// of wall time even while requests are in flight, so with 200 sleepers it
// runs seconds of simulator time ahead of requests already on their way and
// they reach the simulator bunched; the result would be 429s that say
// nothing about the client's pacing.
func TestPacingManyGoroutinesNo429(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	const n = 200
	errs := make(chan error, n)
	finished := make(chan struct{}, n)
	for range n {
		go func() {
			defer func() { finished <- struct{}{} }()
			if _, _, err := c.Locates.History(t.Context(), "LV100001"); err != nil {
				errs <- err
			}
		}()
	}
	driveWhileAsleep(b, n, finished)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	reqs := loggedRequests(b, "GET", "/locates/history")
	if len(reqs) != n {
		t.Fatalf("%d history requests reached the simulator, want %d", len(reqs), n)
	}
	for _, r := range reqs {
		if r.Status == http.StatusTooManyRequests {
			t.Fatalf("a request at %s was answered 429; the client should have paced it", r.Time.Format(time.RFC3339Nano))
		}
	}
	// 1 at once (the burst less one), then at most 2 per second: the 200 calls
	// cannot span less than 99 seconds of simulator time.
	if span := reqs[n-1].Time.Sub(reqs[0].Time); span < 99*time.Second {
		t.Errorf("200 history calls spanned %v of simulator time, faster than 2/s", span)
	}
}

// driveWhileAsleep moves the fake clock to its next timer only when all of
// the workers still running are asleep on it, until all n have reported on
// finished: virtual time then never passes while a request is in flight.
func driveWhileAsleep(b *simtest.Bundle, n int, finished <-chan struct{}) {
	for running := n; running > 0; {
		select {
		case <-b.Clock.BlockUntil(running):
			b.Clock.AdvanceToNext()
		case <-finished:
			running--
		}
	}
}

// Spec: Limits, "Rate limits" (quote 1/s, burst 1). Back-to-back quotes on
// different symbols leave the client at least a second apart.
func TestPacingQuotesOnePerSecond(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	b.RunClock(t)
	c := b.Client(t, b.Live)
	for _, sym := range []string{"HTBX", "HTBY", "RSHO", "RSSU"} {
		if _, _, err := c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: sym, Quantity: 100}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := loggedRequests(b, "POST", "/locates/quote")
	if len(reqs) != 4 {
		t.Fatalf("%d quotes logged, want 4", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].Time.Sub(reqs[i-1].Time); gap < time.Second {
			t.Errorf("quotes %d and %d only %v apart", i-1, i, gap)
		}
		if reqs[i].Status != http.StatusOK {
			t.Errorf("quote %d answered %d", i, reqs[i].Status)
		}
	}
}

// Spec: Limits, "Rate limits". A call waiting for its route's token returns
// as soon as its ctx ends, sends nothing, and gives its place back.
func TestPacingWaitHonoursCancel(t *testing.T) {
	t.Parallel()
	b := simtest.New(t) // no RunClock: the fake clock stands still
	c := b.Client(t, b.Live)
	if _, _, err := c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBY", Quantity: 100})
		done <- err
	}()
	<-b.Clock.BlockUntil(1) // the second quote waits for the 1/s bucket
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call waiting for its token ignored ctx cancellation")
	}
	if n := len(loggedRequests(b, "POST", "/locates/quote")); n != 1 {
		t.Errorf("%d quotes sent, want 1", n)
	}
}

// Spec: Limits, "Rate limits" are per key pair: a client that takes over
// from another process which drew the buckets down until a moment ago
// (PaceAfter) starts them empty as of then, not full; LastRequest is what
// it hands on to the next one.
func TestPaceAfterStartsEmpty(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	if !c.LastRequest().IsZero() {
		t.Fatal("LastRequest before any request")
	}
	// History at its whole 2/s (marginOf): a token every 500 ms, 100 ms
	// of which had passed.
	if waited := waitAfterPaceAfter(t, b, c); waited != 400*time.Millisecond {
		t.Errorf("the first request waited %v, want 400 ms", waited)
	}
	if last := c.LastRequest(); !last.Equal(b.Clock.Now()) {
		t.Errorf("LastRequest %v, want %v", last, b.Clock.Now())
	}
	if k := c.PacingKey(); len(k) != 24 || k != b.Client(t, b.Live).PacingKey() || k == b.Client(t, b.Paper).PacingKey() {
		t.Errorf("PacingKey %q: want one per key pair", k)
	}
}

// waitAfterPaceAfter has c start its buckets as if another process (the
// key pair's previous owner) drew on them until 100 ms ago (PaceAfter),
// reads history, which waits on b's clock for its token, and returns how
// long it waited.
func waitAfterPaceAfter(t *testing.T, b *simtest.Bundle, c *brokerclient.Client) time.Duration {
	t.Helper()
	start := b.Clock.Now()
	c.PaceAfter(start.Add(-100 * time.Millisecond))
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Locates.History(t.Context(), "LV100001")
		done <- err
	}()
	<-b.Clock.BlockUntil(1) // paced: the bucket is still refilling
	b.Clock.AdvanceToNext()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return b.Clock.Now().Sub(start)
}

// Spec: Limits, "Rate limits" are per key pair. A client whose bucket is
// full again (it owned the key pair, gave it up, and owns it again) is
// drawn down by PaceAfter as a new one would start: the other process
// drew on it until a moment ago.
func TestPaceAfterDrainsABucketInUse(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	if _, _, err := c.Locates.History(t.Context(), "LV100001"); err != nil {
		t.Fatal(err)
	}
	b.Clock.Advance(5 * time.Second) // full again
	if waited := waitAfterPaceAfter(t, b, c); waited != 400*time.Millisecond {
		t.Errorf("the first request after PaceAfter waited %v, want 400 ms", waited)
	}
}

// Spec: Limits, "Rate limits" (quote 1/s, burst 1, per key pair: "several
// processes sharing one key pair share the buckets"). Quotes sent at once
// on one client, as the engines of two accounts of one key pair send
// theirs, go one at a time, each a second after the broker answered the
// one before: here the answer takes 400 ms on its way back, so quotes
// paced a second apart by their sending would reach the broker 0.6 s
// after it answered, which no network jitter may shorten further.
func TestPacingQuotesOneAtATimeFromTheAnswer(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.Sim.ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/locates/quote") {
			b.Clock.Advance(400 * time.Millisecond) // the answer's way back
		}
	}))
	defer slow.Close()
	b.RunClock(t)
	c, err := brokerclient.NewClient(brokerclient.WithBaseURL(slow.URL), brokerclient.WithCredentials(b.Live.ID, b.Live.Secret),
		brokerclient.WithClock(b.Clock))
	if err != nil {
		t.Fatal(err)
	}
	syms := []string{"HTBX", "HTBY", "RSHO", "RSSU"}
	var wg sync.WaitGroup
	for _, sym := range syms {
		wg.Go(func() {
			if _, _, err := c.Locates.Quote(t.Context(), brokerclient.QuoteRequest{Account: "LV100001", Symbol: sym, Quantity: 100}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	reqs := loggedRequests(b, "POST", "/locates/quote")
	if len(reqs) != len(syms) {
		t.Fatalf("%d quotes logged, want %d", len(reqs), len(syms))
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].Time.Sub(reqs[i-1].Time); gap < 1400*time.Millisecond || reqs[i].Status != http.StatusOK {
			t.Errorf("quote %d reached the broker %v after the one before (answered 400 ms later), status %d; want 1.4 s or more, 200",
				i, gap, reqs[i].Status)
		}
	}
}

// Spec: Limits, "Rate limits" (per key pair: every account of a key pair
// draws on one history bucket, 2/s). The bucket is one budget spent by
// priority: with 30 idle accounts' history reads queued on a key pair, a
// read an open offer waits on (PriorityUrgent) leaves after at most the
// read let go at once, waiting for the next token only (an idle read
// holds no reservation of a token to come), not after the 30; Load says
// who waited how long; no request draws a 429.
func TestPacingUrgentReadPassesIdleOnes(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	const idle = 30
	var idleDone atomic.Int32
	finished := make(chan struct{}, idle+1)
	errs := make(chan error, idle+1)
	for range idle {
		go func() {
			defer func() { finished <- struct{}{} }()
			if _, _, err := c.Locates.History(brokerclient.WithPriority(t.Context(), brokerclient.PriorityIdle), "LV100001"); err != nil {
				errs <- err
			}
			idleDone.Add(1)
		}()
	}
	<-b.Clock.BlockUntil(idle - 1) // all but the first asleep in the queue
	passed := make(chan int32, 1)
	go func() {
		defer func() { finished <- struct{}{} }()
		if _, _, err := c.Locates.History(brokerclient.WithPriority(t.Context(), brokerclient.PriorityUrgent), "LV100001"); err != nil {
			errs <- err
		}
		passed <- idleDone.Load()
	}()
	driveWhileAsleep(b, idle+1, finished)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := <-passed; n > 1 {
		t.Errorf("the urgent read came back after %d idle reads; want at most 1 (the one let go at once: an idle read reserves no token to come)", n)
	}
	for _, r := range loggedRequests(b, "GET", "/locates/history") {
		if r.Status == http.StatusTooManyRequests {
			t.Errorf("a request at %s was answered 429", r.Time.Format(time.RFC3339Nano))
		}
	}
	var load brokerclient.RouteLoad
	for _, l := range c.Load() {
		if strings.Contains(l.Route, "/locates/history") {
			load = l
		}
	}
	// One of the route's intervals at 95% of 2/s: the next token, no idle
	// read's reservation before it.
	if load.Waited[brokerclient.PriorityUrgent] > 550*time.Millisecond || load.Waited[brokerclient.PriorityIdle] < 10*time.Second {
		t.Errorf("history load %+v: want the urgent read's wait within 0.55 s, the last idle one's over 10 s", load)
	}
}

// While an account of the key pair holds its idle
// requests (a sent quote awaiting its offer), an idle account's read waits
// however full the bucket is, and an urgent read leaves at once; the idle
// read leaves once the hold is released (and not before, up to the
// hold's bound of 5 s).
func TestPacingHoldIdle(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	release := c.HoldIdle()
	idleDone := make(chan error, 1)
	go func() {
		_, _, err := c.Locates.History(brokerclient.WithPriority(t.Context(), brokerclient.PriorityIdle), "LV100001")
		idleDone <- err
	}()
	for range 4 { // four seconds of the fake clock (the hold's bound is 5), the idle read asleep
		<-b.Clock.BlockUntil(1)
		b.Clock.Advance(time.Second)
	}
	select {
	case err := <-idleDone:
		t.Fatalf("an idle read left while held: %v", err)
	default:
	}
	at := b.Clock.Now()
	if _, _, err := c.Locates.History(brokerclient.WithPriority(t.Context(), brokerclient.PriorityUrgent), "LV100001"); err != nil {
		t.Fatal(err)
	}
	if waited := b.Clock.Now().Sub(at); waited != 0 {
		t.Errorf("the urgent read waited %v beside a held idle one, want no wait (the bucket full)", waited)
	}
	release()
	release() // a second release does nothing
	for done := false; !done; {
		select {
		case err := <-idleDone:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		case <-b.Clock.BlockUntil(1): // the idle read waits for its token
			b.Clock.AdvanceToNext()
		}
	}
	if n := len(loggedRequests(b, "GET", "/locates/history")); n != 2 {
		t.Errorf("%d history reads logged, want 2", n)
	}
}

// A hold of idle requests lapses 5 s after it began,
// whenever each request came: under a key pair's full load idle requests
// queue longer than that anyway, and a bound counted from each one's
// arrival held none of them, so a locating account's reads waited behind
// them (50 accounts on one key pair). An idle read arriving 4 s into a
// hold waits until the hold lapses, and is let go then though the hold
// was not released.
func TestPacingHoldLapses(t *testing.T) {
	t.Parallel()
	b := simtest.New(t)
	c := b.Client(t, b.Live)
	release := c.HoldIdle()
	defer release()
	held := b.Clock.Now()
	b.Clock.Advance(4 * time.Second)
	idleDone := make(chan error, 1)
	go func() {
		_, _, err := c.Locates.History(brokerclient.WithPriority(t.Context(), brokerclient.PriorityIdle), "LV100001")
		idleDone <- err
	}()
	<-b.Clock.BlockUntil(1)
	b.Clock.Advance(999 * time.Millisecond)
	<-b.Clock.BlockUntil(1)
	select {
	case err := <-idleDone:
		t.Fatalf("the idle read left %v into the hold: %v", b.Clock.Now().Sub(held), err)
	default:
	}
	b.Clock.Advance(time.Millisecond)
	select {
	case err := <-idleDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-b.Clock.BlockUntil(1):
		t.Fatalf("the idle read still waits %v after the hold began", b.Clock.Now().Sub(held))
	}
	if at := c.LastRequest().Sub(held); at != 5*time.Second {
		t.Errorf("the idle read was let go %v after the hold began, want 5 s (the hold lapsing)", at)
	}
}
