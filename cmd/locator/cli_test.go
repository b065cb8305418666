package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
)

// runBare runs the CLI with an empty environment: for what is decided
// before any broker or database is needed (parsing, help).
func runBare(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := NewMain(&stdout, &stderr, func(string) string { return "" })
	m.Stdin = strings.NewReader("")
	code := m.Run(t.Context(), args)
	return code, stdout.String(), stderr.String()
}

// Measured on main: these printed nothing at all. A flag
// error says what is wrong and how to get help, exit 2, nothing on stdout.
func TestFlagErrorsShowUsageHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		want, hint string
	}{
		{[]string{"locate", "HTBX", "100", "--max-prise", "0.02"}, "unknown flag: --max-prise\nDid you mean --max-price?", "Run 'locator locate --help' for usage."},
		{[]string{"locate", "HTBX", "100", "--max-price"}, "flag needs an argument: --max-price", "Run 'locator locate --help' for usage."},
		{[]string{"status", "--limit", "x"}, `invalid argument "x" for "--limit"`, "Run 'locator status --help' for usage."},
		{[]string{"fees", "--grace", "4d"}, `invalid argument "4d" for "--grace"`, "Run 'locator fees --help' for usage."},
		{[]string{"inventory", "-o", "xml"}, "want table, json or csv", "Run 'locator inventory --help' for usage."},
		{[]string{"--bogus"}, "unknown flag: --bogus", "Run 'locator --help' for usage."},
		// A negative quantity is not read as shorthand flags.
		{[]string{"locate", "HTBX", "-500"}, "locator locate: -500: a quantity, a price or a cap is a positive number; nothing was sent", "Run 'locator locate --help' for usage."},
		{[]string{"short", "HTBX", "-5.5", "--limit-price", "12", "--ref-price", "12.50"}, "-5.5: a quantity, a price or a cap is a positive number", "Run 'locator short --help' for usage."},
	} {
		code, out, errOut := runBare(t, tc.args...)
		if code != console.ExitUsage || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, tc.hint) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 with %q and %q", tc.args, code, out, errOut, tc.want, tc.hint)
		}
		if strings.Contains(errOut, "shorthand") || strings.Contains(errOut, "--db") {
			t.Errorf("%v: stderr %q speaks of flags", tc.args, errOut)
		}
	}
}

// A mistyped command gets the nearest names; no arguments prints the
// usage (exit 2: there is nothing to do).
func TestUnknownCommandAndNoArgs(t *testing.T) {
	t.Parallel()
	code, out, errOut := runBare(t, "locat", "HTBX", "100")
	if code != console.ExitUsage || out != "" || !strings.Contains(errOut, `unknown command "locat"`) || !strings.Contains(errOut, "Did you mean this?\n\tlocate") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for typed, want := range map[string]string{"staus": "status", "lcoate": "locate", "credit-bak": "credit-back"} {
		if code, _, errOut := runBare(t, typed); code != console.ExitUsage || !strings.Contains(errOut, "Did you mean this?") || !strings.Contains(errOut, "\t"+want+"\n") {
			t.Errorf("%s: exit %d, stderr %q, want the suggestion %s", typed, code, errOut, want)
		}
	}
	code, out, errOut = runBare(t)
	if code != console.ExitUsage || !strings.Contains(out, "Usage:") || !strings.Contains(out, "locate") || !strings.Contains(errOut, "no command") {
		t.Errorf("no args: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Every command's help is on stdout, exit 0, with its synopsis, a usage
// line naming its arguments, examples, and booleans shown as --json.
func TestHelpForEveryCommand(t *testing.T) {
	t.Parallel()
	m := NewMain(nil, nil, func(string) string { return "" })
	for _, sp := range m.commands() {
		synopsis := sp.short
		for _, args := range [][]string{{"help", sp.name}, {sp.name, "--help"}, {sp.name, "-h"}} {
			code, out, errOut := runBare(t, args...)
			if code != console.ExitOK || errOut != "" {
				t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
				continue
			}
			for _, want := range []string{synopsis, "Usage:\n  locator " + strings.TrimSpace(sp.name+" "+sp.args), "Examples:\n  locator " + sp.name, "-h, --help "} {
				if !strings.Contains(out, want) {
					t.Errorf("%v: help lacks %q:\n%s", args, want, out)
				}
			}
			if strings.Contains(out, "[=true|false]") {
				t.Errorf("%v: a boolean shows as [=true|false]:\n%s", args, out)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"completion", "--help"}, {"completion", "bash", "--help"}, {"help", "help"}} {
		code, out, _ := runBare(t, args...)
		if code != console.ExitOK || !strings.Contains(out, "Usage:") || strings.Contains(out, "[=true|false]") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	if _, out, _ := runBare(t, "--help"); !strings.Contains(out, "Locates and orders:") || !strings.Contains(out, "completion") {
		t.Errorf("--help:\n%s", out)
	}
}

// version prints the module version Go recorded, or the -X one.
func TestVersion(t *testing.T) {
	code, out, _ := runBare(t, "version")
	if code != console.ExitOK || !strings.HasPrefix(out, "locator ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("exit %d %q", code, out)
	}
	version = "v1.2.3" // as -ldflags "-X main.version=v1.2.3" sets it
	t.Cleanup(func() { version = "" })
	code, out, _ = runBare(t, "version", "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); code != console.ExitOK || err != nil || v["version"] != "v1.2.3" || v["go"] != runtime.Version() {
		t.Errorf("--json: exit %d %q %v", code, out, err)
	}
	// A build without a build time (go test, go run)
	// claims none; one the build command stamped shows it (the static
	// binary of TestDockerfile is stamped the Dockerfile's way).
	if _, ok := v["buildTime"]; ok || strings.Contains(out, "built") {
		t.Errorf("no build time was set, yet: %s", out)
	}
	buildTime = "2026-11-26T14:00:00Z" // as -ldflags "-X main.buildTime=..." sets it
	t.Cleanup(func() { buildTime = "" })
	if code, out, _ = runBare(t, "version"); code != console.ExitOK || !strings.Contains(out, "built 2026-11-26 09:00:00 ET") {
		t.Errorf("with a build time: exit %d %q", code, out)
	}
}

// completion prints cobra's script for each shell.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{"bash": "__start_locator", "zsh": "#compdef locator", "fish": "complete -c locator"} {
		code, out, errOut := runBare(t, "completion", shell)
		if code != console.ExitOK || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, stderr %q, script lacks %q", shell, code, errOut, want)
		}
	}
}

// Logs are quiet unless -v: the client's retries and the engine's steps are
// noise to a person waiting for an outcome.
func TestLogLevels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verbosity int
		on, off   slog.Level
	}{
		{0, slog.LevelError + 100, slog.LevelError},
		{1, slog.LevelInfo, slog.LevelDebug},
		{2, slog.LevelDebug, slog.LevelDebug - 100},
	} {
		c := connFlags{m: &Main{Stderr: &bytes.Buffer{}, verbosity: tc.verbosity}}
		log := c.logger()
		if tc.verbosity > 0 && !log.Enabled(t.Context(), tc.on) || log.Enabled(t.Context(), tc.off) {
			t.Errorf("-v × %d: %v on %v, %v on %v", tc.verbosity, log.Enabled(t.Context(), tc.on), tc.on, log.Enabled(t.Context(), tc.off), tc.off)
		}
	}
	b := setupCLI(t)
	code, _, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--max-price", "0.02")
	if code != console.ExitOK || strings.Contains(errOut, "level=") {
		t.Errorf("exit %d; a log line without -v:\n%s", code, errOut)
	}
	code, _, errOut = b.MustRunMain(t, nil, "-v", "credit-back", "HTBX", "100")
	if code != console.ExitOK || !strings.Contains(errOut, "level=INFO msg=workflow") {
		t.Errorf("-v: exit %d; no log of the engine's steps:\n%s", code, errOut)
	}
}

// csvRows parses stdout as one CSV document and checks its header.
func csvRows(t *testing.T, out string, header ...string) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(out))
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("not CSV (%v):\n%s", err, out)
	}
	for i, h := range header {
		if i >= len(rows[0]) || rows[0][i] != h {
			t.Fatalf("header %v, want it to start %v", rows[0], header)
		}
	}
	return rows[1:]
}

// One -o table|json|csv: the same records three ways; --json means -o
// json, fees' --csv -o csv.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--max-price", "0.02", "-o", "csv")
	if code != console.ExitOK {
		t.Fatalf("locate: exit %d\n%s", code, errOut)
	}
	if rows := csvRows(t, out, "ID", "SYMBOL", "STATE"); len(rows) != 1 || rows[0][1] != "HTBX" || rows[0][2] != "filled" {
		t.Errorf("locate -o csv: %v", rows)
	}
	for _, tc := range []struct {
		args   []string
		header []string
	}{
		{[]string{"inventory"}, []string{"SYMBOL", "TYPE"}},
		{[]string{"history"}, []string{"UPDATED", "QUOTE ID", "SYMBOL"}},
		{[]string{"status"}, []string{"ID", "CREATED"}},
		{[]string{"positions"}, []string{"POSITION ID"}},
		{[]string{"orders"}, []string{"START"}},
		{[]string{"routes"}, []string{"ROUTE"}},
		{[]string{"accounts"}, []string{"ACCOUNT"}},
		{[]string{"pnl"}, []string{"POSITION ID", "SYMBOL"}},
		{[]string{"size", "HTBX", "--price", "12.50"}, []string{"LIMIT", "SHARES"}},
		{[]string{"fees"}, []string{"date", "type", "symbol"}},
	} {
		code, out, errOut := b.MustRunMain(t, nil, append(tc.args, "-o", "csv")...)
		if code != console.ExitOK {
			t.Errorf("%v -o csv: exit %d\n%s", tc.args, code, errOut)
			continue
		}
		csvRows(t, out, tc.header...)
		code, out, _ = b.MustRunMain(t, nil, append(tc.args, "-o", "json")...)
		if code != console.ExitOK {
			t.Errorf("%v -o json: exit %d", tc.args, code)
		}
		jsonLines(t, out)
		code, table, _ := b.MustRunMain(t, nil, tc.args...)
		if code != console.ExitOK || table == out {
			t.Errorf("%v: exit %d, the table is the JSON", tc.args, code)
		}
	}
	code, out, _ = b.MustRunMain(t, nil, "inventory", "--json")
	if objs := jsonLines(t, out); code != console.ExitOK || len(objs) == 0 || objs[0]["symbol"] != "HTBX" {
		t.Errorf("inventory --json: exit %d %v", code, objs)
	}
	code, out, errOut = b.MustRunMain(t, nil, "fees", "--csv")
	if code != console.ExitOK || !strings.Contains(errOut, "deprecated") {
		t.Errorf("fees --csv: exit %d, stderr %q", code, errOut)
	}
	csvRows(t, out, "date", "type")
}

// short's limit price is --limit-price (status's --limit counts rows);
// --limit still works, with a notice.
func TestShortLimitPriceAlias(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, o, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit", "12.00", "--ref-price", "12.50", "--yes", "--max-price", "0.02")
	if code != console.ExitOK || o.LimitPrice != "12.00" || !strings.Contains(errOut, "--limit has been deprecated, use --limit-price") {
		t.Errorf("exit %d, %+v\n%s", code, o, errOut)
	}
	_, out, _ := runBare(t, "short", "--help")
	if !strings.Contains(out, "--limit-price") || strings.Contains(out, "--limit ") {
		t.Errorf("help shows the old name:\n%s", out)
	}
}

// locator jobs lists the recorded job runs: newest first, by job, as a
// table, JSON or CSV.
func TestJobsCommand(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	if code, _, errOut := b.MustRunMain(t, nil, "jobs"); code != console.ExitUsage || !strings.Contains(errOut, "no database") {
		t.Errorf("before any database: exit %d %q", code, errOut)
	}
	st, err := store.Open(t.Context(), b.env["LOCATOR_DB"], clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []struct{ name, detail string }{{"premarket", "HTBX filled"}, {"eod", "nothing to credit back"}, {"premarket", "HTBX covered"}} {
		r, err := st.StartJobRun(t.Context(), j.name, "locate", "LV100001")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.EndJobRun(t.Context(), r.ID, locator.JobOK, j.detail); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.StartJobRun(t.Context(), "eod", "credit-back-unused", "LV100001"); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := b.MustRunMain(t, nil, "jobs")
	if code != console.ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	wantLines(t, "jobs", out, "RUN  JOB", "4    eod", "3    premarket", "HTBX covered", "1    premarket")
	code, out, _ = b.MustRunMain(t, nil, "jobs", "--job", "premarket", "--limit", "1", "-o", "json")
	objs := jsonLines(t, out)
	if code != console.ExitOK || len(objs) != 1 || objs[0]["job"] != "premarket" || objs[0]["detail"] != "HTBX covered" || objs[0]["outcome"] != "ok" {
		t.Errorf("--job premarket --limit 1: exit %d %v", code, objs)
	}
	code, out, _ = b.MustRunMain(t, nil, "jobs", "-o", "csv")
	if rows := csvRows(t, out, "RUN", "JOB", "KIND"); code != console.ExitOK || len(rows) != 4 || rows[0][6] != "running" {
		t.Errorf("-o csv: exit %d %v", code, rows)
	}
	if code, _, _ := b.MustRunMain(t, nil, "jobs", "--limit", "0"); code != console.ExitUsage {
		t.Errorf("--limit 0: exit %d", code)
	}
}

// Exit 130 on interrupt, whatever the command: here each is cut off by the
// signal before the broker answered.
func TestInterruptExits130(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	var stdout, stderr bytes.Buffer
	m := NewMain(&stdout, &stderr, func(k string) string { return b.env[k] })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, args := range [][]string{{"inventory"}, {"accounts"}, {"fees"}, {"history"}, {"pnl"}, {"positions"}, {"orders"}, {"routes"},
		{"size", "HTBX", "--price", "12.50"}, {"locate", "HTBX", "100", "--yes"}, {"credit-back", "HTBX", "100"},
		{"short", "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--yes"}, {"resume"}, {"watch", "pnl"}, {"demo"}} {
		if code := m.Run(ctx, args); code != console.ExitInterrupted {
			t.Errorf("%v: exit %d, want 130\n%s", args, code, stderr.String())
		}
	}
}

// Without a terminal, a write that could need a person's answer
// (locate, short, a credit-back of the unused shares) and has neither --yes
// nor a cap is refused before
// anything is sent, exit 2, also while another process owns the account
// and would take the request.
func TestWriteNeedingAPersonRefusedWithoutATerminal(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	owner := b.startServe(t)
	// HTBX has unused shares to confirm; HTBY has none.
	if code, _, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "100", "--max-price", "0.02"); code != console.ExitOK {
		t.Fatalf("locate: exit %d\n%s", code, errOut)
	}
	for _, args := range [][]string{
		{"locate", "HTBY", "9000"},
		{"locate", "HTBY", "9000", "HTBX", "300"},
		{"short", "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50"},
		{"short", "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.02"},
		{"credit-back", "--all"},
		{"credit-back", "HTBX"},
	} {
		before, recorded := len(b.writes()), b.workflowCount(t)
		code, out, errOut := b.MustRunMain(t, nil, args...)
		if code != console.ExitUsage || out != "" || !strings.Contains(errOut, "nothing") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing sent", args, code, out, errOut)
		}
		if w := b.writes(); len(w) != before {
			t.Errorf("%v: writes sent: %v", args, w[before:])
		}
		if n := b.workflowCount(t); n != recorded {
			t.Errorf("%v: %d workflows recorded", args, n-recorded)
		}
	}
	// With nothing unused there is nothing to confirm: done, exit
	// 0, nothing sent (docs/operations.md, exit codes: "nothing unused to credit back").
	before := len(b.writes())
	if code, _, errOut := b.MustRunMain(t, nil, "credit-back", "HTBY"); code != console.ExitOK {
		t.Errorf("credit-back HTBY with nothing unused: exit %d, want 0\n%s", code, errOut)
	}
	if w := b.writes(); len(w) != before {
		t.Errorf("credit-back HTBY: writes sent: %v", w[before:])
	}
	if code := owner.stop(t); code != console.ExitOK {
		t.Errorf("serve: exit %d after SIGTERM, want 0 (a daemon's stop is its normal end)\n%s", code, owner.stderr)
	}
}

// An id that names no workflow is said in a person's words, not
// the store's ("store: workflow not found"), exit 2.
func TestUnknownWorkflowInPlainWords(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, cmd := range []string{"approve", "decline", "cancel"} {
		code, _, errOut := b.MustRunMain(t, nil, cmd, "wf-none")
		if code != console.ExitUsage || !strings.Contains(errOut, "no such workflow: wf-none") || strings.Contains(errOut, "store:") {
			t.Errorf("%s wf-none: exit %d, stderr %q; want 2 saying no such workflow", cmd, code, errOut)
		}
	}
}

// Status --limit N prints at most N rows, the newest of the
// workflows and orders together (it printed N of each), as a table and as
// JSON records.
func TestStatusLimitBoundsRows(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for range 2 { // each a locate (or its cover) and an order
		if code, o, errOut := b.shortJSON(t, nil, "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--yes", "--max-price", "0.02"); code != console.ExitOK {
			t.Fatalf("short: exit %d %+v\n%s", code, o, errOut)
		}
	}
	records := func(args ...string) []map[string]any {
		t.Helper()
		code, out, errOut := b.MustRunMain(t, nil, append([]string{"status", "-o", "json"}, args...)...)
		if code != console.ExitOK {
			t.Fatalf("status %v: exit %d\n%s", args, code, errOut)
		}
		var rows []map[string]any
		for _, o := range jsonLines(t, out) {
			if o["type"] == "workflow" || o["type"] == "order" {
				rows = append(rows, o)
			}
		}
		return rows
	}
	all := records()
	if len(all) < 4 {
		t.Fatalf("%d rows without --limit, want the 2 locates and 2 orders: %v", len(all), all)
	}
	limited := records("--limit", "3")
	if len(limited) != 3 {
		t.Fatalf("--limit 3: %d rows, want 3: %v", len(limited), limited)
	}
	for i := range limited {
		if fmt.Sprint(limited[i]) != fmt.Sprint(all[i]) {
			t.Errorf("--limit 3 row %d: %v, want the newest: %v", i, limited[i], all[i])
		}
	}
	code, out, _ := b.MustRunMain(t, nil, "status", "--limit", "3")
	var table []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "HTBX") {
			table = append(table, l)
		}
	}
	if code != console.ExitOK || len(table) != 3 {
		t.Errorf("status --limit 3: exit %d, %d rows, want 3:\n%s", code, len(table), out)
	}
}
