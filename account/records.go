package account

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/workflow"
)

// Reader is what can be read of an account without changing anything:
// what the broker says (Read, and as it pushes it: Watch), what the owner
// recorded (Records), and what is worked out of both (Audit, Plan, Size). Every Account is a Reader. A
// process that finds no live owner of the account runs the same reads
// itself (local.Alone, through service.Dialer.Reader), so that no command
// opens a database or makes a broker client of its own. Its reads send the
// broker only GETs, and Watch a stream's handshake and subscribe.
type Reader interface {
	// Read is what the broker says about the account now, one record kind
	// a request (see ReadKind), read by the owner on its key pair's pacer:
	// the read commands' one way to the broker, so that a process beside a
	// running owner sends the broker nothing of its own.
	Read(ctx context.Context, req ReadRequest) (*ReadResult, error)
	// Records is what the owner recorded of the account, one kind a
	// request (see RecordsKind): its workflows and orders, their logs, its
	// jobs' runs, what its locate budget leaves. A reader of no account
	// (Dialer.Reader of settings naming none) answers for every account
	// in the database.
	Records(ctx context.Context, req RecordsRequest) (*Records, error)
	// Audit is the Reg SHO audit trail of a range of trade dates: every
	// short sale of the account (locator's, and those the broker's order
	// book shows it did not place), with what covered it when it was sent
	// and when it executed. It reads the order book.
	Audit(ctx context.Context, req AuditRequest) (*locator.AuditTrail, error)
	// Plan suggests, for each symbol of a watchlist, how many shares to
	// locate before the open, from the shares shorted through locator on
	// the last trading days, with the price range of the offers seen. It
	// reads the account, whose answer tells the broker's clock.
	Plan(ctx context.Context, req PlanRequest) (*PlanResult, error)
	// Size says how many shares of a symbol the account can short now at
	// a price, which limit binds, and what it would take to reach a
	// target (ledger.Size). It reads the account, the easy-to-borrow
	// answer, the inventory, the positions and the order book.
	Size(ctx context.Context, req SizeRequest) (*locator.Sizing, error)
	// Watch follows one of the broker's push streams of the account,
	// calling on with each change (WatchEvent), the first a
	// StreamConnecting one before anything is awaited, until ctx ends
	// (its error) or the stream fails for good: KindRefused when the
	// broker refuses the keys or the account on it, KindOwnerGone when
	// the owner stops. The owner relays the streams it follows itself
	// (its P&L watch, its engine's portfolio stream), so a watcher opens
	// no connection of its own to the broker; alone, the reader opens
	// them on its own client.
	Watch(ctx context.Context, req WatchRequest, on func(WatchEvent)) error
}

// RecordsKind names what a Records call asks for.
type RecordsKind string

// The records Records hands out.
const (
	// RecordsRecent: the newest workflows and the newest orders locator
	// placed (Limit of each, newest first; all, oldest first, without a
	// Limit), with the owners' leases and the standbys.
	RecordsRecent RecordsKind = "recent"
	// RecordsOne: the workflow ID names (its id, its quoteReqID, or a
	// unique prefix of its id) or, when it names none, the order (the
	// clientOrderId locator sent, or the one the broker answered with in
	// its place), with its transition log, oldest first. A prefix that
	// names several workflows is refused (KindInput); an ID that names
	// nothing is KindNotOpen.
	RecordsOne RecordsKind = "one"
	// RecordsJobRuns: the runs of the jobs (of Job alone when set), the
	// newest Limit of them, newest first (all, oldest first, without a
	// Limit).
	RecordsJobRuns RecordsKind = "jobRuns"
	// RecordsBudget: what the locate budget leaves of today (none when
	// the account has no budget). The owner's budget is the one it keeps;
	// a reader with no owner takes its own settings' (service.Dialer).
	RecordsBudget RecordsKind = "budget"
)

// RecordsRequest asks for one kind of the owner's records. A field the
// kind does not take is refused (KindInput).
type RecordsRequest struct {
	What RecordsKind `json:"what"`
	// ID names the record of RecordsOne (required).
	ID string `json:"id,omitempty"`
	// Job narrows RecordsJobRuns to one job's runs.
	Job string `json:"job,omitempty"`
	// Limit caps RecordsRecent and RecordsJobRuns (zero or more).
	Limit int `json:"limit,omitempty"`
}

// Records holds the records a Records call asked for: the fields of its
// kind are set, the others are empty.
type Records struct {
	// Leases, Standbys, Workflows and Orders are RecordsRecent's.
	Leases    []locator.Lease     `json:"leases,omitempty"`
	Standbys  []locator.Standby   `json:"standbys,omitempty"`
	Workflows []workflow.Workflow `json:"workflows,omitempty"`
	Orders    []workflow.Order    `json:"orders,omitempty"`
	// Refused are the rows the owners would not act on at their last
	// start (a MAC that does not verify), also RecordsRecent's.
	Refused []locator.RefusedRow `json:"refused,omitempty"`
	// Workflow or Order is RecordsOne's record, and Log its transitions.
	Workflow *workflow.Workflow   `json:"workflow,omitempty"`
	Order    *workflow.Order      `json:"order,omitempty"`
	Log      []locator.Transition `json:"log,omitempty"`
	// JobRuns are RecordsJobRuns'.
	JobRuns []locator.JobRun `json:"jobRuns,omitempty"`
	// Budget is RecordsBudget's (nil: no budget).
	Budget *workflow.BudgetLeft `json:"budget,omitempty"`
}

// ReportRequest asks for the spend report of a range of trade dates on the
// broker's calendar: a zero Range is the last report.DefaultDays trading
// days to the broker's today, a zero Range.To the broker's today.
type ReportRequest struct {
	Range locator.DateRange `json:"range,omitzero"`
}

// AuditRequest asks for the audit trail of a range of trade dates on the
// broker's calendar: a zero Range is the last Days trading days to the
// broker's today (report.DefaultDays when Days is 0), a zero Range.To the
// broker's today.
type AuditRequest struct {
	Range locator.DateRange `json:"range,omitzero"`
	Days  int               `json:"days,omitempty"`
}

// PlanRequest asks for the plan of a watchlist's Symbols over the last
// Days trading days to the broker's today (1 or more).
type PlanRequest struct {
	Symbols []string `json:"symbols"`
	Days    int      `json:"days"`
}

// PlanResult is the plan: one suggestion a symbol, by symbol.
type PlanResult struct {
	Suggestions []locator.Suggestion `json:"suggestions"`
}

// SizeRequest asks how many shares of Symbol can be shorted now at Price
// (positive), and, with a Target (zero or more; 0: none), how many more to
// locate to reach it.
type SizeRequest struct {
	Symbol string          `json:"symbol"`
	Price  decimal.Decimal `json:"price"`
	Target int64           `json:"target,omitempty"`
}
