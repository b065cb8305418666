// Package account is what can be done with a broker account, whoever owns
// it: one interface, Account, with one request type per operation and one
// update type, and the outcomes of its workflows in words and as ends.
//
// Exactly one implementation holds the semantics (input validation, the
// live/paper guard, the cost policy, outcomes): local.Account, on the
// engine of the process that owns the account. A process that follows the
// owner reaches that same implementation through a transport that only
// carries calls, questions and updates (wire.Client); its answers are
// the owner's. Commands, jobs, the dashboard and library users hold an
// Account and never know which of the two they have; the read commands
// hold its reads (Reader), and with no live owner they run the same reads
// on their own client and the database opened for reading (local.Alone),
// the only one then drawing on the key pair. The conformance suite in
// accounttest runs every operation through both and requires the same
// results.
package account

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Account is what a caller can do with one account. Every method checks
// its request before anything is recorded or sent (a *Error of kind
// KindInput or KindRefused otherwise), and every error it returns is a
// *Error whose Kind says what happened.
type Account interface {
	// Reader is what can be read of the account: Read, Records, Audit,
	// Plan, Size, Watch.
	Reader
	// Locate ensures located shares for each item of the request, quoting
	// only the shortfall, and returns the workflows it started without
	// waiting for them (Follow waits).
	Locate(ctx context.Context, req LocateRequest) (*LocateResult, error)
	// Quote asks the broker's price for each item without taking it: a
	// price check per item, quoted under the same queue and spacing as the
	// locates, whose offer (both sides of a Reg SHO pair) is recorded and
	// cancelled at once; nothing is ever accepted. It returns the price
	// checks it started without waiting for them (Follow waits; the final
	// record holds the prices seen, see workflow.Prices).
	Quote(ctx context.Context, req QuoteRequest) (*LocateResult, error)
	// CreditBack returns unused located shares to the broker: a quantity
	// of one inventory row, or every unused share of a symbol or of the
	// account (ledger.Unused). It returns the credit-backs it started
	// without waiting for them (Follow waits).
	CreditBack(ctx context.Context, req CreditBackRequest) (*CreditBackResult, error)
	// Short ensures the locate, checks the sizing, places one Sell/Open
	// limit order under a write-ahead clientOrderId and waits until it is
	// working or final.
	Short(ctx context.Context, req ShortRequest) (*ShortResult, error)
	// PlaceOrder places an order under its write-ahead clientOrderId and
	// waits until it is working or final.
	PlaceOrder(ctx context.Context, req PlaceOrderRequest) (*workflow.Order, error)
	// CancelOrder cancels a working order locator placed and returns how
	// it ended.
	CancelOrder(ctx context.Context, req CancelOrderRequest) (*workflow.Order, error)
	// Answer answers the offer waiting on a workflow, from anywhere (another
	// shell, the dashboard, a signed link): the answer of a person.
	Answer(ctx context.Context, req AnswerRequest) error
	// Cancel withdraws an unfinished workflow.
	Cancel(ctx context.Context, req CancelRequest) error
	// Follow calls on with every change of a workflow from now on (from
	// its start with FromStart; nil on: none), its last one included, and
	// returns its final record.
	Follow(ctx context.Context, req FollowRequest, on func(Update)) (*workflow.Workflow, error)
	// Subscribe delivers every change of the account's workflows and
	// orders until ctx ends; the channel is closed then, or when the
	// owner stops (a follower's handle subscribes again to the next).
	Subscribe(ctx context.Context) (<-chan Update, error)
	// RunJob runs one run of a job of a jobs file on the account's engine
	// and returns its record and outcome.
	RunJob(ctx context.Context, req JobRequest) (*JobResult, error)
	// Status is the account as its owner sees it now.
	Status(ctx context.Context, req StatusRequest) (*Status, error)
	// Fees syncs a window of the cash ledger into the owner's database and
	// reconciles the locate fees and credits in it (ledger.Check): the
	// check of `locator fees` and the reconcile job; or, Stored, only
	// reconciles what the syncs stored: the dashboard's.
	Fees(ctx context.Context, req FeesRequest) (*FeesResult, error)
	// Today is the account's trading day as its owner sees it now: the
	// open positions with their P&L from the broker's P&L stream (watched
	// from the first call for as long as the owner lives), the working
	// orders locator placed, today's locates and credit-backs (finished
	// ones too), and each symbol's locate spend and P&L net of it. It is
	// what a trading screen shows.
	Today(ctx context.Context, req TodayRequest) (*Today, error)
	// Report syncs the cash ledger of a range's fee check (as Fees does,
	// over report.FeeWindow) and reports what the account's locates cost
	// and what they were used for over the range, per symbol, per day and
	// in total, on the broker's calendar: the figures of `locator report`.
	Report(ctx context.Context, req ReportRequest) (*locator.Report, error)
}

// Caller is who calls: each process (or page, or job) that holds an
// Account. The owner records Name on what the caller asks for, checks Env
// against the account, and puts the questions of the caller's requests to
// Ask.
type Caller struct {
	// ID identifies the caller's session, to which the questions of its
	// requests are put; made up when empty. It is kept across a change of
	// owner, so a follower that reconnects gets its questions back.
	ID string `json:"id"`
	// Name names the caller for people: "pid@host command".
	Name string `json:"name"`
	// Env is the environment the caller means to use (live or paper):
	// writes are refused when the account is the other kind. Empty means
	// the owner's.
	Env brokerclient.Env `json:"env,omitempty"`
	// Ask answers the questions of this caller's requests that the policy
	// leaves to a person (an offer to take, an order to confirm) before
	// ctx's deadline, the last moment an answer is acted on. Nil: nobody
	// can answer here, and requests that would need an answer are refused
	// before anything is sent.
	Ask func(ctx context.Context, q Question) bool `json:"-"`
}

// Question is put to the caller of a request when its policy leaves the
// decision to a person: an offer to take, or an order to confirm.
type Question struct {
	// ID names the question, for the answer that comes back over a
	// transport.
	ID string `json:"id"`
	// Offer is set when an offer waits: take it?
	Offer *workflow.Offer `json:"offer,omitempty"`
	// Sides, when the offer is a Reg SHO pair whose both sides the policy
	// allows (workflow.Sides), are the sides to choose from, Offer among
	// them: a yes takes Offer; another side is taken by an Answer naming
	// its leg.
	Sides []workflow.Offer `json:"sides,omitempty"`
	// Order is set when a short's order is about to leave: send it?
	Order *workflow.Order `json:"order,omitempty"`
	// Credits is set when the unused shares found are about to be
	// credited back, one credit-back a row: send them?
	Credits []locator.Credit `json:"credits,omitempty"`
	// Deadline is the last moment an answer is acted on.
	Deadline time.Time `json:"deadline"`
}

// LocateRequest asks for located shares: one item, or a batch (a
// watchlist) whose quotes are paced and whose easy-to-borrow checks are
// made together.
type LocateRequest struct {
	Items []LocateItem `json:"items"`
	// Ask says the caller answers the offers the policy leaves to a person
	// (Caller.Ask is set): only for a single item, since a batch's offers
	// come faster than anyone can weigh them.
	Ask bool `json:"ask,omitempty"`
}

// LocateItem is one symbol of a locate request.
type LocateItem struct {
	// ID, when set, is the workflow's id, made up by the caller so that a
	// request sent again after its owner went away is not started twice.
	ID       string          `json:"id,omitempty"`
	Symbol   string          `json:"symbol"`
	Quantity int64           `json:"quantity"`
	Policy   workflow.Policy `json:"policy"`
}

// QuoteRequest asks the price of located shares, one item per symbol.
type QuoteRequest struct {
	Items []QuoteItem `json:"items"`
}

// QuoteItem is one symbol of a quote request: the price of Quantity
// shares.
type QuoteItem struct {
	// ID, when set, is the price check's id (see LocateItem).
	ID       string `json:"id,omitempty"`
	Symbol   string `json:"symbol"`
	Quantity int64  `json:"quantity"`
}

// LocateResult names the workflow started for each item of a locate or
// quote request.
type LocateResult struct {
	// Started[i] is item i's workflow, or why it was refused.
	Started []Started `json:"started"`
}

// Err joins the refusals of the items that were not started (nil when
// every item started).
func (r *LocateResult) Err() error {
	var errs []error
	for _, s := range r.Started {
		if s.Refused != nil {
			errs = append(errs, s.Refused)
		}
	}
	return joinErrors(errs)
}

// Started is a workflow a request started, or why it was refused.
type Started struct {
	ID      string `json:"id,omitempty"`
	Symbol  string `json:"symbol"`
	Refused *Error `json:"refused,omitempty"`
}

// CreditBackRequest returns Quantity shares of one inventory row (Symbol,
// Type), or, with Unused, the unused shares (ledger.Unused) of Symbol's
// rows, or of every symbol's when Symbol is empty.
type CreditBackRequest struct {
	// ID, when set, is the workflow's id (see LocateItem); an Unused
	// request takes none, since the owner starts one credit-back a row.
	ID       string                `json:"id,omitempty"`
	Symbol   string                `json:"symbol"`
	Quantity int64                 `json:"quantity"`
	Type     brokercode.LocateType `json:"type"`
	// Unused credits back every unused share instead of Quantity (which
	// must be 0); Type, when set, narrows it to rows of that type. A
	// request sent again after its owner went away starts nothing twice:
	// what the first owner started is open, and skipped.
	Unused bool `json:"unused,omitempty"`
	// Confirm says the caller confirms the unused shares found before any
	// is sent (Caller.Ask is set); without it they are sent at once. Only
	// with Unused: a quantity is what its caller asked for.
	Confirm bool `json:"confirm,omitempty"`
	// Force credits back a Quantity above the row's unused shares (those
	// working short sales need, a SingleUse row's used ones): without it
	// the owner refuses one, with the numbers, and sends nothing. Not with
	// Unused.
	Force bool `json:"force,omitempty"`
}

// CreditBackResult names the credit-backs a request started, one per
// inventory row, and the rows an Unused request left alone, with why.
type CreditBackResult struct {
	Started []CreditStarted `json:"started"`
	Skipped []locator.Skip  `json:"skipped,omitempty"`
	// Declined is set when the caller said no at the confirmation:
	// nothing was sent, by the person's choice.
	Declined bool `json:"declined,omitempty"`
}

// Workflows are the credit-backs started, as FollowAll takes them.
func (r *CreditBackResult) Workflows() []Started {
	out := make([]Started, len(r.Started))
	for i, s := range r.Started {
		out[i] = Started{ID: s.ID, Symbol: s.Symbol}
	}
	return out
}

// CreditStarted is one credit-back started: its workflow and the row and
// shares it sells.
type CreditStarted struct {
	ID string `json:"id"`
	locator.Credit
}

// ShortRequest is a locate-then-short: make sure Quantity shares of Symbol
// are available to short (locating the shortfall under Policy), check the
// sizing, then sell short at Limit.
type ShortRequest struct {
	Symbol   string          `json:"symbol"`
	Quantity int64           `json:"quantity"`
	Limit    decimal.Decimal `json:"limit"`
	// OrderType (Market, Limit, Stop, StopLimit) and TimeInForce (Day,
	// Day_Plus, GoodTillCancel, GTC_Plus, IOC, FOK) are the order's;
	// empty: Limit, Day. Stop is the stop price of Stop and StopLimit.
	OrderType   string          `json:"orderType,omitempty"`
	TimeInForce string          `json:"timeInForce,omitempty"`
	Stop        decimal.Decimal `json:"stop,omitzero"`
	// Guard is the order's fat-finger guard.
	Guard workflow.Guard `json:"guard,omitzero"`
	// Route names the order route; empty means SMART on a live account and
	// none (the broker assigns one) on paper.
	Route  string          `json:"route,omitempty"`
	Policy workflow.Policy `json:"policy"`
	// Confirm says the caller confirms the order before it leaves
	// (Caller.Ask is set); without it the order leaves once sized.
	Confirm bool `json:"confirm,omitempty"`
	// Ask says the caller answers the locate's offer when the policy
	// leaves it to a person.
	Ask bool `json:"ask,omitempty"`
	// LocateID and ClientOrderID, when set, are the ids of the locate and
	// the order, made up by the caller so that a short sent again after
	// its owner went away neither locates nor sells twice.
	LocateID      string `json:"locateId,omitempty"`
	ClientOrderID string `json:"clientOrderId,omitempty"`
}

// ShortResult says how a short went: the locate behind it, and the order
// (nil when none was sent, with Reason saying why).
type ShortResult struct {
	Locate *workflow.Workflow `json:"locate,omitempty"`
	Order  *workflow.Order    `json:"order,omitempty"`
	Reason string             `json:"reason,omitempty"`
	// Declined is set when the caller said no to the order at its
	// confirmation: nothing was sent, by the person's choice.
	Declined bool `json:"declined,omitempty"`
}

// PlaceOrderRequest places an order; its ClientOrderID is made up when
// empty.
type PlaceOrderRequest struct {
	Order workflow.Order `json:"order"`
	// Guard is the order's fat-finger guard.
	Guard workflow.Guard `json:"guard,omitzero"`
}

// CancelOrderRequest cancels a working order locator placed.
type CancelOrderRequest struct {
	ClientOrderID string `json:"clientOrderId"`
}

// AnswerRequest is a person's answer to the offer waiting on workflow ID.
type AnswerRequest struct {
	ID     string `json:"id"`
	Accept bool   `json:"accept"`
	// Offer and Price, when set, are the offer the person saw (its leg's
	// quoteReqID, its price per share): the answer is refused when the
	// offer waiting is another, or at another price.
	Offer string          `json:"offer,omitempty"`
	Price decimal.Decimal `json:"price,omitzero"`
	// Via says where the answer was given ("locator decline", "the
	// dashboard"), for the words of the outcome.
	Via string `json:"via,omitempty"`
	// ByLink says the answer came by one of the offer's signed links
	// (package answerlink), which answer once between them: the owner
	// records their use before it answers, and refuses them once used
	// (KindUsed), even after a restart or if the answer failed. It
	// requires Offer.
	ByLink bool `json:"byLink,omitempty"`
}

// CancelRequest withdraws workflow ID.
type CancelRequest struct {
	ID string `json:"id"`
	// Interrupt says the caller withdraws its own request because it was
	// interrupted (Ctrl-C), rather than a person cancelling it.
	Interrupt bool `json:"interrupt,omitempty"`
	// Via says where the cancel was asked ("locator cancel"), for the
	// words of the outcome.
	Via string `json:"via,omitempty"`
}

// FollowRequest follows workflow ID (an id or a unique prefix of one).
type FollowRequest struct {
	ID string `json:"id"`
	// FromStart shows first the changes the workflow's log holds from
	// its start: a request's workflows move on before it returns, so a
	// follow that begins then would miss their first changes, and all
	// of those that have ended.
	FromStart bool `json:"fromStart,omitempty"`
}

// JobRequest runs one run of a job: the jobs file as the caller read it
// and the job's name, so that the owner checks and runs exactly what the
// caller's file says.
type JobRequest struct {
	Config []byte `json:"config"`
	Job    string `json:"job"`
	// Grace is how long the run may finish its step in flight once ctx
	// ends.
	Grace time.Duration `json:"grace"`
}

// JobResult is how a run went: its record, and why it did not reach its
// goal (Failure nil when it did).
type JobResult struct {
	Run     *locator.JobRun `json:"run"`
	Failure *JobFailure     `json:"failure,omitempty"`
}

// JobFailure is a run that did not reach its goal. Detail says what each
// part of the run came to; Worst is the worst end among its workflows
// (empty when no workflow caused the failure), from which the End of a
// command that ran it comes.
type JobFailure struct {
	// Detail is the run's account, part by part.
	Detail string `json:"detail"`
	// Worst is the worst workflow end behind the failure.
	Worst states.State `json:"worst,omitempty"`
	// Interrupted is set when the run was stopped (shutdown) before it
	// finished; its workflows stay in the store and resume at the next
	// start.
	Interrupted bool `json:"interrupted,omitempty"`
	// WorkflowIDs are the workflows behind the failure, for notifications.
	WorkflowIDs []string `json:"workflowIds,omitempty"`
	// FeeProblems are the problems a reconcile run found (missing, wrong
	// amount or unexplained fees, a day's total that differs), one line
	// each: such a run is notified as a fee problem rather than as a
	// failed job, and only when a line is new.
	FeeProblems []string `json:"feeProblems,omitempty"`
}

func (f *JobFailure) Error() string { return f.Detail }

// End is what ended a run that failed so: declined when the worst end was
// a policy decline, the broker when it rejected, expired or cancelled,
// and for a reconciliation with fee problems (as `locator fees` ends on
// the same check), interrupted when interrupted, failed otherwise.
func (f *JobFailure) End() End {
	switch {
	case f.Interrupted:
		return EndInterrupted
	case len(f.FeeProblems) > 0:
		return EndBroker
	case f.Worst == states.Declined:
		return EndDeclined
	case f.Worst == states.Rejected, f.Worst == states.Expired, f.Worst == states.Canceled:
		return EndBroker
	}
	return EndFailed
}

// FeesRequest asks for the fee check of a window of trade dates.
type FeesRequest struct {
	Window locator.FeeWindow `json:"window"`
	// Grace is how long after a fill its fee may still be pending before
	// it is missing (ledger.FeeGrace is the broker's usual delay).
	Grace time.Duration `json:"grace"`
	// Orders has the owner first bring the orders it holds as working up
	// to the broker's order book (engine.Engine.RefreshOrders): a working
	// order's later fill (at the next session's opening, say) is otherwise
	// not in its database, from which `report` reads the shares shorted
	// and the P&L. `report` asks for it.
	Orders bool `json:"orders,omitempty"`
	// Stored reconciles the ledger as the owner's last syncs left it,
	// without syncing it or reading the broker (ledger.CheckStored: no
	// totalLocateCosts, so no day's total is compared): what a page view
	// or a metrics scrape asks, which costs the broker nothing.
	Stored bool `json:"stored,omitempty"`
}

// FeesResult is the fee check: the reconciled report, and what the sync
// of the ledger before it read and stored.
type FeesResult struct {
	Report *locator.FeeReport `json:"report"`
	Synced locator.SyncResult `json:"synced"`
}

// StatusRequest asks for the account's state.
type StatusRequest struct {
	// Symbols, when set, are symbols to tell about too (Status.Shortable):
	// whether each is easy to borrow, its located inventory and the last
	// offers seen.
	Symbols []string `json:"symbols,omitempty"`
	// SettleOrders has the owner answer once no order waits on its
	// write-ahead state or on the broker's first answer: orders an
	// earlier run left unanswered are looked up by their ids (never sent
	// again) as the owner starts, and `locator resume` waits for them.
	SettleOrders bool `json:"settleOrders,omitempty"`
}

// Status is the account as its owner sees it.
type Status struct {
	Account string `json:"account"`
	// Env is the account's kind as the broker says (live or paper).
	Env   brokerclient.Env `json:"env"`
	Owner locator.Lease    `json:"owner"`
	// Standbys are the daemons standing by to take the account over.
	Standbys []locator.Standby `json:"standbys,omitempty"`
	// Held says the owner still holds the account's lease; Running is
	// false when its engine stopped on an error.
	Held    bool `json:"held"`
	Running bool `json:"running"`
	// LastPoll is when history was last read; Queued counts the locates
	// waiting for their turn to quote.
	LastPoll time.Time `json:"lastPoll,omitzero"`
	Queued   int       `json:"queued"`
	// Open are the unfinished workflows; Inventory the latest located
	// inventory read.
	Open      []workflow.Workflow         `json:"open"`
	Inventory []brokerclient.InventoryRow `json:"inventory"`
	// Shortable tells about each symbol of the request, in its order.
	Shortable []Shortable `json:"shortable,omitempty"`
	// Broker is the owner's connection to the broker now.
	Broker Broker `json:"broker"`
	// Budget is what the owner's locate budget leaves of today (none
	// when the account has no budget).
	Budget *workflow.BudgetLeft `json:"budget,omitempty"`
	// NotServed, when set, says the account has no owner: a daemon lists
	// it but cannot serve it now, and why (the other fields are then
	// empty but Account and Standbys).
	NotServed *NotServed `json:"notServed,omitempty"`
}

// NotServed is why a daemon (pid PID on Host) that lists an account cannot
// serve it now: Reason is the last attempt's error (another process
// holding its lease, its keys rejected, its engine stopped on an error);
// the account has not been served since Since, and the daemon tries it
// again at Retry.
type NotServed struct {
	PID    int       `json:"pid"`
	Host   string    `json:"host"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	Retry  time.Time `json:"retry"`
}

// Broker is the owner's connection to the broker as its reads and the P&L
// stream find it: a screen turns red on it, not on its own connection to
// the owner.
type Broker struct {
	// FailingSince is when the owner's reads of the broker (history and
	// inventory) began failing, zero while they succeed; Failure is the
	// last failure.
	FailingSince time.Time `json:"failingSince,omitzero"`
	Failure      string    `json:"failure,omitempty"`
	// Stream is the P&L stream's state (StreamOff until Today is first
	// asked).
	Stream StreamState `json:"stream,omitempty"`
	// Pacing is the owner's key pair's budget as its accounts share it
	// now, by route: the broker's buckets are per key pair, so many
	// accounts on one key pair stretch the idle ones' cadence.
	Pacing []Pacing `json:"pacing,omitempty"`
}

// Pacing is one route's bucket of the owner's key pair: its accounts'
// requests waiting for a token, and how long the last request of each
// priority waited for one, by priority ("urgent": a sent quote or
// sell-back waits on it; "normal"; "idle": an idle account's refresh).
type Pacing struct {
	Route   string             `json:"route"`
	Waiting map[string]int     `json:"waiting,omitempty"`
	Waited  map[string]float64 `json:"waitedSeconds,omitempty"`
}

// StreamState is the state of a stream the owner watches.
type StreamState string

// Stream states.
const (
	// StreamOff: not watched.
	StreamOff StreamState = ""
	// StreamConnecting: watched, no snapshot yet.
	StreamConnecting StreamState = "connecting"
	// StreamLive: connected, its snapshot in hand.
	StreamLive StreamState = "live"
	// StreamDown: it was live, or failed, and is not now.
	StreamDown StreamState = "down"
)

// TodayRequest asks for the account's trading day.
type TodayRequest struct{}

// Today is the account's trading day (Account.Today).
type Today struct {
	// Date is today's trade date on the broker's calendar.
	Date time.Time `json:"date"`
	// PnL is the account's figures in the P&L stream's model; nil until
	// its snapshot has arrived.
	PnL *brokerclient.PnLTotals `json:"pnl,omitempty"`
	// Positions are the open lots, each with its figures in the stream's
	// model (joined on the lot id, spec "Profit and loss response" rule 5).
	Positions []Position `json:"positions"`
	// Orders are the orders locator placed that are still working (or
	// not yet settled), newest first.
	Orders []workflow.Order `json:"orders"`
	// Locates are today's locates and credit-backs, newest first,
	// finished ones included.
	Locates []workflow.Workflow `json:"locates"`
	// Symbols are, per symbol with a position or a locate fee or credit
	// today, the spend and the P&L net of it, by symbol.
	Symbols []SymbolDay `json:"symbols"`
}

// Position is one open lot with its P&L.
type Position struct {
	PositionID string                    `json:"positionId"`
	Symbol     string                    `json:"symbol"`
	Side       brokerclient.PositionSide `json:"side"`
	Shares     int64                     `json:"shares"`
	PriceAvg   decimal.Decimal           `json:"priceAvg"`
	// PnL is the lot's figures in the P&L stream's model (zero until the
	// stream has the lot).
	PnL brokerclient.PnLCalc `json:"pnl"`
}

// SymbolDay is one symbol's day: what its locates cost net of the
// credit-backs (the report's figures: the ledger's amounts once posted,
// price × shares until then), and its P&L net of that.
type SymbolDay struct {
	Symbol   string          `json:"symbol"`
	Spend    decimal.Decimal `json:"spend"`
	Recovery decimal.Decimal `json:"recovery"`
	NetSpend decimal.Decimal `json:"netSpend"`
	// DayPnL is the day's realized and floating P&L of its lots in the
	// stream's model; NetPnL is DayPnL − NetSpend.
	DayPnL decimal.Decimal `json:"dayPnl"`
	NetPnL decimal.Decimal `json:"netPnl"`
}

// Shortable is what the owner knows of shorting one symbol: the broker's
// easy-to-borrow answer now, the symbol's rows of the latest located
// inventory read, and the offers of its latest quote that was priced (a
// locate's or a price check's), from the database.
type Shortable struct {
	Symbol       string                      `json:"symbol"`
	EasyToBorrow bool                        `json:"easyToBorrow"`
	Located      []brokerclient.InventoryRow `json:"located"`
	// Offers are the priced legs of that quote (both sides of a Reg SHO
	// pair), none when no quote of the symbol was priced; OfferedAt is
	// when the broker offered them, and OfferState how their workflow
	// stands (filled, priced, declined, ...).
	Offers     []workflow.Offer `json:"offers"`
	OfferedAt  time.Time        `json:"offeredAt,omitzero"`
	OfferState states.State     `json:"offerState,omitempty"`
}

// Update is one change of a workflow or an order, as every caller sees it.
type Update = workflow.Update
