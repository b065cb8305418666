package jobs

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/locatorhq/locator/market"
)

// Market is the time zone schedules run in: the spec's session hours are
// Eastern Time, so "0 0 9 * * MON-FRI" means 9:00 in New York whatever the
// host's zone. It is the market package's zone, not a second definition.
var Market = market.NewYork

// Parser parses cron schedules: six fields with seconds first, plus
// descriptors such as @hourly and "@every 10s". cmd/locator hands the same
// parser to the robfig runner, so a spec means one thing everywhere. The
// session schedules (@open, @close) are ParseSchedule's, not the parser's.
var Parser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Schedule is a parsed schedule in the Market zone: a value with Next, so
// tests step through it on a fake clock and the robfig runner takes it as a
// cron.Schedule. It follows the exchange's calendar (package market): a
// cron schedule never fires on an exchange holiday (unless RunOnHolidays),
// and a session schedule fires once a trading day, relative to that day's
// open or close, so an early close moves it.
type Schedule struct {
	// Spec is the text it was parsed from.
	Spec string
	// RunOnHolidays lets a cron schedule fire on exchange holidays too (a
	// job's "holidays": "run"); session schedules never do, having no
	// session then.
	RunOnHolidays bool

	cron   cron.Schedule // nil for a session schedule
	anchor string        // "open" or "close" for a session schedule
	offset time.Duration // from the anchor
}

var _ cron.Schedule = Schedule{}

// sessionSpec is a session schedule: @open or @close, optionally shifted by
// a signed duration (@close-15m, @open+5m, @close-1h30m).
var sessionSpec = regexp.MustCompile(`^@(open|close)([+-].+)?$`)

// ParseSchedule parses spec in the Market zone: six cron fields (seconds
// first) or a robfig descriptor, or a session schedule such as @close-15m.
// A TZ= prefix is refused: every schedule is market time.
func ParseSchedule(spec string) (Schedule, error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return Schedule{}, errors.New("empty schedule")
	}
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return Schedule{}, fmt.Errorf("schedule %q: schedules run in %s; drop the time-zone prefix", spec, Market)
	}
	if m := sessionSpec.FindStringSubmatch(s); m != nil {
		return parseSession(s, m[1], m[2])
	}
	sched, err := Parser.Parse(s)
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(s, "@") && len(strings.Fields(s)) != 6 {
			msg += ` (six fields, seconds first: e.g. "0 0 9 * * MON-FRI"; or @open, @close-15m)`
		}
		return Schedule{}, fmt.Errorf("schedule %q: %s", spec, msg)
	}
	if ss, ok := sched.(*cron.SpecSchedule); ok && ss.Location == time.Local {
		ss.Location = Market
	}
	return Schedule{Spec: s, cron: sched}, nil
}

// parseSession checks that the shifted time stays on the session's own date
// for a full day and an early close alike, so "the run of a trading day" is
// never on a day the exchange is closed.
func parseSession(s, anchor, shift string) (Schedule, error) {
	var off time.Duration
	if shift != "" {
		var err error
		if off, err = time.ParseDuration(shift); err != nil {
			return Schedule{}, fmt.Errorf("schedule %q: %q is not a duration such as -15m or +1h30m", s, shift)
		}
	}
	// Minutes from midnight: the open, or the earliest and latest closes.
	lo, hi := 9*time.Hour+30*time.Minute, 9*time.Hour+30*time.Minute
	if anchor == "close" {
		lo, hi = 13*time.Hour, 16*time.Hour
	}
	if lo+off < 0 || hi+off >= 24*time.Hour {
		return Schedule{}, fmt.Errorf("schedule %q: the shift moves the run off the session's day (keep %s%s between 00:00 and 24:00)", s, "@"+anchor, shift)
	}
	return Schedule{Spec: s, anchor: anchor, offset: off}, nil
}

// Next returns the first activation strictly after t on a day the schedule
// runs (zero if none within five years), in t's location.
func (s Schedule) Next(t time.Time) time.Time {
	horizon := t.AddDate(5, 0, 0)
	if s.anchor != "" {
		for day := market.On(t); day.Date.Before(horizon); day = market.Next(day.Date) {
			if !day.Trading() {
				continue
			}
			at := day.Open
			if s.anchor == "close" {
				at = day.Close
			}
			if at = at.Add(s.offset); at.After(t) {
				return at.In(t.Location())
			}
		}
		return time.Time{}
	}
	if s.cron == nil {
		return time.Time{}
	}
	for next := s.cron.Next(t); !next.IsZero() && next.Before(horizon); next = s.cron.Next(next) {
		if _, skip := s.Skips(next); !skip {
			return next
		}
		// Resume the search at the end of the closed day: the last whole
		// second before the next midnight (cron works in whole seconds).
		next = market.On(next).Date.AddDate(0, 0, 1).Add(-time.Second).In(next.Location())
	}
	return time.Time{}
}

// Skips reports whether a run at t is skipped because the market is closed
// that day, and why ("market closed: Thanksgiving Day"): a cron schedule
// skips exchange holidays (weekends are its own fields' business), a
// session schedule every day without a session.
func (s Schedule) Skips(t time.Time) (string, bool) {
	day := market.On(t)
	switch {
	case s.anchor != "" && !day.Trading():
		return "market closed: " + day.Closed(), true
	case s.cron != nil && !s.RunOnHolidays && day.Holiday != "":
		return "market closed: " + day.Holiday, true
	}
	return "", false
}

// String returns the spec.
func (s Schedule) String() string { return s.Spec }
