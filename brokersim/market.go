package brokersim

import (
	"time"

	"github.com/locatorhq/locator/market"
)

// eastern is the zone of the spec's session hours, the market package's
// (a leaf, which the simulator may import). The simulator keeps the spec's
// hours, weekdays 9:30 to 16:00, and knows no holidays: the spec names
// none.
var eastern = market.NewYork

// regularHours reports whether t falls in 9:30 AM to 4:00 PM Eastern on a
// weekday, the window outside which market orders are rejected with R78.
func regularHours(t time.Time) bool {
	et := t.In(eastern)
	if wd := et.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	m := et.Hour()*60 + et.Minute()
	return m >= 9*60+30 && m < 16*60
}
