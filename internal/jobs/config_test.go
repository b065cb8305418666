package jobs_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/internal/jobs"
)

// The sample of docs/operations.md parses into four jobs with their defaults and a
// policy that always auto-accepts; schedules run in New York time.
func TestParseConfigSample(t *testing.T) {
	t.Parallel()
	// The sample of docs/operations.md, shared with cmd/locator's docs test, which runs it.
	sample, err := os.ReadFile("../../testdata/jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jobs.ParseConfig(sample)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Kind, Schedule string
		Line                 int
		Symbols              []string
		Quantity             int64
		MaxPrice, MaxCost    string
		Auto                 bool
		Days                 int
		Grace                time.Duration
	}
	var got []row
	for _, j := range cfg.Jobs {
		got = append(got, row{j.Name, string(j.Kind), j.Schedule.Spec, j.Line, j.Symbols, j.Quantity,
			j.Policy.MaxPrice.String(), j.Policy.MaxCost.String(), j.Policy.AutoAccept, j.Days, j.Grace})
	}
	want := []row{
		{"premarket-locates", "locate", "0 0 9 * * MON-FRI", 3, []string{"HTBX", "RSHO"}, 1000, "0.05", "100", true, 0, 0},
		{"eod-credit-back", "credit-back-unused", "@close-15m", 11, nil, 0, "0", "0", false, 0, 0},
		{"ledger", "ledger-sync", "0 0 18 * * MON-FRI", 12, nil, 0, "0", "0", false, 7, 0},
		{"fees", "reconcile", "0 30 18 * * MON-FRI", 13, nil, 0, "0", "0", false, 7, 24 * time.Hour},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	// 9:00 New York on the next weekday, whatever the host's zone.
	fri := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC) // Friday 11:00 ET
	next := cfg.Jobs[0].Schedule.Next(fri)
	if want := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC); !next.Equal(want) {
		t.Errorf("next run after Friday 11:00 ET: %s, want Monday 09:00 ET (%s)", next, want)
	}
	if _, err := cfg.Job("fees"); err != nil {
		t.Error(`Job("fees") not found`)
	}
}

// A malformed config or cron spec is refused at start with
// the line and the reason.
func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	job := func(fields string) string {
		return "{\n  \"jobs\": [\n    {\"name\": \"a\", \"kind\": \"credit-back-unused\", \"schedule\": \"0 0 16 * * *\"},\n    {\n" + fields + "\n    }\n  ]\n}\n"
	}
	// In job(...), the second job's fields start on line 5.
	loc := `      "name": "w", "kind": "locate", "schedule": "0 0 9 * * MON-FRI",
      "symbols": ["HTBX"], "quantity": 300,
      "policy": {"maxPrice": 0.02}`
	for _, tc := range []struct {
		name string
		in   string
		line int
		want string
	}{
		{"empty file", "  \n", 1, "empty"},
		{"syntax: missing comma", "{\n  \"jobs\": [\n    {\"name\": \"a\"\n     \"kind\": \"locate\"}\n  ]\n}", 4, "invalid JSON"},
		{"syntax: bad literal", "{\n  \"jobs\": [\n    {\"name\": tru}\n  ]\n}", 3, "invalid JSON"},
		{"syntax: unclosed", "{\n  \"jobs\": [\n    {\"name\": \"a\"}\n", 3, "end of file"},
		{"trailing text", "{\"jobs\": []}\n\nextra", 3, "after the end"},
		{"top level not an object", "\n[1]", 2, "must be an object"},
		{"unknown top-level field", "{\n  \"account\": \"LV100001\",\n  \"jobs\": []\n}", 2, `unknown field "account"`},
		{"no jobs", "{}", 1, `no "jobs"`},
		{"jobs empty", "{\n \"jobs\": []}", 2, "empty"},
		{"jobs not a list", "{\n \"jobs\": {}}", 2, "must be a list"},
		{"cron spec: minute 61", job(strings.Replace(loc, "0 0 9", "0 61 9", 1)), 5, "above maximum"},
		{"cron spec: five fields", job(strings.Replace(loc, "0 0 9 * * MON-FRI", "0 9 * * 1-5", 1)), 5, "seconds first"},
		{"cron spec: bad weekday", job(strings.Replace(loc, "MON-FRI", "MON-FRY", 1)), 5, "MON-FRY"},
		{"cron spec: never fires", job(strings.Replace(loc, "0 0 9 * * MON-FRI", "0 0 9 30 2 *", 1)), 5, "never fires"},
		{"cron spec: time zone prefix", job(strings.Replace(loc, "0 0 9", "TZ=UTC 0 0 9", 1)), 5, "America/New_York"},
		{"cron spec: not a string", job(strings.Replace(loc, `"0 0 9 * * MON-FRI"`, "9", 1)), 5, "schedule must be a string, not a number"},
		{"unknown kind", job(strings.Replace(loc, `"locate"`, `"borrow"`, 1)), 5, `unknown kind "borrow"`},
		{"no kind", job(strings.Replace(loc, `"kind": "locate", `, "", 1)), 4, `no "kind"`},
		{"no name", job(strings.Replace(loc, `"name": "w", `, "", 1)), 4, `no "name"`},
		{"name with a space", job(strings.Replace(loc, `"w"`, `"my job"`, 1)), 5, "letters, digits"},
		{"duplicate name", job(strings.Replace(loc, `"w"`, `"a"`, 1)), 4, `already used by the job on line 3`},
		{"duplicate key", job(loc + `, "quantity": 400`), 7, `"quantity" appears twice`},
		{"unknown field", job(loc + `,` + "\n" + `      "symbol": "HTBY"`), 8, `unknown field "symbol"`},
		{"field of another kind", job(loc + `, "grace": "1h"`), 7, `"grace" is not a field of a locate job`},
		{"quantity not a lot", job(strings.Replace(loc, "300", "250", 1)), 6, "multiple of 100"},
		{"quantity a string", job(strings.Replace(loc, "300", `"300"`, 1)), 6, "quantity must be a whole number of shares, not a string"},
		{"symbol twice in two cases", job(strings.Replace(loc, `["HTBX"]`, `["HTBX", "htbx"]`, 1)), 6, "HTBX is listed twice"},
		{"symbol not a ticker", job(strings.Replace(loc, `"HTBX"`, `"HT BX"`, 1)), 6, "not a ticker"},
		{"symbol twice", job(strings.Replace(loc, `["HTBX"]`, `["HTBX", "HTBX"]`, 1)), 6, "listed twice"},
		{"no symbols", job(strings.Replace(loc, `["HTBX"]`, `[]`, 1)), 6, "empty"},
		{"no policy", job(strings.Replace(loc, `,`+"\n"+`      "policy": {"maxPrice": 0.02}`, "", 1)), 4, "needs maxPrice or maxCost"},
		{"policy without a cap", job(strings.Replace(loc, `{"maxPrice": 0.02}`, `{"allowSingleUse": true}`, 1)), 7, "needs maxPrice or maxCost"},
		{"negative price", job(strings.Replace(loc, `0.02`, `-0.02`, 1)), 7, "positive amount"},
		{"unknown policy field", job(strings.Replace(loc, `"maxPrice"`, `"maxprice"`, 1)), 7, `unknown policy field "maxprice"`},
		{"days zero", job(`"name": "s", "kind": "ledger-sync", "schedule": "@hourly",` + "\n" + `"days": 0`), 6, "days 0"},
		{"grace not a duration", job(`"name": "r", "kind": "reconcile", "schedule": "@daily", "grace": "a day"`), 5, `grace "a day"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := jobs.ParseConfig([]byte(tc.in))
			var ce *jobs.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a *ConfigError", err, err)
			}
			if ce.Line != tc.line || !strings.Contains(ce.Msg, tc.want) {
				t.Errorf("got %q, want line %d with %q\n%s", err, tc.line, tc.want, numbered(tc.in))
			}
		})
	}
}

func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		fmt.Fprintf(&b, "%3d| %s\n", i+1, l)
	}
	return b.String()
}

// Schedules are values: "every second" steps through whole seconds, and a
// descriptor works too.
func TestScheduleNext(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 25, 15, 0, 0, 500_000_000, time.UTC)
	for _, tc := range []struct {
		spec string
		want []time.Time
	}{
		{"* * * * * *", []time.Time{start.Add(500 * time.Millisecond), start.Add(1500 * time.Millisecond), start.Add(2500 * time.Millisecond)}},
		{"@every 2s", []time.Time{start.Add(1500 * time.Millisecond), start.Add(3500 * time.Millisecond), start.Add(5500 * time.Millisecond)}},
		// start is Wednesday 10:00:00.5 in New York.
		{"30 0 10 * * WED", []time.Time{start.Add(29500 * time.Millisecond), start.Add(7*24*time.Hour + 29500*time.Millisecond), start.Add(14*24*time.Hour + 29500*time.Millisecond)}},
	} {
		s, err := jobs.ParseSchedule(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		var got []time.Time
		at := start
		for range tc.want {
			at = s.Next(at)
			got = append(got, at.UTC())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.spec, diff)
		}
	}
}
