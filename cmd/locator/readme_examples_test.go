package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
)

// readmeNotRun are the locator examples of the README and docs/ this test
// does not run, each with why and what runs it instead. An entry no page
// holds any longer fails the test, so the list stays true.
var readmeNotRun = map[string]string{
	"serve":                                  "owns the account until stopped: TestWriteNeedingAPersonRefusedWithoutATerminal and the owner tests run it",
	"watch pnl":                              "follows the P&L stream until Ctrl-C: TestWatchPnL runs it",
	"watch orders":                           "follows the portfolio stream until Ctrl-C: TestWatchOrders runs it",
	"login --partner":                        "waits for a person to sign in in a browser: TestLoginPartnerOverHTTP and TestBrowserPartnerLogin run it",
	"LOCATOR_AUTH=partner accounts":          "needs the tokens of login --partner: TestLoginPartnerOverHTTP runs it with them",
	"approve wf-1234abcd-5678":               "the id stands for a workflow whose offer waits on a person in another shell: accounttest's ApproveElsewhereWithdrawsQuestion answers the same way",
	"decline wf-1234abcd-5678":               "the id stands for a workflow whose offer waits on a person in another shell: TestAnswerFromAnotherShell runs it",
	"cancel wf-1234abcd-5678":                "the id stands for an unfinished workflow of another shell: TestAnswerFromAnotherShell runs it",
	"status wf-1234":                         "the id stands for one of the reader's workflows: TestLocateJSON runs status with a prefix",
	"status CLIENT_ORDER_ID":                 "the id stands for one of the reader's orders: TestStatusListsShortOrders runs status with one",
	"orders cancel CLIENT_ORDER_ID":          "the id stands for a working order locator placed: TestOrdersCancel runs it",
	"sim --addr 127.0.0.1:8700":              "serves until Ctrl-C: TestREADMESamples runs it to its ready line",
	"bench --mode days --days 1000 --ops 60": "runs for minutes: TestGeneratedDays runs 30 days of the same generator in CI, TestBenchDays the command",
	"bench --mode days --days 1000":          "runs for minutes: TestGeneratedDays runs 30 days of the same generator in CI, TestBenchDays the command",
	"LOCATOR_DB=$SERVER bench --mode fleet --accounts 1000 --key-pairs 500":                                                                            "needs a Postgres server and runs for minutes: TestFleetOnPostgres runs its harness at 8 accounts over 4 key pairs",
	"LOCATOR_DB=$SERVER bench --mode fleet --accounts 1000 --key-pairs 500 --idle 4m --parallel 100 --failover-signal both --trials 4":                 "needs a Postgres server and runs for minutes: TestFleetOnPostgres runs its harness, a failover included, at 8 accounts over 4 key pairs",
	"LOCATOR_DB=$SERVER bench --mode fleet --accounts 10000 --key-pairs 5000 --processes 4 --idle 1m --parallel 200 --failover-signal kill --trials 1": "needs a Postgres server and runs for many minutes: TestFleetOnPostgres runs its harness at 8 accounts over 4 key pairs",
	"bench --mode fleet --accounts 50 --key-pairs 1 --processes 1 --failover=false --idle 60s --parallel 50":                                           "runs for minutes: TestDeskOnOneKeyPair runs its harness at 20 accounts on one key pair",
	"bench --mode fleet --accounts 50 --key-pairs 1 --processes 1 --failover=false --idle 30s --parallel 10 --locating 10":                             "runs for minutes: TestDeskOnOneKeyPair runs its harness at 20 accounts on one key pair",
	"bench --mode fleet --accounts 50 --key-pairs 1 --processes 1 --failover=false --idle 30s --parallel 1 --locating 20":                              "runs for minutes: TestDeskOnOneKeyPair runs its harness at 20 accounts on one key pair",
}

// readmeShell are the other commands of the pages' shell blocks, by
// their first word, with why this test does not run them.
var readmeShell = map[string]string{
	"export":                    "the session's environment: TestREADMEExportsMatchTheSimulator checks its values",
	"go":                        "the project's own checks and benchmarks (go vet, go test, go test -bench): CI runs them",
	"CGO_ENABLED=0":             "the static build: TestDockerfile builds the binary the same way and runs it",
	"docker":                    "needs a Docker daemon: TestDockerfile checks the Dockerfile and runs its build",
	"sudo":                      "installs the systemd service on a machine (root): not in a test",
	"journalctl":                "reads the systemd service's log: not in a test",
	"H=(-H":                     "the curl sample: TestREADMESamples replays it",
	"curl":                      "the curl sample: TestREADMESamples replays it",
	"sleep":                     "the curl sample: TestREADMESamples replays it",
	"PYTHONPATH=clients/python": "the Python client's example: TestPythonClient (clients/python) runs it against locator sim and serve",
	"pip":                       "the Python client's install: TestPythonClient (clients/python) installs it the same way, with no index (--no-index), and imports it",
	"printf":                    "the curl example of the bearer door: TestBearerCurlExample (internal/service) runs it against an owner's TLS port",
}

// readmeExample is one command line of a shell block of a page.
type readmeExample struct {
	line int    // 1-based
	text string // the command, its comment and continuation joined
}

// readmeShellLines are the command lines of a page's ```sh blocks.
func readmeShellLines(lines []string) []readmeExample {
	var out []readmeExample
	in := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && l == "```sh"
			continue
		case !in || strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#"):
			continue
		}
		ex := readmeExample{line: i + 1, text: l}
		for strings.HasSuffix(strings.TrimSpace(ex.text), "\\") && i+1 < len(lines) {
			i++
			ex.text = strings.TrimSuffix(strings.TrimSpace(ex.text), "\\") + " " + strings.TrimSpace(lines[i])
		}
		out = append(out, ex)
	}
	return out
}

var readmeLocator = regexp.MustCompile(`^(?:(\S+=\S+) )?(?:go run \./cmd/locator|locator) (.*)$`)

// Every example of the shell blocks of the README and of the pages under
// docs/ (docPages) runs as written, from a working folder like a fresh
// clone's (its testdata/), in order (the README's, then each page's, as a
// reader who started with the README goes on), against the simulator the
// README starts and one database: each locator line exits 0 and a
// "> FILE" of a relative FILE is written (an absolute one, a system path,
// is not written here); the lines not run are listed above with why, and
// a line of neither list fails the test.
// Not parallel: the examples' relative paths need the working folder.
func TestREADMEExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs every example of the README and docs/ (CI runs it)")
	}
	testdata, err := filepath.Abs(filepath.Join(repoRoot, "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	// The pages are read before the working folder changes.
	names := docPages(t)
	pages := map[string][]readmeExample{}
	for _, page := range names {
		pages[page] = readmeShellLines(readPage(t, page))
	}
	dir := t.TempDir()
	if err := os.Symlink(testdata, filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	// A reader types the lines seconds apart: the simulator's 30-second
	// same-symbol spacing and 10-second credit clearing are shortened, or
	// the quote after the locates would wait out the spacing here.
	env := readmeEnv(t, func(sc *brokersim.Scenario) {
		sc.Timing.QuoteSpacing = brokersim.Duration(time.Second)
		sc.Timing.CreditClear = brokersim.Duration(500 * time.Millisecond)
	})
	env["XDG_CONFIG_HOME"] = t.TempDir() // never the settings file of whoever runs the tests
	seen := map[string]bool{}
	ran := 0
	for _, page := range names {
		for _, ex := range pages[page] {
			at := fmt.Sprintf("%s:%d", page, ex.line)
			command, _, _ := strings.Cut(ex.text, " #")
			m := readmeLocator.FindStringSubmatch(strings.TrimSpace(command))
			if m == nil {
				first, _, _ := strings.Cut(strings.TrimSpace(command), " ")
				if _, ok := readmeShell[first]; !ok {
					t.Errorf("%s: %q: neither a locator example nor a command this test knows why not to run (readmeShell)", at, ex.text)
				}
				continue
			}
			args, redirect := strings.Fields(m[2]), ""
			if i := strings.Index(m[2], ">"); i >= 0 {
				args, redirect = strings.Fields(m[2][:i]), strings.TrimSpace(m[2][i+1:])
			}
			key := strings.TrimSpace(m[1] + " " + strings.Join(args, " "))
			if _, ok := readmeNotRun[key]; ok {
				seen[key] = true
				continue
			}
			if m[1] != "" {
				t.Errorf("%s: %q: an environment prefix this test cannot give; list it in readmeNotRun", at, ex.text)
				continue
			}
			var stdout, stderr bytes.Buffer
			mm := NewMain(&stdout, &stderr, func(k string) string { return env[k] })
			mm.Stdin = strings.NewReader("")
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			code := mm.Run(ctx, args)
			cancel()
			ran++
			if code != 0 {
				t.Errorf("%s: locator %s: exit %d\nstdout %s\nstderr %s", at, key, code, stdout.String(), stderr.String())
				continue
			}
			if redirect != "" && !filepath.IsAbs(redirect) {
				if err := os.WriteFile(redirect, stdout.Bytes(), 0o600); err != nil || stdout.Len() == 0 {
					t.Errorf("%s: > %s: %d bytes, %v", at, redirect, stdout.Len(), err)
				}
			}
		}
	}
	for key := range readmeNotRun {
		if !seen[key] {
			t.Errorf("readmeNotRun lists %q, which neither the README nor a page of docs/ holds any longer", key)
		}
	}
	if ran < 20 {
		t.Errorf("ran %d examples of the README and docs/; the pages hold more", ran)
	}
}
