package connect_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/connect"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/simtest"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// env is the environment a desk exports for the simulator's live account.
func env(t *testing.T, sim *simtest.Bundle) map[string]string {
	t.Helper()
	run, err := os.MkdirTemp("", "lc") // short: the owner's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	return map[string]string{
		"LOCATOR_BASE_URL": sim.URL, "LOCATOR_KEY_ID": sim.Live.ID, "LOCATOR_SECRET": sim.Live.Secret,
		"LOCATOR_ACCOUNT": "LV100001", "LOCATOR_DB": filepath.Join(t.TempDir(), "locator.db"),
		"XDG_RUNTIME_DIR": run, "XDG_CONFIG_HOME": t.TempDir(), // never the settings file of whoever runs the tests
	}
}

func options(sim *simtest.Bundle, vars map[string]string, name string) connect.Options {
	return connect.Options{Getenv: func(k string) string { return vars[k] }, Name: name, Clock: sim.Clock, HTTPClient: sim.HTTPClient()}
}

// located locates qty of sym under a cap of 0.05 through a and follows it
// to its end.
func located(t *testing.T, a account.Account, sym string, qty int64) *workflow.Workflow {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := a.Locate(ctx, account.LocateRequest{Items: []account.LocateItem{{Symbol: sym, Quantity: qty,
		Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05")}}}})
	if err != nil || res.Err() != nil {
		t.Fatalf("locate %s: %v %v", sym, err, res)
	}
	w, err := a.Follow(ctx, account.FollowRequest{ID: res.Started[0].ID}, nil)
	if err != nil {
		t.Fatalf("follow %s: %v", sym, err)
	}
	return w
}

// quotes are the locate quotes the simulator was sent, by symbol, each
// with the User-Agent it came with.
func quotes(sim *simtest.Bundle) map[string]string {
	out := map[string]string{}
	for _, r := range sim.Sim.Requests() {
		if r.Method == "POST" && r.Path == "/v1/api/accounts/locates/quote" {
			for _, sym := range []string{"HTBX", "HTBY"} {
				if strings.Contains(r.Body, `"`+sym+`"`) {
					out[sym] = r.UserAgent
				}
			}
		}
	}
	return out
}

// Open as the command opens: from the LOCATOR_* variables, the first
// process owns the account (nobody did) and locates under a cap on its own
// client; a second process, opened while the first runs, follows it and
// its locate is carried out by the owner, so the simulator's log holds
// both quotes under this process's User-Agent (service.UserAgent) and an
// accept of each, filled.
func TestOpenOwnsThenFollows(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t)
	var loops simtest.Loops // the owner's, once it runs: time waits on what it holds
	sim.RunClockWhile(t, 1, loops.Idle)
	vars := env(t, sim)

	owner, err := connect.Open(t.Context(), options(sim, vars, "owner"))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	o := owner.(*service.Opened).Owner()
	if o == nil {
		t.Fatal("the first process does not own the account, with nobody owning it")
	}
	loops.Add(o)
	if w := located(t, owner, "HTBX", 300); w.State != states.Filled {
		t.Errorf("owner's locate ended %s (%s), want filled", w.State, w.Reason)
	}

	helper, err := connect.Open(t.Context(), options(sim, vars, "helper"))
	if err != nil {
		t.Fatal(err)
	}
	defer helper.Close()
	h := helper.(*service.Opened)
	if hello, err := h.Followed(t.Context()); h.Owner() != nil || err != nil || hello == nil {
		t.Fatalf("the second process: owner %v, followed %v (%v); want a follower of the first", h.Owner() != nil, hello, err)
	}
	if w := located(t, helper, "HTBY", 100); w.State != states.Filled {
		t.Errorf("follower's locate ended %s (%s), want filled", w.State, w.Reason)
	}

	q := quotes(sim)
	if q["HTBX"] != service.UserAgent || q["HTBY"] != service.UserAgent {
		t.Errorf("quotes sent %v, want HTBX and HTBY each from %q", q, service.UserAgent)
	}
	accepts := 0
	for _, r := range sim.Sim.Requests() {
		if r.Method == "POST" && r.Path == "/v1/api/accounts/locates/accept" && r.Status == 200 {
			accepts++
		}
	}
	if accepts != 2 {
		t.Errorf("%d accepts answered 200, want 2 (one a locate)", accepts)
	}
}

// A setting missing or wrong is refused before anything is sent
// (account.KindRefused), and the error never quotes the secret.
func TestOpenRefusesBadSettings(t *testing.T) {
	t.Parallel()
	sim := simtest.New(t)
	for name, edit := range map[string]func(map[string]string){
		"no account":    func(v map[string]string) { delete(v, "LOCATOR_ACCOUNT") },
		"no secret":     func(v map[string]string) { delete(v, "LOCATOR_SECRET") },
		"unknown env":   func(v map[string]string) { v["LOCATOR_ENV"] = "demo" },
		"plain http":    func(v map[string]string) { v["LOCATOR_BASE_URL"] = "http://broker.example:8080" },
		"bad budget":    func(v map[string]string) { v["LOCATOR_LOCATE_BUDGET"] = "twenty" },
		"missing named": func(v map[string]string) { v["LOCATOR_CONFIG"] = filepath.Join(t.TempDir(), "none.json") },
	} {
		t.Run(name, func(t *testing.T) {
			vars := env(t, sim)
			edit(vars)
			a, err := connect.Open(t.Context(), options(sim, vars, "helper"))
			if err == nil {
				a.Close()
			}
			if account.KindOf(err) != account.KindRefused || strings.Contains(err.Error(), sim.Live.Secret) {
				t.Errorf("open: %v (kind %s), want refused, the secret unsaid", err, account.KindOf(err))
			}
		})
	}
	if n := len(sim.Sim.Requests()); n != 0 {
		t.Errorf("%d requests sent for refused settings, want none", n)
	}
}

// docs/library.md's "Library use" shows ExampleOpen's body as it is, so
// the code a reader copies compiles.
func TestREADMEQuotesTheExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "func ExampleOpen() {\n")
	body, _, _ = strings.Cut(body, "\n}\n")
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	page, err := os.ReadFile("../docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(page), "## Library use\n")
	if want := "```go\n" + strings.Join(lines, "\n") + "\n```"; !strings.Contains(section, want) {
		t.Errorf("docs/library.md's Library use does not quote ExampleOpen's body:\n%s", want)
	}
}
