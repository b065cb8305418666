package market

import "time"

// People read every time as New York time, the exchange's, labelled ET,
// whatever this machine's zone; machines read RFC 3339 in UTC (the JSON
// records).

// DateTime is t as "2006-01-02 15:04:05 ET".
func DateTime(t time.Time) string { return t.In(NewYork).Format(time.DateTime) + " ET" }

// TimeOfDay is t as "15:04:05 ET".
func TimeOfDay(t time.Time) string { return t.In(NewYork).Format(time.TimeOnly) + " ET" }

// DayMinute is t as "01-02 15:04 ET", for a deadline in a narrow column.
func DayMinute(t time.Time) string { return t.In(NewYork).Format("01-02 15:04") + " ET" }
