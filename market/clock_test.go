package market_test

import (
	"testing"
	"time"

	"github.com/locatorhq/locator/market"
)

// One time zone rule for every time a person reads: New
// York time, labelled ET, whatever zone the instant carries (this
// machine's, UTC from the broker, another's).
func TestTimesAreNewYorkLabelled(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("JST", 9*3600)
	for _, at := range []time.Time{
		time.Date(2026, 11, 26, 15, 4, 5, 0, time.UTC),
		time.Date(2026, 11, 27, 0, 4, 5, 0, tokyo),
	} {
		if got := market.DateTime(at); got != "2026-11-26 10:04:05 ET" {
			t.Errorf("DateTime(%s) = %q", at, got)
		}
		if got := market.TimeOfDay(at); got != "10:04:05 ET" {
			t.Errorf("TimeOfDay(%s) = %q", at, got)
		}
		if got := market.DayMinute(at); got != "11-26 10:04 ET" {
			t.Errorf("DayMinute(%s) = %q", at, got)
		}
	}
	// Summer time: EDT is still labelled ET.
	if got := market.DateTime(time.Date(2026, 7, 1, 16, 0, 0, 0, time.UTC)); got != "2026-07-01 12:00:00 ET" {
		t.Errorf("July: %q", got)
	}
}
