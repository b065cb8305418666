package main

import (
	"encoding/csv"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/console"
)

// Every command × every format (-o table|json|csv): a
// format the command cannot print is refused while its flags are parsed
// (exit 2, a message naming what it prints, not one request to the broker,
// stdout empty); one it can print is taken, and prints JSON lines or one
// CSV document. Each command runs as its run below says; a command without
// a run here fails the test, so a new command is audited too.
func TestEveryCommandEveryFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs every command in every format (CI runs it)")
	}
	t.Parallel()
	b := setupCLI(t)
	// How each command runs here, and the exit it ends with once its format
	// is taken. long: it runs until stopped (it is stopped once it has
	// started, exit 130). A run that ends in 2 is refused for something
	// other than its format (no such workflow, no partner program set).
	runs := map[string]struct {
		args []string
		code int
		long string // what shows the command has started, on stderr or stdout
	}{
		"locate":           {args: []string{"locate", "HTBX", "100", "--max-price", "0.02"}},
		"quote":            {args: []string{"quote", "AAPL"}},
		"shortable":        {args: []string{"shortable", "HTBX"}},
		"short":            {args: []string{"short", "HTBX", "100", "--limit-price", "12.00", "--ref-price", "12.50", "--max-price", "0.02", "--yes"}},
		"offers":           {args: []string{"offers"}},
		"cover":            {args: []string{"cover", "HTBX", "100", "--limit-price", "13.00", "--yes"}},
		"credit-back":      {args: []string{"credit-back", "--all", "--yes"}},
		"approve":          {args: []string{"approve", "wf-none"}, code: console.ExitUsage},
		"decline":          {args: []string{"decline", "wf-none"}, code: console.ExitUsage},
		"cancel":           {args: []string{"cancel", "wf-none"}, code: console.ExitUsage},
		"mcp":              {args: []string{"mcp"}},
		"resume":           {args: []string{"resume"}},
		"status":           {args: []string{"status"}},
		"jobs":             {args: []string{"jobs"}},
		"inventory":        {args: []string{"inventory"}},
		"history":          {args: []string{"history"}},
		"fees":             {args: []string{"fees"}},
		"report":           {args: []string{"report"}},
		"audit":            {args: []string{"audit"}},
		"plan":             {args: []string{"plan", "--watchlist", "../../testdata/watchlist.csv"}},
		"size":             {args: []string{"size", "HTBX", "--price", "12.50"}},
		"accounts":         {args: []string{"accounts"}},
		"pnl":              {args: []string{"pnl"}},
		"positions":        {args: []string{"positions"}},
		"orders":           {args: []string{"orders"}},
		"routes":           {args: []string{"routes"}},
		"watch":            {args: []string{"watch", "orders"}, code: console.ExitInterrupted, long: "{"},
		"run":              {args: []string{"run", "--config", "../../testdata/jobs.json", "--once", "eod-credit-back"}},
		"serve":            {args: []string{"serve", "--listen", ""}, long: "serving LV100001"},
		"login":            {args: []string{"login", "--partner"}, code: console.ExitUsage},
		"owner-credential": {args: []string{"owner-credential", "desk-2", "--until", "2099-01-01T00:00:00Z"}},
		"logout":           {args: []string{"logout"}},
		"config":           {args: []string{"config"}},
		"version":          {args: []string{"version"}},
		"sim":              {args: []string{"sim"}},
		"demo":             {args: []string{"demo"}},
		"bench":            {args: []string{"bench"}},
		"states":           {args: []string{"states", "--kind", "locate"}},
	}
	commands := NewMain(io.Discard, io.Discard, func(string) string { return "" }).commands()
	// First every format a command does not print: refused, exit 2, with
	// no request to the broker. Before anything else runs, so that no
	// request of a command stopped earlier (a watch cancelled mid-read)
	// can reach the simulator while a refusal is counted.
	for _, sp := range commands {
		r, ok := runs[sp.name]
		if !ok {
			continue // reported below
		}
		for _, f := range console.Formats {
			if slices.Contains(sp.formats, f) {
				continue
			}
			args := append(slices.Clone(r.args), "-o", string(f))
			before := len(b.sim.Requests())
			code, out, errOut := b.MustRunMain(t, nil, args...)
			want := "this command prints " + strings.Join(formatNames(sp.formats), " or ") + ", not " + string(f)
			if sp.formats == nil {
				want = "unknown shorthand flag: 'o'" // no -o at all: it prints no records
			}
			if code != console.ExitUsage || out != "" || !strings.Contains(errOut, want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 with %q", args, code, out, errOut, want)
			}
			if n := len(b.sim.Requests()) - before; n != 0 {
				t.Errorf("%v: refused, yet %d requests reached the broker", args, n)
			}
		}
	}
	if code, _, errOut := b.MustRunMain(t, nil, "locate", "HTBX", "300", "--max-price", "0.02"); code != console.ExitOK {
		t.Fatalf("locate: exit %d\n%s", code, errOut)
	}
	for _, sp := range commands {
		r, ok := runs[sp.name]
		if !ok {
			t.Errorf("%s: no run in this test; add one", sp.name)
			continue
		}
		for _, f := range console.Formats {
			args := append(slices.Clone(r.args), "-o", string(f))
			if !slices.Contains(sp.formats, f) {
				continue // refused: checked above
			}
			var code int
			var out, errOut string
			if r.long == "" {
				code, out, errOut = b.MustRunMain(t, nil, args...)
			} else {
				p := b.startMain(t, args...)
				waitFor(t, sp.name+" started", func() bool { return strings.Contains(p.stderr.String()+p.stdout.String(), r.long) })
				code, out, errOut = p.stop(t), p.stdout.String(), p.stderr.String()
			}
			if code != r.code || strings.Contains(errOut, "this command prints") {
				t.Errorf("%v: exit %d, want %d\nstdout %s\nstderr %s", args, code, r.code, out, errOut)
				continue
			}
			switch f {
			case console.JSON:
				jsonLines(t, out)
			case console.CSV:
				rd := csv.NewReader(strings.NewReader(out))
				if _, err := rd.ReadAll(); err != nil {
					t.Errorf("%v: stdout is not one CSV document: %v\n%s", args, err, out)
				}
			}
		}
	}
	// orders' cancel prints how one order ended: a line or JSON, no CSV.
	before := len(b.writes())
	if code, out, errOut := b.MustRunMain(t, nil, "orders", "cancel", "co-1", "-o", "csv"); code != console.ExitUsage || out != "" || !strings.Contains(errOut, "-o csv: 'orders cancel' prints") {
		t.Errorf("orders cancel -o csv: exit %d, stdout %q, stderr %q; want 2", code, out, errOut)
	}
	if w := b.writes(); len(w) != before {
		t.Errorf("orders cancel -o csv: writes sent: %v", w[before:])
	}
}

// formatNames are the formats' names, as a command's refusal lists them.
func formatNames(fs []console.Format) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f))
	}
	return out
}
