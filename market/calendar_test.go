package market_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/market"
)

// published is NYSE Group's holiday and early-close calendar for each year,
// as announced (2022-2024 in December 2021, 2025-2027 in November 2024,
// 2026-2028 in December 2025), plus the unscheduled closure of January 9,
// 2025.
var published = map[int]struct{ holidays, early []string }{
	2022: {
		// New Year's Day 2022 fell on a Saturday: not observed.
		holidays: []string{"01-17", "02-21", "04-15", "05-30", "06-20", "07-04", "09-05", "11-24", "12-26"},
		early:    []string{"11-25"},
	},
	2023: {
		holidays: []string{"01-02", "01-16", "02-20", "04-07", "05-29", "06-19", "07-04", "09-04", "11-23", "12-25"},
		early:    []string{"07-03", "11-24"},
	},
	2024: {
		holidays: []string{"01-01", "01-15", "02-19", "03-29", "05-27", "06-19", "07-04", "09-02", "11-28", "12-25"},
		early:    []string{"07-03", "11-29", "12-24"},
	},
	2025: {
		holidays: []string{"01-01", "01-09", "01-20", "02-17", "04-18", "05-26", "06-19", "07-04", "09-01", "11-27", "12-25"},
		early:    []string{"07-03", "11-28", "12-24"},
	},
	2026: {
		holidays: []string{"01-01", "01-19", "02-16", "04-03", "05-25", "06-19", "07-03", "09-07", "11-26", "12-25"},
		early:    []string{"11-27", "12-24"},
	},
	2027: {
		holidays: []string{"01-01", "01-18", "02-15", "03-26", "05-31", "06-18", "07-05", "09-06", "11-25", "12-24"},
		early:    []string{"11-26"},
	},
	2028: {
		// New Year's Day 2028 falls on a Saturday: not observed.
		holidays: []string{"01-17", "02-21", "04-14", "05-29", "06-19", "07-04", "09-04", "11-23", "12-25"},
		early:    []string{"07-03", "11-24"},
	},
}

// Every date of each published year: the weekdays the exchange is closed
// and the days it closes at 13:00 are exactly NYSE's lists; every other
// weekday opens at 9:30 and closes at 16:00 New York time.
func TestPublishedCalendars(t *testing.T) {
	t.Parallel()
	for year, want := range published {
		var holidays, early []string
		for d := time.Date(year, 1, 1, 12, 0, 0, 0, market.NewYork); d.Year() == year; d = d.AddDate(0, 0, 1) {
			day := market.On(d)
			wd := d.Weekday()
			weekend := wd == time.Saturday || wd == time.Sunday
			switch {
			case weekend:
				if day.Trading() || day.Holiday != "" || day.Closed() != wd.String() {
					t.Errorf("%s (%s): %+v, want closed for the weekend", d.Format(time.DateOnly), wd, day)
				}
				continue
			case day.Holiday != "":
				holidays = append(holidays, d.Format("01-02"))
				if day.Trading() || day.Closed() != day.Holiday {
					t.Errorf("%s: %+v trades on a holiday", d.Format(time.DateOnly), day)
				}
				continue
			case day.EarlyClose:
				early = append(early, d.Format("01-02"))
			}
			end := 16
			if day.EarlyClose {
				end = 13
			}
			y, m, dd := d.Date()
			if !day.Open.Equal(time.Date(y, m, dd, 9, 30, 0, 0, market.NewYork)) ||
				!day.Close.Equal(time.Date(y, m, dd, end, 0, 0, 0, market.NewYork)) || day.Closed() != "" {
				t.Errorf("%s: session %s-%s, want 09:30-%d:00", d.Format(time.DateOnly),
					day.Open.Format("15:04"), day.Close.Format("15:04"), end)
			}
		}
		if diff := cmp.Diff(want.holidays, holidays); diff != "" {
			t.Errorf("%d holidays (-NYSE +ours):\n%s", year, diff)
		}
		if diff := cmp.Diff(want.early, early); diff != "" {
			t.Errorf("%d early closes (-NYSE +ours):\n%s", year, diff)
		}
	}
}

// The date is New York's, whatever the zone of the instant asked about:
// 02:00 UTC on Friday is still Thanksgiving evening in New York.
func TestOnUsesNewYorkDate(t *testing.T) {
	t.Parallel()
	day := market.On(time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC))
	if day.Holiday != "Thanksgiving Day" || day.Date.Format(time.DateOnly) != "2026-11-26" {
		t.Errorf("On(2026-11-27 02:00 UTC) = %+v, want Thanksgiving 2026-11-26", day)
	}
	if got := market.On(time.Date(2026, 7, 3, 12, 0, 0, 0, time.UTC)).Holiday; got != "Independence Day (observed)" {
		t.Errorf("2026-07-03: holiday %q", got)
	}
}

// Next skips weekends and holidays: after Thanksgiving 2026 comes the early
// close of Friday the 27th; after Christmas 2026 (a Friday), Monday the 28th.
func TestNext(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, want, close string }{
		{"2026-11-25", "2026-11-27", "13:00"},
		{"2026-11-26", "2026-11-27", "13:00"},
		{"2026-12-24", "2026-12-28", "16:00"},
		{"2027-12-23", "2027-12-27", "16:00"},
	} {
		from, _ := time.ParseInLocation(time.DateOnly, c.from, market.NewYork)
		got := market.Next(from.Add(23 * time.Hour))
		if got.Date.Format(time.DateOnly) != c.want || got.Close.Format("15:04") != c.close {
			t.Errorf("Next(%s) = %s closing %s, want %s closing %s", c.from,
				got.Date.Format(time.DateOnly), got.Close.Format("15:04"), c.want, c.close)
		}
	}
}

// A locate or a short on a holiday or after an early close carries a
// note naming the next open; a trading day before its close, a weekend or
// an evening after a regular close carries none.
func TestClosedNote(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, market.NewYork)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for when, want := range map[string]string{
		"2026-11-26 10:00": "the exchange is closed today (Thanksgiving Day); its next session opens Fri 2026-11-27 09:30 EST",
		"2026-11-27 12:00": "",
		"2026-11-27 13:05": "the exchange closed early today, at 13:00 EST; its next session opens Mon 2026-11-30 09:30 EST",
		"2026-11-30 10:00": "",
		"2026-11-30 17:00": "",
		"2026-11-28 10:00": "",
	} {
		if got := market.ClosedNote(at(when)); got != want {
			t.Errorf("ClosedNote(%s) = %q, want %q", when, got, want)
		}
	}
}
