package console

import (
	"fmt"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/market"
)

// RunJSON is a job run as printed with --json.
type RunJSON struct {
	ID        int64  `json:"id"`
	Job       string `json:"job"`
	Kind      string `json:"kind"`
	Account   string `json:"account"`
	StartedAt string `json:"startedAt"`
	EndedAt   string `json:"endedAt,omitempty"`
	Outcome   string `json:"outcome"`
	Detail    string `json:"detail"`
}

// RunJSONOf is r as printed with --json; a run still going has no endedAt.
func RunJSONOf(r locator.JobRun) RunJSON {
	o := RunJSON{ID: r.ID, Job: r.Job, Kind: r.Kind, Account: r.Account, Outcome: string(r.Outcome), Detail: r.Detail,
		StartedAt: r.StartedAt.UTC().Format(time.RFC3339Nano)}
	if !r.EndedAt.IsZero() {
		o.EndedAt = r.EndedAt.UTC().Format(time.RFC3339Nano)
	}
	return o
}

// JobRun prints a finished run: one line, or one JSON object.
func JobRun(out Printer, r *locator.JobRun) {
	out.Event(RunJSONOf(*r), fmt.Sprintf("%s %s (run %d, %s, %s): %s", r.Job, r.Outcome, r.ID,
		market.DateTime(r.StartedAt), r.EndedAt.Sub(r.StartedAt).Round(time.Millisecond), r.Detail))
}

// JobRuns prints recorded runs, one a row (in JSON, RunJSONOf each).
func JobRuns(out Printer, runs []locator.JobRun) {
	var rows [][]string
	var objs []any
	for _, r := range runs {
		took := ""
		if !r.EndedAt.IsZero() {
			took = r.EndedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		rows = append(rows, []string{Int(r.ID), r.Job, r.Kind, r.Account, market.DateTime(r.StartedAt),
			took, string(r.Outcome), r.Detail})
		objs = append(objs, RunJSONOf(r))
	}
	out.Table([]string{"RUN", "JOB", "KIND", "ACCOUNT", "STARTED", "TOOK", "OUTCOME", "DETAIL"}, rows, objs)
}
