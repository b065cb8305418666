package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/console"
)

// A batch prints one outcome object per symbol at the end and exits with
// the worst outcome: here a policy decline (4) beside fills and a symbol
// that needs no locate.
func TestLocateManySymbolsJSON(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, out, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "AAPL", "100", "HTBY", "1000", "--max-price", "0.02", "--json")
	if code != console.ExitDeclined {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, console.ExitDeclined, out, errOut)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o console.OutcomeRecord
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if o.ID != "" && o.QuoteReqID != "" {
			got[o.Symbol] = o.State
		}
	}
	want := map[string]string{"HTBX": "filled", "AAPL": "not_needed", "HTBY": "declined"}
	for sym, st := range want {
		if got[sym] != st {
			t.Errorf("%s ended %q, want %q (all: %v)", sym, got[sym], st, got)
		}
	}
}

// A watchlist file gives the symbols, quantities and per-row price caps; a
// bad row refuses the whole list before anything is sent.
func TestLocateWatchlist(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "watch.csv")
	os.WriteFile(good, []byte("symbol,quantity,max price\n# pre-market names\nHTBX,200,0.02\nHTBY, 100, 0.05\n"), 0o600)
	code, out, errOut := b.MustRunMain(t, nil, "locate", "--watchlist", good)
	if code != 0 || strings.Count(out, ": filled") != 2 {
		t.Fatalf("exit %d, want 0 with two fills\nstdout %s\nstderr %s", code, out, errOut)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("HTBX,200\nHTBY,150\n"), 0o600)
	before := len(b.writes())
	code, _, errOut = b.MustRunMain(t, nil, "locate", "--watchlist", bad, "--yes")
	if code != console.ExitUsage || !strings.Contains(errOut, "line 2") {
		t.Errorf("bad watchlist: exit %d, want %d naming line 2\nstderr %s", code, console.ExitUsage, errOut)
	}
	if after := len(b.writes()); after != before {
		t.Errorf("%d writes sent for a bad watchlist", after-before)
	}
}

// Symbols a person types are accepted in any case and
// upper-cased (the broker matches them exactly, spec "Orders" rule 6), on
// the command line and in a watchlist: what reaches the broker and the
// records is HTBX, never htbx; what is not a ticker in any case is still
// refused, nothing sent.
func TestSymbolsInAnyCase(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	code, out, errOut := b.MustRunMain(t, nil, "locate", "htbx", "300", "--max-price", "0.02", "--json")
	if code != 0 || !strings.Contains(out, `"symbol":"HTBX"`) || !strings.Contains(out, `"state":"filled"`) {
		t.Fatalf("locate htbx: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	watch := filepath.Join(t.TempDir(), "watch.csv")
	os.WriteFile(watch, []byte("Htby,100,0.05\n"), 0o600)
	if code, out, errOut := b.MustRunMain(t, nil, "locate", "--watchlist", watch, "--json"); code != 0 || !strings.Contains(out, `"symbol":"HTBY"`) {
		t.Errorf("watchlist Htby: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if code, out, errOut := b.MustRunMain(t, nil, "size", "htbx", "--price", "12.50", "--json"); code != 0 || !strings.Contains(out, `"HTBX"`) {
		t.Errorf("size htbx: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	for _, r := range b.sim.Requests() {
		if strings.Contains(r.Path+r.Query+r.Body, "htbx") || strings.Contains(r.Path+r.Query+r.Body, "Htby") {
			t.Errorf("%s %s sent the symbol as typed: %s %s", r.Method, r.Path, r.Query, r.Body)
		}
	}
	before := len(b.writes())
	if code, _, errOut := b.MustRunMain(t, nil, "locate", "ht bx", "300", "--yes"); code != console.ExitUsage || !strings.Contains(errOut, "not a ticker") {
		t.Errorf("locate 'ht bx': exit %d, stderr %q; want 2, not a ticker", code, errOut)
	}
	if n := len(b.writes()) - before; n != 0 {
		t.Errorf("%d writes sent for a symbol that is not a ticker", n)
	}
}

// A batch's progress without a terminal (one line a change, on
// stderr) shows every change of every symbol once, the first symbols'
// included, though their first changes (AAPL's whole life: it needs no
// locate) come before the command follows them; whether this process owns
// the account or hands the batch to the owner over its socket.
func TestBatchProgressShowsEveryChange(t *testing.T) {
	t.Parallel()
	bothWays(t, testSpeed, func(t *testing.T, b *cliBundle) {
		code, out, errOut := b.MustRunMain(t, nil, "locate", "AAPL", "100", "HTBX", "300", "HTBY", "1000", "--max-price", "0.05")
		if code != console.ExitOK {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
		line := regexp.MustCompile(`(?m)^([A-Z]+) wf-[0-9a-f-]+: ([a-z_]+) → ([a-z_]+)`)
		got := map[string]int{}
		for _, m := range line.FindAllStringSubmatch(errOut, -1) {
			got[m[1]+" "+m[2]+" → "+m[3]]++
		}
		want := []string{"AAPL requested → not_needed"}
		for _, sym := range []string{"HTBX", "HTBY"} {
			want = append(want, sym+" requested → quoting", sym+" quoting → offered", sym+" offered → accepting", sym+" accepting → filled")
		}
		for _, w := range want {
			if got[w] != 1 {
				t.Errorf("%q shown %d times, want once\nstderr:\n%s", w, got[w], errOut)
			}
		}
		if len(got) != len(want) {
			t.Errorf("changes shown %v, want %v", got, want)
		}
	})
}
