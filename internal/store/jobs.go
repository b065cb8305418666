package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/locatorhq/locator"
)

// ErrJobRunEnded is returned when ending a run that has already ended.
var ErrJobRunEnded = errors.New("store: job run already ended")

const jobRunColumns = `id, job, kind, account, started_at, ended_at, outcome, detail`

// StartJobRun records that a run of job begins now.
func (s *Store) StartJobRun(ctx context.Context, job, kind, account string) (*locator.JobRun, error) {
	var out *locator.JobRun
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO job_runs (job, kind, account, started_at, outcome) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			job, kind, account, formatTime(tx.now), string(locator.JobRunning)).Scan(&id)
		if err != nil {
			return fmt.Errorf("store: start job run %s: %w", job, err)
		}
		out = &locator.JobRun{ID: id, Job: job, Kind: kind, Account: account, StartedAt: tx.now, Outcome: locator.JobRunning}
		return nil
	})
	return out, err
}

// EndJobRun records how run id ended; only a running run can end, so a late
// second writer cannot overwrite the first outcome.
func (s *Store) EndJobRun(ctx context.Context, id int64, outcome locator.JobOutcome, detail string) (*locator.JobRun, error) {
	if outcome != locator.JobOK && outcome != locator.JobFailed && outcome != locator.JobSkipped {
		return nil, fmt.Errorf("store: job run outcome %q: want ok, failed or skipped", outcome)
	}
	var out *locator.JobRun
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_runs SET ended_at = ?, outcome = ?, detail = ? WHERE id = ? AND outcome = ?`,
			formatTime(tx.now), string(outcome), detail, id, string(locator.JobRunning))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: %d", ErrJobRunEnded, id)
		}
		out, err = scanJobRun(tx.QueryRowContext(ctx, `SELECT `+jobRunColumns+` FROM job_runs WHERE id = ?`, id))
		return err
	})
	return out, err
}

// AbandonJobRuns ends as failed, with detail, every run of account still
// recorded as running: a daemon starting up knows no run of its own is in
// flight, so such rows are left over from a process that died.
func (s *Store) AbandonJobRuns(ctx context.Context, account, detail string) (int, error) {
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_runs SET ended_at = ?, outcome = ?, detail = ? WHERE account = ? AND outcome = ?`,
			formatTime(tx.now), string(locator.JobFailed), detail, account, string(locator.JobRunning))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// JobRunFilter selects job runs for JobRuns.
type JobRunFilter struct {
	Account string
	Job     string
	// Limit caps the rows (newest first when set); 0 means all, oldest first.
	Limit int
}

// JobRuns returns the runs matching f, oldest first (newest first with
// Limit).
func (s *Store) JobRuns(ctx context.Context, f JobRunFilter) ([]locator.JobRun, error) {
	var where []string
	var args []any
	if f.Account != "" {
		where, args = append(where, "account = ?"), append(args, f.Account)
	}
	if f.Job != "" {
		where, args = append(where, "job = ?"), append(args, f.Job)
	}
	q := `SELECT ` + jobRunColumns + ` FROM job_runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" ORDER BY id DESC LIMIT %d", f.Limit)
	} else {
		q += " ORDER BY id"
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []locator.JobRun
	for rows.Next() {
		r, err := scanJobRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

func scanJobRun(sc scanner) (*locator.JobRun, error) {
	var r locator.JobRun
	var started, ended, outcome string
	if err := sc.Scan(&r.ID, &r.Job, &r.Kind, &r.Account, &started, &ended, &outcome, &r.Detail); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	r.Outcome = locator.JobOutcome(outcome)
	var err error
	if r.StartedAt, err = parseTime(started); err != nil {
		return nil, fmt.Errorf("store: job run %d: %w", r.ID, err)
	}
	if r.EndedAt, err = parseTime(ended); err != nil {
		return nil, fmt.Errorf("store: job run %d: %w", r.ID, err)
	}
	return &r, nil
}
