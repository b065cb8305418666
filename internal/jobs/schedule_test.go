package jobs_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/notify"
)

// et is a New York wall-clock time.
func et(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", s, jobs.Market)
	if err != nil {
		panic(err)
	}
	return t
}

// A cron schedule never fires on an exchange holiday; the
// next run skips to the next trading day. Measured on main: the next run of
// a weekday job after Wednesday 2026-11-25 was Thanksgiving. Weekends stay
// the cron fields' business, and "holidays": "run" keeps holiday runs.
func TestScheduleSkipsHolidays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec, from string
		run        bool // RunOnHolidays
		want       []string
	}{
		{"0 0 9 * * MON-FRI", "2026-11-25 09:00:00", false, []string{"2026-11-27 09:00:00", "2026-11-30 09:00:00"}},
		{"0 0 9 * * MON-FRI", "2026-11-26 00:00:00", false, []string{"2026-11-27 09:00:00"}},
		{"0 0 9 * * MON-FRI", "2026-12-23 10:00:00", false, []string{"2026-12-24 09:00:00", "2026-12-28 09:00:00"}},
		{"0 0 9 * * MON-FRI", "2026-07-02 10:00:00", false, []string{"2026-07-06 09:00:00"}},
		{"0 0 9 * * MON-FRI", "2026-11-25 09:00:00", true, []string{"2026-11-26 09:00:00", "2026-11-27 09:00:00"}},
		{"* * * * * *", "2026-11-25 23:59:58", false, []string{"2026-11-25 23:59:59", "2026-11-27 00:00:00", "2026-11-27 00:00:01"}},
		{"0 0 10 * * *", "2026-11-25 10:00:00", false, []string{"2026-11-27 10:00:00", "2026-11-28 10:00:00"}},
		{"@every 1h", "2026-11-25 23:30:00", false, []string{"2026-11-27 00:59:59"}},
	} {
		s := mustSchedule(t, tc.spec)
		s.RunOnHolidays = tc.run
		var got []string
		at := et(tc.from)
		for range tc.want {
			at = s.Next(at)
			got = append(got, at.In(jobs.Market).Format("2006-01-02 15:04:05"))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s from %s (holidays run %v) (-want +got):\n%s", tc.spec, tc.from, tc.run, diff)
		}
	}
}

// Session schedules fire once a trading day relative to its open or close,
// so an early close moves them (13:00 on the day after Thanksgiving and on
// Christmas Eve 2026), and a closed day has none.
func TestSessionSchedules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec, from string
		want       []string
	}{
		{"@close-15m", "2026-11-25 12:00:00", []string{"2026-11-25 15:45:00", "2026-11-27 12:45:00", "2026-11-30 15:45:00"}},
		{"@close-15m", "2026-11-25 15:45:00", []string{"2026-11-27 12:45:00"}},
		{"@close", "2026-12-23 16:00:00", []string{"2026-12-24 13:00:00", "2026-12-28 16:00:00"}},
		{"@open+5m", "2026-11-25 09:35:00", []string{"2026-11-27 09:35:00", "2026-11-30 09:35:00"}},
		{"@open-1h30m", "2026-11-27 07:00:00", []string{"2026-11-27 08:00:00", "2026-11-30 08:00:00"}},
		{"@close+2h", "2027-06-17 12:00:00", []string{"2027-06-17 18:00:00", "2027-06-21 18:00:00"}}, // Juneteenth observed Friday 2027-06-18
	} {
		s := mustSchedule(t, tc.spec)
		var got []string
		at := et(tc.from)
		for range tc.want {
			at = s.Next(at)
			got = append(got, at.In(jobs.Market).Format("2006-01-02 15:04:05"))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s from %s (-want +got):\n%s", tc.spec, tc.from, diff)
		}
	}
	for spec, want := range map[string]string{
		"@close+8h":   "off the session's day",
		"@open-9h31m": "off the session's day",
		"@close-14h":  "off the session's day",
		"@close-abc":  "not a duration",
		"@closing":    "unrecognized descriptor",
		"@open 5m":    "unrecognized descriptor",
	} {
		if _, err := jobs.ParseSchedule(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchedule(%q) = %v, want an error with %q", spec, err, want)
		}
	}
}

// Which days a schedule skips, and the reason recorded for it.
func TestScheduleSkips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec, at string
		run      bool
		want     string
	}{
		{"0 0 9 * * MON-FRI", "2026-11-26 09:00:00", false, "market closed: Thanksgiving Day"},
		{"0 0 9 * * MON-FRI", "2026-07-03 09:00:00", false, "market closed: Independence Day (observed)"},
		{"0 0 9 * * MON-FRI", "2026-11-26 09:00:00", true, ""},
		{"0 0 9 * * *", "2026-11-28 09:00:00", false, ""}, // Saturday: the cron fields said so
		{"0 0 9 * * MON-FRI", "2026-11-27 09:00:00", false, ""},
		{"@close-15m", "2026-11-28 09:00:00", false, "market closed: Saturday"},
		{"@close-15m", "2026-12-25 09:00:00", false, "market closed: Christmas Day"},
		{"@close-15m", "2026-12-24 09:00:00", false, ""},
	} {
		s := mustSchedule(t, tc.spec)
		s.RunOnHolidays = tc.run
		why, skip := s.Skips(et(tc.at))
		if why != tc.want || skip != (tc.want != "") {
			t.Errorf("%s at %s: skips %v %q, want %q", tc.spec, tc.at, skip, why, tc.want)
		}
	}
}

// The jobs file grows without breaking: "holidays" on a job, and a
// "notify" block of webhooks named by environment variable.
func TestParseConfigHolidaysAndNotify(t *testing.T) {
	t.Parallel()
	cfg, err := jobs.ParseConfig([]byte(`{
  "jobs": [
    {"name": "eod", "kind": "credit-back-unused", "schedule": "@close-15m"},
    {"name": "ledger", "kind": "ledger-sync", "schedule": "0 0 18 * * *", "holidays": "run"},
    {"name": "fees", "kind": "reconcile", "schedule": "0 30 18 * * MON-FRI", "holidays": "skip"}
  ],
  "notify": {"webhooks": [
    {"urlEnv": "LOCATOR_SLACK_WEBHOOK", "format": "slack"},
    {"urlEnv": "LOCATOR_WEBHOOK"}
  ]}
}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range cfg.Jobs {
		got = append(got, j.Schedule.Spec+" "+map[bool]string{true: "run", false: "skip"}[j.Schedule.RunOnHolidays])
	}
	if diff := cmp.Diff([]string{"@close-15m skip", "0 0 18 * * * run", "0 30 18 * * MON-FRI skip"}, got); diff != "" {
		t.Errorf("schedules (-want +got):\n%s", diff)
	}
	want := []notify.Webhook{{URLEnv: "LOCATOR_SLACK_WEBHOOK", Format: notify.FormatSlack}, {URLEnv: "LOCATOR_WEBHOOK", Format: notify.FormatJSON}}
	if diff := cmp.Diff(want, cfg.Webhooks); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}

	base := func(extra string) string {
		return "{\n  \"jobs\": [{\"name\": \"a\", \"kind\": \"reconcile\", \"schedule\": \"@close\"" + extra + "}],\n  \"notify\": "
	}
	secret := "https://hooks.example/services/T0/B0/s3cret"
	for _, tc := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"holidays run with a session schedule", base(`, "holidays": "run"`) + `{"webhooks": []}}`, 2, `does not go with @close`},
		{"holidays unknown", base(`, "holidays": "maybe"`) + `{"webhooks": []}}`, 2, `holidays "maybe"`},
		{"url in the file", base("") + "{\"webhooks\": [\n {\"url\": \"" + secret + "\"}]}}", 4, "a webhook URL is a secret"},
		{"url in urlEnv", base("") + "{\"webhooks\": [\n {\"urlEnv\": \"" + secret + "\"}]}}", 4, "not hold the URL"},
		{"unknown format", base("") + "{\"webhooks\": [\n {\"urlEnv\": \"H\",\n \"format\": \"teams\"}]}}", 5, `format "teams"`},
		{"no urlEnv", base("") + "{\"webhooks\": [\n {\"format\": \"slack\"}]}}", 4, `no "urlEnv"`},
		{"unknown notify field", base("") + "{\n\"email\": \"me@example.com\"}}", 4, `unknown field "email"`},
		{"notify without webhooks", base("") + "{}}", 3, `no "webhooks"`},
	} {
		_, err := jobs.ParseConfig([]byte(tc.in))
		var ce *jobs.ConfigError
		if !errors.As(err, &ce) || ce.Line != tc.line || !strings.Contains(ce.Msg, tc.want) {
			t.Errorf("%s: %v, want line %d with %q\n%s", tc.name, err, tc.line, tc.want, numbered(tc.in))
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error quotes the URL: %v", tc.name, err)
		}
	}
}

// Every jobs file docs/operations.md shows parses, the one with session
// schedules, holidays and webhooks among them.
func TestParseConfigREADMESamples(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	parsed, notified := 0, 0
	for _, block := range strings.Split(string(page), "```json\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, `"jobs"`) {
			continue
		}
		cfg, err := jobs.ParseConfig([]byte(block))
		if err != nil {
			t.Errorf("docs/operations.md sample:\n%s\n%v", block, err)
			continue
		}
		parsed++
		if len(cfg.Webhooks) > 0 {
			notified++
		}
	}
	if parsed == 0 || notified == 0 {
		t.Errorf("%d jobs files in docs/operations.md, %d with webhooks; want some of each", parsed, notified)
	}
}
