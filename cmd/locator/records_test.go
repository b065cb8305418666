package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/config"
	"github.com/locatorhq/locator/internal/store"
)

// The commands that read the account's records give the same output
// through its live owner as with none to ask: after a short through
// locator (its locate and its order) and two job runs recorded, status
// (its list with the budget left, a workflow, an order), jobs, audit,
// plan and size run beside `locator serve` (through it; status's list and
// jobs are the database-wide reads of docs/design.md rule 3 either way),
// then, serve stopped, with no owner (their own reads on the database
// opened for reading). Each prints the same records both times, and every
// broker request made beside serve carries serve's pid, none a command's.
func TestRecordCommandsAloneAndBesideServe(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	b.env = append(b.env, config.BudgetEnv+"=20")
	serve := b.serve(t)
	if code, out := b.run(t, nil, "short", "HTBX", "300", "--limit-price", "12.40", "--ref-price", "12.50", "--max-price", "0.02", "--yes"); code != 0 {
		t.Fatalf("short: exit %d\n%s", code, out)
	}
	st, err := store.Open(t.Context(), b.db, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{"premarket", "eod"} {
		run, err := st.StartJobRun(t.Context(), job, "locate", "LV100001")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.EndJobRun(t.Context(), run.ID, locator.JobOK, job+" done"); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var locate, order string
	_, out := b.run(t, nil, "status", "-o", "json")
	for _, rec := range jsonLines(t, out) {
		switch rec["type"] {
		case "workflow":
			locate, _ = rec["id"].(string)
		case "order":
			order, _ = rec["clientOrderId"].(string)
		}
	}
	if locate == "" || order == "" {
		t.Fatalf("status lists no workflow or no order:\n%s", out)
	}
	watch := writeFile(t, "watchlist.csv", "symbol,quantity\nHTBX,100\n")
	commands := [][]string{
		{"status", "-o", "json"},
		{"status", locate, "-o", "json"},
		{"status", order, "-o", "json"},
		{"jobs", "-o", "json"},
		{"audit", "-o", "json"},
		{"plan", "--watchlist", watch, "-o", "json"},
		{"size", "HTBX", "--price", "12.50", "--target", "1000", "-o", "json"},
	}
	from := len(b.requests(t))
	beside := b.recordOutputs(t, commands)
	sent := b.requests(t)[from:]
	// Stopped, serve gives the account up: the commands find no owner.
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve stopped: %v", err)
	}
	alone := b.recordOutputs(t, commands)
	for i, args := range commands {
		if alone[i] != beside[i] {
			t.Errorf("%v with no owner:\n%s\nbeside serve:\n%s", args, alone[i], beside[i])
		}
	}
	if !strings.Contains(alone[0], `"type":"budget"`) || !strings.Contains(alone[0], `"left":"15.50"`) {
		t.Errorf("status shows no budget left of 20.00 less the locate's 4.50:\n%s", alone[0])
	}
	pid, reads := fmt.Sprintf("(pid %d)", serve.Process.Pid), 0
	for _, r := range sent {
		if !strings.Contains(r.UserAgent, pid) {
			t.Errorf("%s %s sent by %q beside serve %s", r.Method, r.Path, r.UserAgent, pid)
		}
		if r.Method != http.MethodGet {
			t.Errorf("%s %s sent while only reads ran", r.Method, r.Path)
		}
		if strings.HasSuffix(r.Path, "/orders") || strings.HasSuffix(r.Path, "/positions") {
			reads++
		}
	}
	if reads == 0 {
		t.Error("no read of the order book or the positions reached the broker beside serve: audit and size read nothing")
	}
}

// recordOutputs runs each command (exit 0 wanted) and returns its output:
// status's list without its owners' and standbys' lines, which tell who
// runs now.
func (b *ownerBundle) recordOutputs(t *testing.T, commands [][]string) []string {
	t.Helper()
	var outs []string
	for _, args := range commands {
		code, out := b.run(t, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		var kept []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var rec struct{ Type string }
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "owner" && rec.Type != "standby" {
				kept = append(kept, line)
			}
		}
		outs = append(outs, strings.Join(kept, "\n"))
	}
	return outs
}
