// Package locator holds the records that cross the account API and that
// the packages below it make: an account's owner (Lease), its standbys, the
// runs of its jobs and the logs of its workflows and orders (package
// store), the fee check's report, the credit-back plans of the unused rule
// and a short's sizing (package ledger), and what the reports work out of
// them: the spend report, the Reg SHO audit trail and the locate plan
// (package report). Those packages make them; package account hands them
// out. It imports no database driver, nor anything that does, so a
// program holding an account.Account links none (TestAccountLinksNoDriver).
package locator

import (
	"fmt"
	"time"

	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
)

// An account's owner, its standbys and the runs of its jobs are recorded
// by package store and handed out by the account API (Account.Status,
// Account.RunJob).

// Lease says which live process owns an account: it alone drives the
// account's workflows, and others hand it their requests at Endpoint. Its
// times come from the database's clock (see store.Store.AcquireLease).
type Lease struct {
	Account  string
	Owner    string // random id of the owning run
	PID      int
	Host     string
	Endpoint string // the owner's socket, for processes of its host
	// Address is where processes of other hosts reach the owner
	// (https://host:port; empty when it serves only its socket), and Pin
	// the SHA-256 of its TLS certificate's public key, which they check:
	// the database vouches for the owner.
	Address string
	Pin     string
	// PacingKey names the broker's rate-limit buckets the owner draws on
	// (brokerclient.Client.PacingKey: its key pair at its broker address),
	// and Process the owning run (a random id, one per process; Owner is
	// one per account): the accounts of one key pair are owned by one
	// process at a time (see store.KeyPairHeldError). Either empty: no such rule.
	PacingKey string
	Process   string
	// Term grows by one at every change of owner: the owner's writes carry
	// it (see store.Store.Fenced) and fail once another term has begun.
	Term  int64
	Since time.Time `json:",omitzero"`
	// Heartbeat is the last renewal; Expires is when the lease lapses
	// without another. These times are absent on the account API where
	// there is no lease (an account a daemon lists but does not serve).
	Heartbeat time.Time `json:",omitzero"`
	Expires   time.Time `json:",omitzero"`
}

// String names the owner, for a person: "account A is owned by pid P on H
// since T".
func (l Lease) String() string {
	return fmt.Sprintf("account %s is owned by pid %d on %s since %s", l.Account, l.PID, l.Host, market.DateTime(l.Since))
}

// Standby is a daemon standing by to take an account over when its owner
// goes (see service.Fleet).
type Standby struct {
	Account string
	Process string // random id of the standing-by run
	PID     int
	Host    string
	Since   time.Time
	Expires time.Time
	// NotServed, when set, is why the daemon lists the account but cannot
	// serve it now (its keys rejected, another process holding its lease,
	// its engine stopped on an error): it is tried again at Retry; the
	// account has not been served since NotServedSince. Empty while the
	// daemon only waits to own it.
	NotServed      string
	NotServedSince time.Time `json:",omitzero"`
	Retry          time.Time `json:",omitzero"`
	// Rank is where the daemon lists the account's key pair among its own
	// (0: first; -1: a record of a daemon that did not say): of two
	// daemons starting together, the one that lists a key pair first owns
	// it (see service.Fleet).
	Rank int
}

// JobOutcome is how a job run ended.
type JobOutcome string

// Job outcomes. A run is recorded as running before its body starts, so a
// crash leaves a row that says so instead of no trace at all.
const (
	// JobRunning: the run has started and not ended (or its process died).
	JobRunning JobOutcome = "running"
	// JobOK: the run reached its goal.
	JobOK JobOutcome = "ok"
	// JobFailed: the run did not reach its goal, was interrupted, or its
	// process ended before it did; Detail says which.
	JobFailed JobOutcome = "failed"
	// JobSkipped: the run did nothing on purpose, the market being closed
	// that day (Detail says why); recorded so a holiday shows as a day off,
	// not as a missing or failed run.
	JobSkipped JobOutcome = "skipped"
)

// JobRun is one run of a scheduled job, kept so a person can see what the
// daemon did and when.
type JobRun struct {
	ID        int64
	Job       string // the job's name in the daemon's config
	Kind      string
	Account   string
	StartedAt time.Time
	EndedAt   time.Time `json:",omitzero"` // zero (absent on the account API) while running
	Outcome   JobOutcome
	Detail    string
}

// Transition is one row of a record's append-only log: a workflow's, or an
// order's (WorkflowID is then its clientOrderId). Package store keeps the
// logs; the account API hands them out (Account.Records).
//
// On the account API a field that is zero is absent: a log's first row
// comes from no state, and most rows carry no broker row.
type Transition struct {
	Seq        int64        `json:",omitzero"`
	WorkflowID string       `json:",omitzero"`
	From       states.State `json:",omitzero"`
	To         states.State `json:",omitzero"`
	Event      states.Event `json:",omitzero"`
	Reason     string       `json:",omitzero"`
	// RawRow is the broker's row behind the change, as it came (orders
	// keep none).
	RawRow string    `json:",omitzero"`
	At     time.Time `json:",omitzero"`
}

// RefusedRow is a workflow or order row an owner would not act on: its MAC
// did not verify (changed, or written by someone without the account's
// secret). Package store keeps them; `locator status` lists them
// (Account.Records).
type RefusedRow struct {
	Account string
	Kind    string // "workflow" or "order"
	ID      string
	Symbol  string
	Reason  string
	At      time.Time
}
