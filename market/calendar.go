package market

import (
	"time"
	_ "time/tzdata" // America/New_York must load on machines without zone files
)

// NewYork is the exchange's time zone: session hours, trade dates and job
// schedules are New York wall-clock time whatever the host's zone.
var NewYork = mustLoad("America/New_York")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err) // time/tzdata is embedded: cannot happen
	}
	return loc
}

// Regular session hours, as hour and minute of the New York day.
const (
	openHour, openMinute  = 9, 30
	closeHour, earlyClose = 16, 13
)

// Day is what the exchange does on one New York date.
type Day struct {
	// Date is midnight in NewYork.
	Date time.Time
	// Holiday names the holiday the exchange observes on this date, such as
	// "Thanksgiving Day" or "Independence Day (observed)"; empty on a
	// trading day and on an ordinary weekend. It is only ever a weekday.
	Holiday string
	// Open and Close bound the regular session; both are zero when the
	// exchange is closed all day.
	Open, Close time.Time
	// EarlyClose is set on a trading day whose session ends at 13:00.
	EarlyClose bool
}

// Trading reports whether the exchange has a session on the date.
func (d Day) Trading() bool { return !d.Open.IsZero() }

// Closed says why the exchange does not trade on the date: the holiday's
// name, or "Saturday" or "Sunday"; empty on a trading day.
func (d Day) Closed() string {
	switch {
	case d.Holiday != "":
		return d.Holiday
	case !d.Trading():
		return d.Date.Weekday().String()
	}
	return ""
}

// On returns the exchange's day for the New York date of t.
func On(t time.Time) Day {
	t = t.In(NewYork)
	y, m, dd := t.Date()
	d := Day{Date: time.Date(y, m, dd, 0, 0, 0, 0, NewYork)}
	if wd := d.Date.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return d
	}
	if d.Holiday = holiday(y, m, dd); d.Holiday != "" {
		return d
	}
	d.Open = time.Date(y, m, dd, openHour, openMinute, 0, 0, NewYork)
	d.EarlyClose = early(y, m, dd)
	end := closeHour
	if d.EarlyClose {
		end = earlyClose
	}
	d.Close = time.Date(y, m, dd, end, 0, 0, 0, NewYork)
	return d
}

// IsTradingDay reports whether the exchange trades on the New York date of t.
func IsTradingDay(t time.Time) bool { return On(t).Trading() }

// Next returns the first trading day after the New York date of t.
func Next(t time.Time) Day {
	d := On(t).Date
	for {
		d = d.AddDate(0, 0, 1)
		if day := On(d); day.Trading() {
			return day
		}
	}
}

// ClosedNote is a warning for a person placing a locate or a short at t
// when the exchange has no session left that day and they may not know
// it: on a holiday (named), or after an early close. A weekend, or the
// evening after a regular close, needs no note (empty then). The note
// names the next session's open.
func ClosedNote(t time.Time) string {
	day := On(t)
	next := Next(t).Open.Format("Mon 2006-01-02 15:04 MST")
	switch {
	case day.Holiday != "":
		return "the exchange is closed today (" + day.Holiday + "); its next session opens " + next
	case day.EarlyClose && !t.Before(day.Close):
		return "the exchange closed early today, at " + day.Close.Format("15:04 MST") + "; its next session opens " + next
	}
	return ""
}

// unscheduled are closures no rule predicts, from 2022 on.
var unscheduled = map[date]string{
	{2025, time.January, 9}: "National Day of Mourning for President Carter",
}

// date is a civil date, the key of the holiday rules.
type date struct {
	y int
	m time.Month
	d int
}

func (c date) weekday() time.Weekday {
	return time.Date(c.y, c.m, c.d, 12, 0, 0, 0, time.UTC).Weekday()
}

func (c date) addDays(n int) date {
	t := time.Date(c.y, c.m, c.d+n, 12, 0, 0, 0, time.UTC)
	return date{t.Year(), t.Month(), t.Day()}
}

// holiday names the holiday observed on a weekday, or "".
func holiday(y int, m time.Month, d int) string {
	on := date{y, m, d}
	if name, ok := unscheduled[on]; ok {
		return name
	}
	for _, h := range holidays(y) {
		if h.on == on {
			return h.name
		}
	}
	return ""
}

type observed struct {
	on   date
	name string
}

// holidays lists the year's observed holidays. Every observed date stays
// in its year: the only holiday that could move across a year end, New
// Year's Day on a Saturday, is not observed.
func holidays(y int) []observed {
	var out []observed
	fixed := func(m time.Month, d int, name string) {
		on := date{y, m, d}
		switch on.weekday() {
		case time.Saturday:
			if m == time.January && d == 1 {
				return // NYSE Rule 7.2: not moved back into the old year
			}
			out = append(out, observed{on.addDays(-1), name + " (observed)"})
		case time.Sunday:
			out = append(out, observed{on.addDays(1), name + " (observed)"})
		default:
			out = append(out, observed{on, name})
		}
	}
	floating := func(m time.Month, wd time.Weekday, nth int, name string) {
		out = append(out, observed{nthWeekday(y, m, wd, nth), name})
	}
	fixed(time.January, 1, "New Year's Day")
	floating(time.January, time.Monday, 3, "Martin Luther King Jr. Day")
	floating(time.February, time.Monday, 3, "Washington's Birthday")
	out = append(out, observed{easter(y).addDays(-2), "Good Friday"})
	floating(time.May, time.Monday, -1, "Memorial Day")
	if y >= 2022 {
		fixed(time.June, 19, "Juneteenth")
	}
	fixed(time.July, 4, "Independence Day")
	floating(time.September, time.Monday, 1, "Labor Day")
	floating(time.November, time.Thursday, 4, "Thanksgiving Day")
	fixed(time.December, 25, "Christmas Day")
	return out
}

// early reports whether a trading day closes at 13:00. The caller has
// checked that the date trades, which settles "when a trading day".
func early(y int, m time.Month, d int) bool {
	switch {
	case m == time.July && d == 3:
		return true
	case m == time.December && d == 24:
		return true
	case m == time.November:
		return date{y, m, d} == nthWeekday(y, time.November, time.Thursday, 4).addDays(1)
	}
	return false
}

// nthWeekday is the nth wd of month m (nth -1: the last).
func nthWeekday(y int, m time.Month, wd time.Weekday, nth int) date {
	if nth < 0 {
		last := date{y, m + 1, 1}.addDays(-1) // time.Date normalises month 13
		return last.addDays(-((int(last.weekday()) - int(wd) + 7) % 7))
	}
	first := date{y, m, 1}
	return first.addDays((int(wd)-int(first.weekday())+7)%7 + 7*(nth-1))
}

// easter is Easter Sunday of year y in the Gregorian calendar (the
// anonymous computus of Meeus, Jones and Butcher).
func easter(y int) date {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return date{y, time.Month(month), day}
}
