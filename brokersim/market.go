package brokersim

import (
	"time"
	_ "time/tzdata" // America/New_York on machines without zone files
)

// eastern is the zone of the spec's session hours.
var eastern = mustLoad("America/New_York")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

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
