package jobs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/report"
)

// LedgerSync is the body of a ledger-sync job: copy the cash ledger of the
// last days trade dates of the broker's calendar (today included) into the
// store, through the account's Fees operation (which syncs the window,
// then reconciles it; the report is left to the reconcile job). It is
// idempotent (ledger.Sync's dedupe key), so overlapping windows of
// successive runs store each row once.
func (r *Runner) LedgerSync(ctx context.Context, days int) (string, error) {
	if days <= 0 {
		days = DefaultDays
	}
	res, err := r.Account.Fees(ctx, account.FeesRequest{Window: locator.FeeWindow{Days: days}, Grace: DefaultGrace})
	if err != nil {
		return "", fmt.Errorf("ledger sync of the last %d trade dates: %w", days, err)
	}
	return fmt.Sprintf("ledger %s..%s: %d rows read, %d new", res.Report.Since.Format(time.DateOnly),
		res.Report.Today.Format(time.DateOnly), res.Synced.Fetched, res.Synced.Inserted), nil
}

// maxProblemLines caps the problem lines quoted in a run's detail.
const maxProblemLines = 10

// Reconcile is the body of a reconcile job: the account's Fees operation
// over the last days trade dates of the broker's calendar, as `locator
// fees` runs it (the
// window's ledger synced first: a report against a stale ledger would call
// every recent fee missing). A run with problems (missing, wrong amount,
// unexplained, a day that differs from totalLocateCosts) fails, so it shows
// in job_runs; pending fees within grace do not.
func (r *Runner) Reconcile(ctx context.Context, days int, grace time.Duration) (string, error) {
	if days <= 0 {
		days = DefaultDays
	}
	res, err := r.Account.Fees(ctx, account.FeesRequest{Window: locator.FeeWindow{Days: days}, Grace: grace})
	if err != nil {
		return "", fmt.Errorf("reconcile: %w", err)
	}
	rep := res.Report
	detail := rep.String()
	if rep.Problems() == 0 {
		return detail, nil
	}
	var probs, ids []string
	for _, l := range rep.Lines {
		if !l.Status.Problem() {
			continue
		}
		if l.WorkflowID != "" {
			ids = append(ids, l.WorkflowID)
		}
		s := fmt.Sprintf("%s %s %s %s", l.Date.Format(time.DateOnly), l.Symbol, l.Kind, l.Status)
		switch {
		case l.WorkflowID == "":
			s += fmt.Sprintf(" %s (%s)", l.Charged.StringFixed(2), l.Note)
		case l.Status == locator.FeeWrongAmount:
			s += fmt.Sprintf(" %s, expected %s [%s]", l.Charged.StringFixed(2), l.Expected.StringFixed(2), l.WorkflowID)
		default:
			s += fmt.Sprintf(" %s expected [%s]", l.Expected.StringFixed(2), l.WorkflowID)
		}
		probs = append(probs, s)
	}
	shown := probs
	if len(shown) > maxProblemLines {
		shown = append(shown[:maxProblemLines:maxProblemLines], "...")
	}
	for _, d := range rep.Days {
		if d.Status == locator.DayDiffers && d.BrokerTotal != nil {
			s := fmt.Sprintf("%s totalLocateCosts %s differs from the ledger's %s",
				d.Date.Format(time.DateOnly), d.BrokerTotal.StringFixed(2), d.Charged.StringFixed(2))
			probs, shown = append(probs, s), append(shown, s)
		}
	}
	return "", &Failure{Detail: fmt.Sprintf("%s; %d problem(s): %s", detail, rep.Problems(), strings.Join(shown, "; ")),
		WorkflowIDs: ids, FeeProblems: probs}
}

// Audit is the body of an audit job: the Reg SHO audit trail of the last
// days trading days on the broker's calendar (the account's Audit, which
// reads the order book), written to dir as CSV and JSON lines. A trail
// with a short sale sent without cover fails the run, so it shows in
// job_runs and is notified.
func (r *Runner) Audit(ctx context.Context, days int, dir string) (string, error) {
	if days <= 0 {
		days = 1
	}
	trail, err := r.Account.Audit(ctx, account.AuditRequest{Days: days})
	if err != nil {
		return "", fmt.Errorf("audit: %w", err)
	}
	files, err := report.WriteTrail(trail, dir)
	if err != nil {
		return "", fmt.Errorf("audit: %w", err)
	}
	detail := fmt.Sprintf("audit %s: %d short sale(s), %d sent without cover; written to %s",
		trail.Range, len(trail.Rows), trail.Flagged(), strings.Join(files, ", "))
	if trail.Flagged() > 0 {
		return "", &Failure{Detail: detail}
	}
	return detail, nil
}
