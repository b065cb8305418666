package poller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/poller"
	"github.com/locatorhq/locator/simtest"
)

// Spec: "Locate statuses" (a quote settles in about 1.5 to 3 seconds) and
// "Rate limits" (history 2/s per key pair, shared by its accounts). Over
// real HTTP to the simulator on virtual time, for several seeds: an
// account awaiting its quote reads history every half second across the
// settle window; another account of the key pair, idle and reading as
// often as the bucket lets it, takes none of those turns and reads again
// after them; and the offer is seen by the first read after it settled,
// at most half a second later.
func TestSettleWindowReadsGoFirstOnTheKeyPair(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			settleWindowReads(t, seed)
		})
	}
}

const idleAccount = "LV100003"

func settleWindowReads(t *testing.T, seed uint64) {
	b := simtest.New(t, simtest.WithScenario(func(sc *brokersim.Scenario) {
		sc.Seed = seed
		for _, a := range sc.Accounts {
			if a.ID == "LV100001" { // the idle account is its twin, on its key pair
				a.ID = idleAccount
				sc.Accounts = append(sc.Accounts, a)
				k := &sc.Keys[keyOf(sc, "LV100001")]
				k.Accounts = append(k.Accounts, idleAccount)
				break
			}
		}
	}))
	c := b.Client(t, b.Live)
	offered := make(chan struct{})
	quoting := poller.New(poller.Config{Account: "LV100001", Source: poller.ClientSource(c), Clock: b.Clock,
		Rows: func(rows []brokerclient.HistoryRow) {
			for _, r := range rows {
				if r.QuoteReqID == "settle-1" && r.LocateStatus == brokercode.LocateStatusOffered {
					close(offered)
				}
			}
		}})
	idlePolled := make(chan struct{}, 100)
	idle := poller.New(poller.Config{Account: idleAccount, Source: poller.ClientSource(c), Clock: b.Clock,
		Cadence: poller.Cadence{IdleHistory: 100 * time.Millisecond, IdleInventory: time.Hour},
		AfterPoll: func(time.Time) {
			select {
			case idlePolled <- struct{}{}:
			default: // the test waits on none of these
			}
		}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	for _, p := range []*poller.Poller{quoting, idle} {
		go func() { done <- p.Run(ctx) }()
	}
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run() = %v, want context.Canceled", err)
			}
		}
	})
	b.RunClockWhen(t, 2) // both pollers asleep on the clock
	for i := range 4 {   // the idle account reads before the quote
		recv(t, idlePolled, fmt.Sprint("idle read ", i))
	}
	if _, _, err := c.Locates.Quote(ctx, brokerclient.QuoteRequest{Account: "LV100001", Symbol: "HTBX", Quantity: 100, QuoteReqID: "settle-1"}); err != nil {
		t.Fatal(err)
	}
	answered := b.Clock.Now()
	quoting.SetHot(true)
	quoting.SetAwaiting(true)
	quoting.Quoted(answered)
	recv(t, offered, "the offer to be seen")
	for len(idlePolled) > 0 { // the idle reads made before the quote
		<-idlePolled
	}
	recv(t, idlePolled, "an idle read after the window's") // the hold ends
	var settled time.Time
	for _, r := range b.Sim.Locates() {
		if r.QuoteReqID == "settle-1" {
			settled = r.Offered
		}
	}
	if settled.IsZero() {
		t.Fatal("the simulator records no offer of settle-1")
	}
	var reads, idleReads []time.Time
	for _, r := range b.Sim.Requests() {
		switch {
		case !strings.HasSuffix(r.Path, "/locates/history"):
		case strings.Contains(r.Path, "/"+idleAccount+"/"):
			idleReads = append(idleReads, r.Time)
		case !r.Time.Before(answered):
			reads = append(reads, r.Time)
		}
		if r.Status == 429 {
			t.Errorf("%s %s at %s: 429", r.Method, r.Path, r.Time.Sub(answered))
		}
	}
	// The window's reads: from its first, half a second after it opened,
	// to the one that showed the offer.
	var window []time.Time
	for _, at := range reads {
		if !at.Before(answered.Add(poller.DefaultCadence.SettleMin)) {
			window = append(window, at)
		}
		if !at.Before(settled) {
			break
		}
	}
	if len(window) == 0 || window[len(window)-1].Before(settled) {
		t.Fatalf("no read at or after the offer settled at %s (reads %v)", settled.Sub(answered), offsets(reads, answered))
	}
	if first := window[0].Sub(answered); first > poller.DefaultCadence.SettleMin+500*time.Millisecond {
		t.Errorf("first read in the window %s after the answer, want by %s", first, poller.DefaultCadence.SettleMin+500*time.Millisecond)
	}
	for i := 1; i < len(window); i++ {
		if gap := window[i].Sub(window[i-1]); gap > 500*time.Millisecond {
			t.Errorf("reads in the settle window %s apart (%v), want at most 500ms", gap, offsets(window, answered))
		}
	}
	if seen := window[len(window)-1].Sub(settled); seen > 500*time.Millisecond {
		t.Errorf("offer settled %s after the answer, seen %s later, want within 500ms", settled.Sub(answered), seen)
	}
	for _, at := range idleReads {
		if at.After(window[0]) && at.Before(window[len(window)-1]) {
			t.Errorf("an idle read at %s took a turn between the window's reads %v", at.Sub(answered), offsets(window, answered))
		}
	}
	if last := idleReads[len(idleReads)-1]; !last.After(window[len(window)-1]) {
		t.Errorf("the idle account's last read at %s, want one after the window's reads %v", last.Sub(answered), offsets(window, answered))
	}
}

// keyOf is the index of the scenario's key pair that owns account.
func keyOf(sc *brokersim.Scenario, account string) int {
	for i, k := range sc.Keys {
		if slices.Contains(k.Accounts, account) {
			return i
		}
	}
	return -1
}

// offsets are times as durations from base, for messages.
func offsets(ts []time.Time, base time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, at := range ts {
		out[i] = at.Sub(base)
	}
	return out
}
