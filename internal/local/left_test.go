package local

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/clock"
)

// A long-lived daemon's memory of the callers that went away
// (Account.left, what declines a gone caller's offers at once) holds the
// last leftKept's departures, not every follower it ever served: 10,000
// callers coming and going over two days leave about an hour's worth, and
// the one that just left is still known as gone.
func TestLocalForgetsOldDepartures(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC))
	l := &Account{clk: clk, askers: map[string]*asker{}, left: map[string]time.Time{}, changed: make(chan struct{})}
	const callers = 10_000
	step := 48 * time.Hour / callers
	for i := range callers {
		release := l.Listen(fmt.Sprintf("caller-%d", i), func(context.Context, account.Question) bool { return false })
		clk.Advance(step)
		release()
	}
	perHour := int(leftKept/step) + 1
	if len(l.left) > perHour {
		t.Errorf("after %d callers over 48 h the daemon remembers %d departures, want at most %d (leftKept's)", callers, len(l.left), perHour)
	}
	if len(l.askers) != 0 {
		t.Errorf("%d listeners held after every caller released", len(l.askers))
	}
	last := fmt.Sprintf("caller-%d", callers-1)
	if at, ok := l.left[last]; !ok || !at.Equal(clk.Now()) {
		t.Errorf("the caller that just left: left[%s] = %v, %v; want %v", last, at, ok, clk.Now())
	}
}
