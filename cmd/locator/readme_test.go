package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/clock"
)

// The samples of the README and of the pages under docs/ (docPages) are
// produced by the current code. A sample is a fenced block right after a
// marker comment:
//
//	<!-- sample: console -->        a terminal session: each "$ locator ARGS"
//	                                (or "$ go run ./cmd/locator ARGS") line is
//	                                run through Main.Run, in order, against one
//	                                default simulator and one database; the
//	                                lines up to the next "$" are its output
//	                                (stdout and stderr as they interleave)
//	<!-- sample: file PATH -->      the block is the file PATH (from the
//	                                repository's root), byte for byte
//	<!-- sample: curl -->           shell lines of curl calls to the simulator
//	                                on a fake clock ("sleep N" moves it); a
//	                                "# BODY" line after a call is its answer,
//	                                "..." standing for what is left out
//
// The unmarked ```sh blocks' examples are run by TestREADMEExamplesRun
// (readme_examples_test.go), or listed there with why not.
//
// `go test ./cmd/locator -run TestREADMESamples -update` (or UPDATE_GOLDEN=1)
// rewrites the console and file blocks from what the code prints now (a
// console block that differs only in what normalizeSample masks is left as
// it is); a curl block, with its elisions, is only checked.
var readmeUpdate = flag.Bool("update", false, "rewrite the samples of the README and docs/, and docs/cli, from the current output")

// repoRoot is the repository's root from this package's folder.
const repoRoot = "../.."

// docPages are the pages whose commands are tested, as paths from the
// repository's root: the README and every page of docs/. Not docs/cli,
// which TestCLIReference generates from the command tree. A page with no
// marked sample, sh block or export (docs/design.md, docs/broker.md)
// passes as it is.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// readPage is a page's lines; page is a path from the repository's root.
func readPage(t *testing.T, page string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(raw), "\n")
}

// readmeSample is one marked block of a page.
type readmeSample struct {
	page       string // README.md, docs/trading.md, ...
	kind, arg  string // "console", ""; "file", PATH
	line       int    // 1-based line of the marker, for messages
	start, end int    // the block's body is lines[start:end]
}

// at is where the sample is, for messages: "docs/trading.md:12".
func (s readmeSample) at() string { return fmt.Sprintf("%s:%d", s.page, s.line) }

var sampleMarker = regexp.MustCompile(`^<!-- sample: (console|file|curl)\s*(\S*) -->$`)

// readmeSamples finds the marked blocks of a page's lines.
func readmeSamples(t *testing.T, page string, lines []string) []readmeSample {
	t.Helper()
	var out []readmeSample
	for i, l := range lines {
		m := sampleMarker.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(l, "<!-- sample:") {
				t.Errorf("%s:%d: marker %q: want <!-- sample: console -->, <!-- sample: file PATH --> or <!-- sample: curl -->", page, i+1, l)
			}
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Errorf("%s:%d: the marker is not followed by a fenced block", page, i+1)
			continue
		}
		end := slices.Index(lines[i+2:], "```")
		if end < 0 {
			t.Errorf("%s:%d: the block never closes", page, i+1)
			continue
		}
		out = append(out, readmeSample{page: page, kind: m[1], arg: m[2], line: i + 1, start: i + 2, end: i + 2 + end})
	}
	return out
}

// sampleNoise is what differs from run to run and is not the point of a
// sample: workflow ids, client ids, the seconds left in an offer window,
// dates and New York times of day (the session runs on today's), the
// process and host a request came from (status's "ASKED BY", pid@host),
// and padding: at the ends of lines, and between a table's columns, whose
// widths follow what was masked (a table pads its columns with two spaces
// or more).
var sampleNoise = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`wf-[0-9a-f]{8}-[0-9a-f]{4}`), "wf-ID"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UUID"},
	{regexp.MustCompile(`\b\d+s left\b`), "Ns left"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`), "DATE"},
	{regexp.MustCompile(`\b\d{2}:\d{2}:\d{2} ET\b`), "TIME ET"},
	{regexp.MustCompile(`\b\d+@[A-Za-z0-9._-]+ `), "PID@HOST "},
	{regexp.MustCompile(`[ \t]+\n`), "\n"},
	{regexp.MustCompile(`  +`), "  "},
}

func normalizeSample(s string) string {
	for _, n := range sampleNoise {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return strings.TrimRight(s, "\n")
}

// logLine is a log record on stderr: not part of any sample.
var logLine = regexp.MustCompile(`(?m)^time=\S+ level=.*\n`)

// TestREADMESamples checks (or, with -update, rewrites) every marked sample
// of the README and of the pages under docs/.
func TestREADMESamples(t *testing.T) {
	t.Parallel()
	rewrite := *readmeUpdate || os.Getenv("UPDATE_GOLDEN") == "1"
	type page struct {
		name    string
		lines   []string
		samples []readmeSample
		bodies  []string
	}
	var pages []*page
	total := 0
	for _, name := range docPages(t) {
		lines := readPage(t, name)
		p := &page{name: name, lines: lines, samples: readmeSamples(t, name, lines)}
		p.bodies = make([]string, len(p.samples))
		pages = append(pages, p)
		total += len(p.samples)
	}
	if total < 4 {
		t.Fatalf("the README and docs/ have %d marked samples; want the simulator's ready line, the first trading day, the job config and the curl session at least", total)
	}
	var wg sync.WaitGroup
	for _, p := range pages {
		for i, s := range p.samples {
			wg.Go(func() {
				want := strings.Join(p.lines[s.start:s.end], "\n")
				p.bodies[i] = want
				switch s.kind {
				case "file":
					got, err := os.ReadFile(filepath.Join(repoRoot, s.arg))
					if err != nil {
						t.Errorf("%s: %v", s.at(), err)
						return
					}
					p.bodies[i] = strings.TrimSuffix(string(got), "\n")
					if !rewrite && p.bodies[i] != want {
						t.Errorf("%s: the block is not %s (-page +file):\n%s", s.at(), s.arg, cmp.Diff(want, p.bodies[i]))
					}
				case "curl":
					checkCurlSample(t, s, want)
				case "console":
					got := readmeSession(t, s, want)
					diff := cmp.Diff(normalizeSample(want), normalizeSample(got))
					if diff != "" && !rewrite {
						t.Errorf("%s: the session prints something else now (-page +current; ids, dates and seconds left are masked); -update rewrites it:\n%s", s.at(), diff)
					}
					if diff != "" {
						p.bodies[i] = got
					}
				}
			})
		}
	}
	wg.Wait()
	if !rewrite || t.Failed() {
		return
	}
	for _, p := range pages {
		var out []string
		prev := 0
		for i, s := range p.samples {
			out = append(out, p.lines[prev:s.start]...)
			out = append(out, p.bodies[i])
			prev = s.end
		}
		out = append(out, p.lines[prev:]...)
		text := strings.Join(out, "\n")
		if text == strings.Join(p.lines, "\n") {
			continue
		}
		if err := os.WriteFile(filepath.Join(repoRoot, p.name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the samples of %s", p.name)
	}
}

// sampleCommand is one "$ ..." line of a console sample.
type sampleCommand struct {
	prompt string // the line as written, "$ locator size ..."
	args   []string
	output string // the lines after it in the README
}

var commandPrefixes = []string{"$ locator ", "$ go run ./cmd/locator "}

func readmeParseSession(t *testing.T, s readmeSample, body string) []sampleCommand {
	t.Helper()
	var cmds []sampleCommand
	for l := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(l, "$ ") {
			var args []string
			for _, p := range commandPrefixes {
				if rest, ok := strings.CutPrefix(l, p); ok {
					args = strings.Fields(rest)
				}
			}
			if args == nil {
				t.Fatalf("%s: %q: a sample runs locator (%q)", s.at(), l, commandPrefixes)
			}
			cmds = append(cmds, sampleCommand{prompt: l, args: args})
			continue
		}
		if len(cmds) == 0 {
			t.Fatalf("%s: output before the first command", s.at())
		}
		cmds[len(cmds)-1].output += l + "\n"
	}
	return cmds
}

// readmeSession runs a console sample's commands in order, each on a fresh
// Main sharing one simulator and database, and returns the block as the
// code prints it now.
func readmeSession(t *testing.T, s readmeSample, body string) string {
	env := readmeEnv(t)
	var out strings.Builder
	for i, c := range readmeParseSession(t, s, body) {
		if i > 0 {
			out.WriteString("\n")
		}
		out.WriteString(c.prompt + "\n")
		var got string
		if c.args[0] == "sim" {
			got = readmeSim(t, c.args)
		} else {
			got = readmeRun(t, env, c.args)
		}
		out.WriteString(strings.TrimRight(regexp.MustCompile(`[ \t]+\n`).ReplaceAllString(got, "\n"), "\n") + "\n")
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// readmeEnv is what a reader exports after starting `locator sim`: the
// default scenario, its first live key and account, on a test clock shared
// with the commands (testClock, as setupCLI's). The
// one difference from `locator sim`'s timing: the locate fee is posted to
// the ledger a millisecond after the fill instead of 5 s (a reader takes longer
// than that to type the next command), so the session needs no sleep;
// tune changes the scenario further.
func readmeEnv(t *testing.T, tune ...func(*brokersim.Scenario)) map[string]string {
	t.Helper()
	sc := brokersim.DefaultScenario()
	sc.Timing.SettleMin = brokersim.Duration(100 * time.Millisecond)
	sc.Timing.SettleMax = brokersim.Duration(200 * time.Millisecond)
	sc.Timing.FeeDelay = brokersim.Duration(time.Millisecond)
	for _, f := range tune {
		f(&sc)
	}
	clk, setting := testClock(testStart, testSpeed)
	sim, err := brokersim.New(sc, brokersim.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return map[string]string{
		"LOCATOR_BASE_URL": srv.URL, "LOCATOR_KEY_ID": "SIMLIVEKEY01", "LOCATOR_SECRET": "sim-live-secret-01",
		"LOCATOR_ACCOUNT": "LV100001", "LOCATOR_DB": filepath.Join(t.TempDir(), "locator.db"),
		clock.SettingEnv: setting,
	}
}

func readmeRun(t *testing.T, env map[string]string, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var w syncBuffer // stdout and stderr in the order written, as a terminal shows them
	m := NewMain(&w, &w, func(k string) string { return env[k] })
	m.Stdin = strings.NewReader("")
	if code := m.Run(ctx, args); code != 0 {
		t.Errorf("locator %s: exit %d\n%s", strings.Join(args, " "), code, w.String())
	}
	return logLine.ReplaceAllString(w.String(), "")
}

// readmeSim runs `locator sim` until its ready line, then stops it, as Ctrl-C
// does. It listens on a free port and prints the address the sample asked for.
func readmeSim(t *testing.T, args []string) string {
	t.Helper()
	asked := ""
	run := slices.Clone(args)
	for i, a := range run {
		if a == "--addr" && i+1 < len(run) {
			asked, run[i+1] = run[i+1], "127.0.0.1:0"
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var w syncBuffer // stdout and stderr in the order written, as a terminal shows them
	done := make(chan int, 1)
	go func() { done <- NewMain(&w, &w, func(string) string { return "" }).Run(ctx, run) }()
	for !strings.Contains(w.String(), "\n") {
		select {
		case code := <-done:
			t.Fatalf("locator sim exited %d before its ready line: %s", code, w.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("locator sim: exit %d on interrupt", code)
	}
	line, _, _ := strings.Cut(w.String(), "\n")
	var ready brokersim.Ready
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatalf("ready line %q: %v", line, err)
	}
	if asked != "" {
		line = strings.ReplaceAll(line, strings.TrimPrefix(ready.BaseURL, "http://"), asked)
	}
	return line + "\n"
}

// The exports of the README and of the pages under docs/ are what
// `locator sim` prints: the address, a key pair with one of its accounts,
// and the partner program's values.
func TestREADMEExportsMatchTheSimulator(t *testing.T) {
	t.Parallel()
	line := readmeSim(t, []string{"sim", "--addr", "127.0.0.1:8700"})
	var ready brokersim.Ready
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatal(err)
	}
	keys := map[string]brokersim.ReadyKey{}
	for _, k := range ready.Keys {
		keys[k.KeyID] = k
	}
	exportLine := regexp.MustCompile(`^export (.*?)(\s+#.*)?$`)
	type value struct{ at, v string }
	baseURLs, keyIDs := 0, 0
	for _, page := range docPages(t) {
		// A page's exports are one session: its key ids' secrets and
		// accounts are checked against its own key ids.
		env := map[string][]value{}
		for n, l := range readPage(t, page) {
			e := exportLine.FindStringSubmatch(l)
			if e == nil {
				continue
			}
			at := fmt.Sprintf("%s:%d", page, n+1)
			for _, kv := range strings.Fields(e[1]) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Errorf("%s: export %q: want NAME=value", at, kv)
					continue
				}
				env[k] = append(env[k], value{at, v})
			}
		}
		check := func(name string, ok func(v string) bool) {
			for _, v := range env[name] {
				if !ok(v.v) {
					t.Errorf("%s: export %s=%s is not what `locator sim` prints:\n%s", v.at, name, v.v, line)
				}
			}
		}
		check("LOCATOR_BASE_URL", func(v string) bool { return v == ready.BaseURL })
		for _, id := range env["LOCATOR_KEY_ID"] {
			k, ok := keys[id.v]
			if !ok {
				t.Errorf("%s: LOCATOR_KEY_ID=%s is not a key of the simulator", id.at, id.v)
				continue
			}
			check("LOCATOR_SECRET", func(v string) bool { return v == k.Secret })
			check("LOCATOR_ACCOUNT", func(v string) bool { return slices.Contains(k.Accounts, v) })
		}
		if p := ready.Partner; p != nil {
			check("LOCATOR_LOGIN_URL", func(v string) bool { return v == p.LoginURL })
			check("LOCATOR_CLIENT_ID", func(v string) bool { return v == p.LiveClientID || v == p.DemoClientID })
			check("LOCATOR_CLIENT_SECRET", func(v string) bool { return v == p.ClientSecret })
			check("LOCATOR_REDIRECT_URI", func(v string) bool { return v == p.RedirectURI })
		}
		baseURLs += len(env["LOCATOR_BASE_URL"])
		keyIDs += len(env["LOCATOR_KEY_ID"])
	}
	if baseURLs == 0 || keyIDs == 0 {
		t.Error("neither the README nor a page of docs/ exports LOCATOR_BASE_URL and LOCATOR_KEY_ID")
	}
}

// The daemon's job config (testdata/jobs.json, which TestREADMESamples
// keeps equal to docs/operations.md's block) runs on the default simulator: every
// job once, each exiting 0, the Reg SHO symbol filled on its SingleUse side.
func TestREADMEJobConfigRuns(t *testing.T) {
	t.Parallel()
	env := readmeEnv(t)
	// On an exchange holiday (today may be one) every job would be skipped,
	// as it should: the copy run here keeps its holiday runs, and a session
	// schedule (a holiday has no session) becomes a cron one of any day.
	data, err := os.ReadFile("../../testdata/jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	var file map[string][]map[string]any
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	for _, j := range file["jobs"] {
		j["holidays"] = "run"
		if strings.HasPrefix(j["schedule"].(string), "@") {
			j["schedule"] = "0 45 15 * * *"
		}
	}
	data, _ = json.Marshal(file)
	config := writeFile(t, "jobs.json", string(data))
	for _, tc := range []struct {
		job   string
		wants []string
	}{
		{"premarket-locates", []string{"HTBX filled 1000 @ 0.0150", "RSHO filled 1000 @ 0.0400"}},
		{"eod-credit-back", []string{"HTBX Locate credited 1000", "RSHO SingleUse credited 1000"}},
		{"ledger", []string{"ledger ok"}},
		{"fees", []string{"0 missing, 0 wrong amount, 0 unexplained"}},
	} {
		out := readmeRun(t, env, []string{"run", "--config", config, "--once", tc.job})
		for _, want := range tc.wants {
			if !strings.Contains(out, want) {
				t.Errorf("run --once %s: %q not in\n%s", tc.job, want, out)
			}
		}
	}
}

// The watchlist examples (docs/operations.md, docs/trading.md) run as written, on the
// file they name (testdata/watchlist.csv): each row filled within its cap
// (RSHO on its SingleUse side under the command's cap), then shortable and
// plan read the same file.
func TestREADMEWatchlistRuns(t *testing.T) {
	t.Parallel()
	env := readmeEnv(t)
	list := "../../testdata/watchlist.csv"
	out := readmeRun(t, env, []string{"locate", "--watchlist", list, "--allow-single-use", "--max-price", "0.05"})
	for _, want := range []string{"HTBX", "HTBY", "RSHO"} {
		if !regexp.MustCompile(want + ` wf-\S+: filled`).MatchString(out) {
			t.Errorf("locate --watchlist: %s not filled in\n%s", want, out)
		}
	}
	if !strings.Contains(out, "(SingleUse)") {
		t.Errorf("RSHO not taken on its SingleUse side:\n%s", out)
	}
	for _, args := range [][]string{{"shortable", "--watchlist", list}, {"plan", "--watchlist", list, "--days", "10"}} {
		if out := readmeRun(t, env, args); !strings.Contains(out, "RSHO") {
			t.Errorf("locator %s: RSHO missing\n%s", strings.Join(args, " "), out)
		}
	}
}

// shellWords splits a shell line into words: quotes group and are removed,
// ";" ends a command. Enough for the curl lines of docs/simulator.md.
func shellWords(line string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	quote := rune(0)
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == ';':
			flush()
			cmds = append(cmds, words)
			words = nil
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return append(cmds, words)
}

// checkCurlSample replays a curl sample against the default simulator on a
// fake clock and checks each shown answer.
func checkCurlSample(t *testing.T, s readmeSample, body string) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)) // a Wednesday, 10:00 in New York
	sim, err := brokersim.New(brokersim.DefaultScenario(), brokersim.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	defer srv.Close()
	header := http.Header{}
	var last string // the latest answer
	calls, checked := 0, 0
	lines := strings.Split(strings.ReplaceAll(body, "\\\n", " "), "\n")
	for n, l := range lines {
		at := fmt.Sprintf("%s: sample line %d", s.at(), n+1)
		if expect, ok := strings.CutPrefix(l, "# "); ok {
			pattern := "^" + strings.Join(strings.Split(regexp.QuoteMeta(expect), `\.\.\.`), ".*") + "$"
			pattern = regexp.MustCompile(`\s*\.\*\s*`).ReplaceAllString(pattern, ".*")
			if !regexp.MustCompile(pattern).MatchString(last) {
				t.Errorf("%s: the simulator answered\n%s\nnot\n%s", at, last, expect)
			}
			checked++
			continue
		}
		if h, ok := strings.CutPrefix(l, "H=("); ok {
			words := shellWords(strings.TrimSuffix(h, ")"))[0]
			for i := 0; i+1 < len(words); i += 2 {
				k, v, _ := strings.Cut(words[i+1], ": ")
				header.Set(k, v)
			}
			continue
		}
		for _, words := range shellWords(l) {
			if len(words) == 0 {
				continue
			}
			switch words[0] {
			case "sleep":
				d, err := time.ParseDuration(words[1] + "s")
				if err != nil {
					t.Fatalf("%s: %v", at, err)
				}
				clk.Advance(d)
			case "curl":
				method, url, reqBody := "GET", "", ""
				for i := 1; i < len(words); i++ {
					switch w := words[i]; {
					case w == "-X":
						i++
						method = words[i]
					case w == "-d":
						i++
						reqBody = words[i]
					case strings.HasPrefix(w, "localhost:8700/"):
						url = srv.URL + strings.TrimPrefix(w, "localhost:8700")
					}
				}
				if url == "" {
					t.Fatalf("%s: no localhost:8700 address in %q", at, words)
				}
				req, err := http.NewRequest(method, url, strings.NewReader(reqBody))
				if err != nil {
					t.Fatal(err)
				}
				req.Header = header.Clone()
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				last = strings.TrimSpace(string(b))
				calls++
			default:
				t.Fatalf("%s: %q: a curl sample has H=(...), curl, sleep and # lines", at, words[0])
			}
		}
	}
	if calls == 0 || checked == 0 {
		t.Errorf("%s: a curl sample with %d calls and %d answers shown", s.at(), calls, checked)
	}
}
