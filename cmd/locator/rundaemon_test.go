package main

import (
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/store"
)

// `run` is serve with schedules, so an owner that
// steps down no longer ends it. Another process's term begins on the
// account (its lease lapsed and was taken, as after a stall): the daemon
// steps down, keeps running, owns the account again once that lease
// lapses, and its every-second schedule goes on, a run ending ok after the
// step-down; SIGTERM still stops it with exit 0.
func TestRunKeepsItsScheduleAcrossAStepDown(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	cfg := writeFile(t, "locator.json", `{"jobs": [
  {"name": "tick", "kind": "credit-back-unused", "schedule": "* * * * * *", "holidays": "run"}
]}`)
	r := b.startMain(t, "run", "--config", cfg)
	okSince := func(since time.Time) int {
		n := 0
		for _, run := range b.jobRuns(t) {
			if run.Outcome == locator.JobOK && run.StartedAt.After(since) {
				n++
			}
		}
		return n
	}
	waitFor(t, "a scheduled run", func() bool { return okSince(time.Time{}) >= 1 })

	st, err := store.Open(t.Context(), b.env["LOCATOR_DB"], clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mine, err := st.LiveLease(t.Context(), "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RenewLease(t.Context(), mine.Account, mine.Owner, mine.Term, 0); err != nil {
		t.Fatal(err)
	}
	theirs, err := st.AcquireLease(t.Context(), locator.Lease{Account: mine.Account, Owner: "daemon:elsewhere", PID: 1, Host: "elsewhere"}, 2*time.Second)
	if err != nil || theirs.Term != mine.Term+1 {
		t.Fatalf("takeover: term %d, %v", theirs.Term, err)
	}
	waitFor(t, "the step-down", func() bool { return strings.Contains(r.stderr.String(), "stepped down") })
	stepped := b.clk.Now()
	select {
	case code := <-r.done:
		t.Fatalf("run ended (exit %d) when its owner stepped down\nstderr %s", code, r.stderr)
	default:
	}
	waitFor(t, "the account owned again", func() bool {
		l, err := st.LiveLease(t.Context(), "LV100001")
		return err == nil && l.Term > theirs.Term && l.PID == mine.PID
	})
	waitFor(t, "a scheduled run after the step-down", func() bool { return okSince(stepped) >= 1 })
	if code := r.stop(t); code != console.ExitOK {
		t.Fatalf("exit %d after SIGTERM\nstderr %s", code, r.stderr)
	}
}
