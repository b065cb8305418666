package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locatorhq/locator/brokersim"
)

// writesAfter counts the simulator's requests that change something
// (anything but a GET, and not its admin routes), from index from of its
// log on.
func (b *ownerBundle) writesAfter(t *testing.T, from int) []brokersim.RequestRecord {
	t.Helper()
	var out []brokersim.RequestRecord
	for _, r := range b.requests(t)[from:] {
		if r.Method != http.MethodGet && !strings.HasPrefix(r.Path, "/_sim/") {
			out = append(out, r)
		}
	}
	return out
}

// run runs the binary with extra environment and returns its exit code
// and combined output.
func (b *ownerBundle) run(t *testing.T, extra []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := b.command(ctx, args...)
	cmd.Env = append(cmd.Env, extra...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return code, string(out)
}

// With `locator serve` owning live account LV100001, a
// command that means paper is refused by the owner, exit 2, and nothing
// reaches the broker, as it is without serve.
func TestEnvGuardThroughTheOwner(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	for _, withServe := range []bool{true, false} {
		var serve *exec.Cmd
		if withServe {
			serve = b.serve(t)
		}
		for _, args := range [][]string{
			{"locate", "HTBX", "100", "--max-price", "0.02", "--env", "paper"},
			{"short", "HTBX", "100", "--limit-price", "19.00", "--ref-price", "12.50", "--max-price", "0.02", "--yes", "--env", "paper"},
		} {
			before := len(b.requests(t))
			code, out := b.run(t, nil, args...)
			// The same words whoever refuses: the owner's guard, or this
			// process's own start-up check.
			if want := "account LV100001 is live, but paper was selected; writes are blocked; nothing was sent"; code != 2 || !strings.Contains(out, want) {
				t.Errorf("serve %v, %v: exit %d, want 2 saying %q\n%s", withServe, args, code, want, out)
			}
			if w := b.writesAfter(t, before); len(w) != 0 {
				t.Errorf("serve %v, %v: %d writes reached the broker: %+v", withServe, args, len(w), w)
			}
		}
		if serve != nil { // the case without serve next: it gives the account up
			serve.Process.Signal(syscall.SIGTERM)
			// A daemon stopped by SIGTERM (systemd, docker) exits
			// 0, as run does; systemd reads anything else as failed.
			if err := serve.Wait(); err != nil {
				t.Errorf("serve after SIGTERM: %v, want exit 0", err)
			}
		}
	}
}

// Six `locate` processes started 0.4 to 1.5 s apart on
// one account and one database, with no serve: each in turn owns the
// account or follows whoever does, and is handed over when that one exits,
// its request intact. All exit 0; the broker sees no 429, no quote twice,
// and no symbol quoted beyond its largest request. LOCATOR_TRIALS sets
// how many trials run (3 by default; the issue asks 10 by hand).
func TestSixLocatesHandOver(t *testing.T) {
	t.Parallel()
	trials := 3
	if n, err := strconv.Atoi(os.Getenv("LOCATOR_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	b := setupOwners(t, 3)
	largest := map[string]int64{"HTBX": 500, "HTBY": 300, "OW00": 300, "OW01": 200, "OW02": 400}
	cmds := [][]string{
		{"locate", "HTBX", "500", "--max-price", "0.05"},
		{"locate", "HTBY", "300", "--yes"},
		{"locate", "HTBX", "300", "--max-price", "0.05"},
		{"locate", "OW00", "300", "--max-price", "0.05", "OW01", "200"},
		{"locate", "HTBY", "200", "--yes"},
		{"locate", "OW02", "400", "--max-price", "0.05"},
	}
	quoted := map[string]int64{}
	for trial := range trials {
		var wg sync.WaitGroup
		results := make([]string, len(cmds))
		for i, args := range cmds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, out := b.run(t, nil, args...)
				if code != 0 {
					results[i] = fmt.Sprintf("%v: exit %d\n%s", args, code, out)
				}
			}()
			time.Sleep(time.Duration(400+(i*211+trial*97)%1100) * time.Millisecond) // 0.4 to 1.5 s apart, as people start them
		}
		wg.Wait()
		for _, r := range results {
			if r != "" {
				t.Errorf("trial %d: %s", trial+1, r)
			}
		}
	}
	b.noBrokerTrouble(t)
	for _, r := range b.requests(t) {
		if r.Method == http.MethodPost && r.Path == "/v1/api/accounts/locates/quote" && r.Status == http.StatusOK {
			var q struct {
				Symbol   string `json:"symbol"`
				Quantity int64  `json:"quantity"`
			}
			if err := json.Unmarshal([]byte(r.Body), &q); err != nil {
				t.Fatal(err)
			}
			quoted[q.Symbol] += q.Quantity
		}
	}
	for sym, n := range quoted {
		if n > largest[sym] {
			t.Errorf("%s quoted %d shares in all, beyond its largest request %d", sym, n, largest[sym])
		}
	}
	b.workflows(t) // every one final
}

// idIn finds the workflow id a command printed for symbol.
func idIn(text, symbol string) string {
	m := regexp.MustCompile(symbol + ` (wf-[0-9a-f-]+)`).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// While one shell's locate waits at its prompt (a real
// pseudo-terminal), a person's `decline ID` or `cancel ID` from a second
// shell ends it: both exit 0 in the person's own words, with serve and
// without (then the asking shell owns the account and the second follows
// it).
func TestAnswerFromAnotherShell(t *testing.T) {
	t.Parallel()
	for _, withServe := range []bool{false, true} {
		for _, answer := range []string{"decline", "cancel"} {
			t.Run(fmt.Sprintf("%s serve=%v", answer, withServe), func(t *testing.T) {
				t.Parallel()
				b := setupOwnersAt(t, 0, personSpeed)
				if withServe {
					b.serve(t)
				}
				var stdout, stderr syncBuffer
				m := b.inProcess(&stdout, &stderr)
				m.Stdin = openTerminal(t)
				done := make(chan int, 1)
				go func() { done <- m.Run(t.Context(), []string{"locate", "HTBX", "300"}) }()
				// The prompt and the workflow's progress line come on two
				// streams from the owner: either may be printed first.
				waitFor(t, "the prompt and the workflow id", func() bool {
					return strings.Contains(stderr.String(), "Accept HTBX 300 shares") && idIn(stderr.String(), "HTBX") != ""
				})
				id := idIn(stderr.String(), "HTBX")
				if id == "" {
					t.Fatalf("no workflow id in\n%s", stderr.String())
				}
				code, out := b.run(t, nil, answer, id[:12]) // a unique prefix, as people copy it
				words := map[string]string{"decline": "declined by a person with 'locator decline'", "cancel": "canceled by a person with 'locator cancel'"}[answer]
				if code != 0 || !strings.Contains(out, words) {
					t.Errorf("%s: exit %d, want 0 with %q\n%s", answer, code, words, out)
				}
				select {
				case code := <-done:
					if code != 0 || !strings.Contains(stdout.String(), words) || !strings.Contains(stderr.String(), "answered elsewhere") {
						t.Errorf("the asking shell: exit %d, want 0 with %q and its prompt withdrawn\n%s\n%s", code, words, stdout.String(), stderr.String())
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("the asking shell did not end\n%s", stderr.String())
				}
				b.noBrokerTrouble(t)
			})
		}
	}
}

// A second database in the same folder for an account
// that is owned is refused, exit 2, naming the owner and its database, and
// the owner goes on serving as if nothing happened.
func TestSecondDatabaseNeverStopsTheOwner(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	serve := b.serve(t)
	before := len(b.requests(t))
	other := filepath.Join(b.dir, "other.db")
	code, out := b.run(t, []string{"LOCATOR_DB=" + other}, "locate", "AAPL", "100", "--yes")
	if code != 2 || !strings.Contains(out, "owned by pid") || !strings.Contains(out, b.db) {
		t.Errorf("second database: exit %d, want 2 naming the owner and %s\n%s", code, b.db, out)
	}
	if w := b.writesAfter(t, before); len(w) != 0 {
		t.Errorf("%d writes reached the broker: %+v", len(w), w)
	}
	// And a second database with a serve of its own: refused at start.
	code, out = b.run(t, []string{"LOCATOR_DB=" + other}, "serve", "--listen", "")
	if code != 2 {
		t.Errorf("second serve on another database: exit %d, want 2\n%s", code, out)
	}
	if err := serve.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("serve stopped: %v", err)
	}
	if code, out := b.run(t, nil, "locate", "HTBX", "100", "--max-price", "0.05"); code != 0 {
		t.Errorf("a locate through the owner afterwards: exit %d\n%s", code, out)
	}
}

// A watchlist on a terminal ends on the same
// final screen whether this process owns the account or `serve` does.
func TestBatchScreenSameWithAndWithoutServe(t *testing.T) {
	t.Parallel()
	screens := map[bool]string{}
	for _, withServe := range []bool{false, true} {
		b := setupOwners(t, 0)
		if withServe {
			b.serve(t)
		}
		term, screen := openTerminalPair(t)
		var stderr syncBuffer
		var seen syncBuffer
		go io.Copy(&seen, screen)
		m := b.inProcess(term, &stderr)
		code := m.Run(t.Context(), []string{"locate", "HTBX", "4000", "HTBY", "4500", "NOINV", "100", "AAPL", "100", "--max-price", "0.05"})
		if code != 3 { // NOINV is rejected by the broker: the batch's worst
			t.Errorf("serve %v: exit %d, want 3\n%s", withServe, code, stderr.String())
		}
		// The final screen: every row ended, the fills' details drawn (the
		// board's last redraw, from the final records).
		// (An earlier frame shows the accepts' details too, on rows still
		// accepting: the terminal's copy can lag the command's end.)
		waitFor(t, "the final screen", func() bool {
			f := lastFrame(seen.String())
			return strings.Contains(f, "not_needed") && strings.Contains(f, "rejected") && strings.Count(f, "accept ID at") == 2 &&
				strings.Contains(f, "HTBX 4000 filled") && strings.Contains(f, "HTBY 4500 filled")
		})
		screens[withServe] = lastFrame(seen.String())
	}
	if screens[false] != screens[true] {
		t.Errorf("final screens differ:\nwithout serve:\n%s\nwith serve:\n%s", screens[false], screens[true])
	}
	for _, want := range []string{"HTBX 4000 filled", "HTBY 4500 filled", "NOINV 100 rejected", "AAPL 100 not_needed"} {
		if !strings.Contains(screens[false], want) {
			t.Errorf("final screen lacks %q:\n%s", want, screens[false])
		}
	}
}

// quoteIDs matches the quote ids, which differ from run to run.
var quoteIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// lastFrame is the board's last drawing, one line per row, its columns
// single-spaced and its quote ids masked (the drawings are separated by
// the cursor moving up over the header and four rows).
func lastFrame(s string) string {
	s = quoteIDs.ReplaceAllString(s, "ID")
	frames := strings.Split(s, "\x1b[5A")
	var lines []string
	for _, l := range strings.Split(frames[len(frames)-1], "\n") {
		l = strings.ReplaceAll(strings.ReplaceAll(l, "\x1b[2K", ""), "\r", "")
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "\n")
}
