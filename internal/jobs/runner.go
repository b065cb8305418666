package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/notify"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Runner runs job bodies for one account through its account API, whose
// owner's engine every job shares: one poller, one quote queue, one view
// of the inventory.
type Runner struct {
	// Account is the account the bodies locate and credit back through.
	Account account.Account
	// Client is the owner's client, whose answers tell the broker's clock
	// ("today" on the broker's calendar); the bodies read the broker
	// through Account.
	Client *brokerclient.Client
	// Store is the owner's store; runs are recorded in its job_runs.
	Store *store.Store
	// Clock is the owner's clock: "today" and ledger windows come from it.
	Clock     clock.Clock
	AccountID string
	// Logger receives a line when a run starts and ends (nil: none).
	Logger *slog.Logger
	// Notifier is told of each failed run and of fee problems (nil:
	// nobody). It queues and returns, so a slow webhook never holds a job.
	Notifier *notify.Notifier

	mu    sync.Mutex
	drain chan struct{}
	// notified holds the fee problems already notified: a problem stays in
	// every reconcile window for days, and one message about it is enough
	// (after a restart, one more).
	notified map[string]bool
}

// Failure is a run that did not reach its goal (see account.JobFailure).
type Failure = account.JobFailure

// Drain tells running bodies to start nothing new (no new quote or
// credit-back) while they finish what is in flight: the first step of a
// graceful shutdown.
func (r *Runner) Drain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.drain == nil {
		r.drain = make(chan struct{})
	}
	select {
	case <-r.drain:
	default:
		close(r.drain)
	}
}

func (r *Runner) draining() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.drain == nil {
		return false
	}
	select {
	case <-r.drain:
		return true
	default:
		return false
	}
}

func (r *Runner) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// now is the broker's time: "today", the ledger's trade dates and whether
// the market is open are the broker's, whose clock may run apart from this
// machine's (a replayed day, a skewed host). The client's estimate of the
// skew bridges them, as it does the engine's offer windows.
func (r *Runner) now() time.Time {
	t := r.hostNow()
	if r.Client != nil {
		t = t.Add(r.Client.ClockSkew())
	}
	return t
}

// hostNow is this machine's time, the runner's clock's.
func (r *Runner) hostNow() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

// Run runs j once, now, recording the run in job_runs before the body
// starts and its outcome (ok or failed, with a detail) when it ends, even if
// ctx was cancelled or the body panicked. The error is the body's (a
// *Failure when the goal was not reached); a failed run is notified.
//
// On a day j's schedule skips (the market is closed: an exchange holiday,
// or any closed day for a session schedule such as @close-15m), as when
// run by --once on Thanksgiving, the body does not run: the run is recorded
// as skipped with the reason, and is no failure.
func (r *Runner) Run(ctx context.Context, j Job) (*locator.JobRun, error) {
	if why, skip := j.Schedule.Skips(r.now()); skip {
		return r.skip(ctx, j, why)
	}
	run, err := r.Store.StartJobRun(ctx, j.Name, string(j.Kind), r.AccountID)
	if err != nil {
		return nil, err
	}
	log := r.log().With("job", j.Name, "kind", string(j.Kind), "run", run.ID)
	log.Info("job started")
	finished := false
	defer func() {
		if finished {
			return
		}
		detail := "the job's goroutine exited"
		p := recover()
		if p != nil {
			detail = fmt.Sprintf("panic: %v", p)
		}
		if ended, err := r.Store.EndJobRun(context.WithoutCancel(ctx), run.ID, locator.JobFailed, detail); err == nil {
			r.NotifyFailure(ctx, j, ended, nil)
		}
		if p != nil {
			panic(p) // for cron.Recover to log with its stack
		}
	}()
	detail, bodyErr := r.do(ctx, j)
	finished = true
	outcome := locator.JobOK
	if bodyErr != nil {
		outcome, detail = locator.JobFailed, bodyErr.Error()
	}
	ended, err := r.Store.EndJobRun(context.WithoutCancel(ctx), run.ID, outcome, detail)
	if err != nil {
		return nil, errors.Join(bodyErr, fmt.Errorf("record job run %d: %w", run.ID, err))
	}
	if bodyErr != nil {
		log.Warn("job failed", "detail", detail, "took", ended.EndedAt.Sub(ended.StartedAt))
		r.NotifyFailure(ctx, j, ended, bodyErr)
	} else {
		log.Info("job done", "detail", detail, "took", ended.EndedAt.Sub(ended.StartedAt))
	}
	return ended, bodyErr
}

// skip records a run of j that did not run, and why.
func (r *Runner) skip(ctx context.Context, j Job, why string) (*locator.JobRun, error) {
	run, err := r.Store.StartJobRun(ctx, j.Name, string(j.Kind), r.AccountID)
	if err != nil {
		return nil, err
	}
	ended, err := r.Store.EndJobRun(context.WithoutCancel(ctx), run.ID, locator.JobSkipped, why)
	if err != nil {
		return nil, fmt.Errorf("record job run %d: %w", run.ID, err)
	}
	r.log().Info("job skipped", "job", j.Name, "kind", string(j.Kind), "run", run.ID, "reason", why)
	return ended, nil
}

// NotifyFailure tells the notifier of a failed run: a fee problem when a
// reconcile run found some not notified before, a failed job otherwise. A
// run cut short by a shutdown is not notified: whoever stopped the daemon
// knows, and its workflows resume at the next start. Run calls it; a
// process that handed its run to the account's owner calls it with the
// record the owner answered.
func (r *Runner) NotifyFailure(ctx context.Context, j Job, run *locator.JobRun, err error) {
	if r.Notifier == nil || ctx.Err() != nil || r.draining() {
		return
	}
	ev := notify.Event{Kind: notify.JobFailed, Job: j.Name, JobKind: string(j.Kind), Account: r.AccountID,
		Time: run.EndedAt, RunID: run.ID, Detail: run.Detail}
	var f *Failure
	if errors.As(err, &f) {
		ev.WorkflowIDs = f.WorkflowIDs
		if len(f.FeeProblems) > 0 {
			ev.Kind = notify.FeeProblem
			if !r.newProblems(f.FeeProblems) {
				r.log().Info("fee problems already notified", "job", j.Name, "run", run.ID)
				return
			}
		}
	}
	r.Notifier.Notify(ev)
}

// newProblems records problems as notified and reports whether any was new.
func (r *Runner) newProblems(problems []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.notified == nil {
		r.notified = map[string]bool{}
	}
	fresh := false
	for _, p := range problems {
		if !r.notified[p] {
			r.notified[p], fresh = true, true
		}
	}
	return fresh
}

// do runs j's body and returns a one-line account of what it did.
func (r *Runner) do(ctx context.Context, j Job) (string, error) {
	switch j.Kind {
	case KindLocate:
		return r.Locate(ctx, j)
	case KindCreditBackUnused:
		return r.CreditBackUnused(ctx)
	case KindLedgerSync:
		return r.LedgerSync(ctx, j.Days)
	case KindReconcile:
		return r.Reconcile(ctx, j.Days, j.Grace)
	case KindAudit:
		return r.Audit(ctx, j.Days, j.Dir)
	}
	return "", fmt.Errorf("job %s: unknown kind %q", j.Name, j.Kind)
}

// outcome is one workflow-sized part of a run.
type outcome struct {
	label string // symbol, or symbol and type
	w     *workflow.Workflow
	note  string // what happened instead of a workflow (skipped, refused)
	err   error
	ok    bool
}

func (o outcome) String() string {
	switch {
	case o.err != nil:
		return o.label + ": " + o.err.Error()
	case o.w != nil:
		s := fmt.Sprintf("%s %s", o.label, o.w.State)
		if o.w.Quantity > 0 && (o.w.State == states.Filled || o.w.State == states.Credited) {
			s += fmt.Sprintf(" %d", o.w.Quantity)
			if !o.w.Price.IsZero() {
				s += " @ " + o.w.Price.StringFixed(4)
			}
		}
		if o.w.Reason != "" && !o.ok {
			s += " (" + o.w.Reason + ")"
		}
		if o.note != "" {
			s += " " + o.note
		}
		return s + " [" + o.w.ID + "]"
	}
	return o.label + " " + o.note
}

// summarize joins the parts of a run into its detail and decides its
// outcome.
func summarize(parts []outcome, empty string) (string, error) {
	if len(parts) == 0 {
		return empty, nil
	}
	var lines []string
	fail := &Failure{}
	failed := false
	for _, p := range parts {
		lines = append(lines, p.String())
		if p.ok {
			continue
		}
		failed = true
		st := states.Failed
		if p.err == nil && p.w != nil {
			st = p.w.State
		}
		if p.err != nil && (errors.Is(p.err, context.Canceled) || errors.Is(p.err, context.DeadlineExceeded)) {
			fail.Interrupted = true
		}
		if fail.Worst == "" || account.Severity(st) > account.Severity(fail.Worst) {
			fail.Worst = st
		}
		if p.w != nil {
			fail.WorkflowIDs = append(fail.WorkflowIDs, p.w.ID)
		}
	}
	detail := strings.Join(lines, "; ")
	if !failed {
		return detail, nil
	}
	if fail.Interrupted {
		detail = "interrupted; unfinished workflows stay in the store and resume at the next start: " + detail
	}
	fail.Detail = detail
	return "", fail
}
