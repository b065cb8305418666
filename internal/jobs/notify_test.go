package jobs_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/jobs"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/simtest"
)

// hook is one webhook POST received.
type hook struct {
	path string
	body map[string]any
}

// receive starts an httptest webhook receiver and gives the bundle's runner
// a notifier posting to it as JSON (/json) and as Slack (/slack). The
// returned function closes the notifier (delivering what is queued) and
// returns what was received, by path.
func (b *testBundle) receive() func() map[string][]hook {
	t := b.t
	got := make(chan hook, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		h := hook{path: r.URL.Path}
		if err := json.Unmarshal(raw, &h.body); err != nil {
			t.Errorf("webhook body %q: %v", raw, err)
		}
		got <- h
	}))
	t.Cleanup(srv.Close)
	n, err := notify.New(notify.Config{
		Webhooks: []notify.Webhook{{URLEnv: "HOOK_JSON", Format: notify.FormatJSON}, {URLEnv: "HOOK_SLACK", Format: notify.FormatSlack}},
		LookupEnv: func(k string) (string, bool) {
			return map[string]string{"HOOK_JSON": srv.URL + "/json", "HOOK_SLACK": srv.URL + "/slack"}[k], true
		},
		Clock: b.sim.Clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	b.runner.Notifier = n
	return func() map[string][]hook {
		n.Close(t.Context())
		close(got)
		out := map[string][]hook{}
		for h := range got {
			out[h.path] = append(out[h.path], h)
		}
		return out
	}
}

// A failed locate run posts one JSON and one Slack
// notification, naming the job, its kind, the account, the run and the
// workflows that failed.
func TestFailedJobNotifies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	received := b.receive()
	j := jobs.Job{Name: "mixed", Kind: jobs.KindLocate, Schedule: mustSchedule(t, "@every 1m"),
		Symbols: []string{"HTBX", "HTBY"}, Quantity: 100, Policy: pol("0.02", false)}
	run, err := b.runner.Run(t.Context(), j)
	if err == nil {
		t.Fatal("the run succeeded; want HTBY declined")
	}
	got := received()
	if len(got["/json"]) != 1 || len(got["/slack"]) != 1 {
		t.Fatalf("received %v, want one JSON and one Slack post", got)
	}
	body := got["/json"][0].body
	for k, v := range map[string]any{"event": "job_failed", "job": "mixed", "jobKind": "locate", "account": "LV100001",
		"run": float64(run.ID), "detail": run.Detail, "time": run.EndedAt.UTC().Format(time.RFC3339Nano)} {
		if body[k] != v {
			t.Errorf("json %s = %v, want %v", k, body[k], v)
		}
	}
	ids, _ := body["workflowIds"].([]any)
	if len(ids) != 1 || !strings.Contains(run.Detail, "HTBY declined") || !strings.Contains(run.Detail, ids[0].(string)) {
		t.Errorf("workflowIds %v, want the declined HTBY workflow of %q", body["workflowIds"], run.Detail)
	}
	text, _ := got["/slack"][0].body["text"].(string)
	for _, want := range []string{"job mixed (locate) failed on account LV100001", "HTBY declined", "workflows: " + ids[0].(string)} {
		if !strings.Contains(text, want) {
			t.Errorf("slack text %q lacks %q", text, want)
		}
	}
}

// A reconcile run that finds a fee problem (a `Locate
// Fees` charge with no locate behind it) posts a fee_problem event with the
// problem in its detail; a run that succeeds posts nothing, and one that
// finds only problems already notified posts nothing either.
func TestFeeProblemNotifies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	received := b.receive()
	j := jobs.Job{Name: "fees", Kind: jobs.KindReconcile, Schedule: mustSchedule(t, "* * * * * *"), Days: 7, Grace: time.Minute}
	if _, err := b.runner.Run(t.Context(), j); err != nil {
		t.Fatalf("clean reconcile: %v", err)
	}
	addCharge(t, b, "7.77")
	run, err := b.runner.Run(t.Context(), j)
	if err == nil {
		t.Fatal("reconcile with an unexplained charge succeeded")
	}
	// The same problem found again is not notified again; a new one is.
	if _, err := b.runner.Run(t.Context(), j); err == nil {
		t.Fatal("the second reconcile succeeded")
	}
	addCharge(t, b, "8.88")
	again, err := b.runner.Run(t.Context(), j)
	if err == nil {
		t.Fatal("the third reconcile succeeded")
	}
	got := received()
	if len(got["/json"]) != 2 || len(got["/slack"]) != 2 {
		t.Fatalf("received %v, want two JSON and two Slack posts (for the runs that found a new problem)", got)
	}
	if d, _ := got["/json"][1].body["detail"].(string); got["/json"][1].body["run"] != float64(again.ID) || !strings.Contains(d, "8.88") || !strings.Contains(d, "2 unexplained") {
		t.Errorf("second fee_problem %v", got["/json"][1].body)
	}
	body := got["/json"][0].body
	if body["event"] != "fee_problem" || body["job"] != "fees" || body["run"] != float64(run.ID) ||
		!strings.Contains(body["detail"].(string), "1 unexplained") || !strings.Contains(body["detail"].(string), "7.77") {
		t.Errorf("json body %v", body)
	}
	if text, _ := got["/slack"][0].body["text"].(string); !strings.Contains(text, "fee problem found by job fees (reconcile)") || !strings.Contains(text, "7.77") {
		t.Errorf("slack text %q", text)
	}
}

// Run on Thanksgiving (as --once would), a weekday job
// does nothing and is recorded as skipped, "market closed", not failed; it
// sends nothing to the broker and notifies nobody.
func TestRunOnHolidayIsSkipped(t *testing.T) {
	t.Parallel()
	thanksgiving := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC) // 09:00 ET
	b := setup(t, simtest.WithStart(thanksgiving))
	received := b.receive()
	before := len(b.sim.Sim.Requests())
	j := jobs.Job{Name: "premarket", Kind: jobs.KindLocate, Schedule: mustSchedule(t, "0 0 9 * * MON-FRI"),
		Symbols: []string{"HTBX"}, Quantity: 100, Policy: pol("0.05", false)}
	run, err := b.runner.Run(t.Context(), j)
	if err != nil {
		t.Fatalf("run on Thanksgiving: %v", err)
	}
	if run.Outcome != locator.JobSkipped || run.Detail != "market closed: Thanksgiving Day" {
		t.Errorf("run %+v, want skipped: market closed: Thanksgiving Day", run)
	}
	if runs := b.runs("premarket"); len(runs) != 1 || runs[0].Outcome != locator.JobSkipped {
		t.Errorf("recorded %+v", runs)
	}
	for _, r := range b.sim.Sim.Requests()[before:] {
		if r.Method != "GET" || strings.Contains(r.Path, "easy-to-borrow") { // the engine's poller reads on its own
			t.Errorf("sent %s %s on a holiday", r.Method, r.Path)
		}
	}
	if next := j.Schedule.Next(b.sim.Clock.Now()); !next.Equal(time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("next run %s, want Friday 2026-11-27 09:00 ET", next)
	}
	if got := received(); len(got) != 0 {
		t.Errorf("notified %v for a skipped run", got)
	}
}

// addCharge adds today a `Locate Fees` charge no locate explains.
func addCharge(t *testing.T, b *testBundle, amount string) {
	t.Helper()
	if err := b.sim.Sim.AddCashRows([]brokersim.ScenarioCashRow{{Account: "LV100001", Date: b.sim.Clock.Now().In(jobs.Market).Format(time.DateOnly),
		CashType: "Locate Fees", Withdraw: brokersim.Dec(decimal.RequireFromString(amount)), Note: "Locate fee ZZZZ 100 shares"}}); err != nil {
		t.Fatal(err)
	}
}

// The market calendar is read on the broker's clock, as the offer windows
// are: on this machine's Thanksgiving, a broker whose clock runs two days
// behind (a replayed Tuesday) trades, and the job runs.
func TestHolidayIsTheBrokers(t *testing.T) {
	t.Parallel()
	thanksgiving := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC) // 09:00 ET
	b := setup(t, simtest.WithStart(thanksgiving), simtest.WithSimOption(brokersim.WithClockSkew(-48*time.Hour)))
	if _, _, err := b.runner.Client.Locates.Inventory(t.Context(), "LV100001"); err != nil { // the offset comes with an answer
		t.Fatal(err)
	}
	j := jobs.Job{Name: "premarket", Kind: jobs.KindLocate, Schedule: mustSchedule(t, "0 0 9 * * MON-FRI"),
		Symbols: []string{"HTBX"}, Quantity: 100, Policy: pol("0.05", false)}
	run, err := b.runner.Run(t.Context(), j)
	if err != nil || run.Outcome != locator.JobOK {
		t.Fatalf("run %+v: %v, want ok on the broker's Tuesday", run, err)
	}
}
