package workflow

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
)

// Policy is the cost policy a locate request carries.
type Policy struct {
	// MaxPrice is the highest price per share to accept; zero means no cap.
	MaxPrice decimal.Decimal `json:"maxPrice"`
	// MaxCost is the highest total (price × shares) to accept; zero means no cap.
	MaxCost decimal.Decimal `json:"maxCost"`
	// AutoAccept accepts an offer within policy without asking.
	AutoAccept bool `json:"autoAccept"`
	// AllowSingleUse lets the engine take the SingleUse side of a Reg SHO pair,
	// which cannot be credited back once used.
	AllowSingleUse bool `json:"allowSingleUse"`
}

// Capped reports whether the policy sets a price or a cost cap.
func (p Policy) Capped() bool { return p.MaxPrice.IsPositive() || p.MaxCost.IsPositive() }

// Decides reports whether the policy decides an offer alone: it
// auto-accepts, or it sets a cap, which with nobody to ask means "accept
// within the cap" (never a quote that can only be declined).
func (p Policy) Decides() bool { return p.AutoAccept || p.Capped() }

// Cause says who ended a workflow short of its goal.
type Cause string

// Causes.
const (
	// CausePolicy: the cost policy declined the offer.
	CausePolicy Cause = "policy"
	// CausePrompt: the asker said no at its prompt.
	CausePrompt Cause = "prompt"
	// CausePerson: a person declined or cancelled it from elsewhere
	// (another shell, the dashboard, a link).
	CausePerson Cause = "person"
	// CauseNoAnswer: nobody answered while an accept could still land.
	CauseNoAnswer Cause = "no_answer"
	// CauseAskerGone: the process that was to answer went away.
	CauseAskerGone Cause = "asker_gone"
	// CauseInterrupt: the asker was interrupted and withdrew it.
	CauseInterrupt Cause = "interrupt"
	// CauseBudget: the offer would have passed the day's locate budget.
	CauseBudget Cause = "budget"
)

// Leg is the last history row seen for one leg of a quote (id or id.SU).
type Leg struct {
	Status brokercode.LocateStatus `json:"status"`
	Price  decimal.Decimal         `json:"price,omitzero"` // absent until the leg is priced
	Type   int                     `json:"type"`
	Shares int64                   `json:"shares"`
	Text   string                  `json:"text,omitempty"`
	Error  int                     `json:"error,omitempty"`
	// At is the row's updatedDate, the time of its latest transition on
	// the broker's clock (a fill's, for a Filled leg); zero when the row
	// carried no zone.
	At time.Time `json:"at,omitzero"`
}

// Workflow is one locate request or credit-back.
type Workflow struct {
	ID         string
	Kind       states.Kind
	Account    string
	Symbol     string
	Requested  int64 // shares the caller asked for
	Quantity   int64 // shares quoted or sold; 0 when nothing is sent
	QuoteReqID string
	// LostQuoteReqID is the quote sent before QuoteReqID and thought lost
	// (no history row within the settle grace), while its late rows are
	// watched for; empty when no quote was sent again.
	LostQuoteReqID string
	// Resends counts the quotes sent again after a loss (at most
	// MaxResends).
	Resends    int
	State      states.State
	Policy     Policy
	LocateType string          // credit-back type string, or the filled leg's type name
	AcceptedID string          // the leg accepted (QuoteReqID or QuoteReqID.SU)
	Price      decimal.Decimal `json:",omitzero"` // price per share of the offer taken (absent: none taken)
	Legs       map[string]Leg
	OfferedAt  time.Time `json:",omitzero"` // when the broker offered, on this machine's clock (absent: no offer yet)
	ExpiresAt  time.Time `json:",omitzero"` // end of the 30-second window, on this machine's clock
	SentAt     time.Time `json:",omitzero"` // when the quote or sell was answered (or left, until then; absent: not sent)
	Reason     string
	// Cause says who ended it short of its goal, when a person, the
	// policy or the asker did (empty when the goal was reached, or the
	// broker or a failure ended it): the words and exit code of its
	// outcome come from it, never from Reason's text.
	Cause Cause
	// Asker says which process asked for it (pid@host and the command).
	Asker     string
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
	// MAC authenticates the request part of the row (RowKey.Workflow):
	// made by the owner that created it, kept in the database, never sent
	// to followers.
	MAC string `json:"-"`
}

// Terminal reports whether the workflow has ended.
func (w *Workflow) Terminal() bool { return states.Terminal(w.State) }

// Located reports whether the shares asked for are there: filled, already
// covered by inventory, or not needed (easy to borrow).
func (w *Workflow) Located() bool {
	return w.Kind == states.Locate && (w.State == states.Filled || w.State == states.Covered || w.State == states.NotNeeded)
}

// OfferPrice is the price per share of the workflow's offer (Offered):
// the one taken, else the one it was offered, so a declined or expired
// offer has one too; for a credit-back, its history row's price. Zero
// when the broker never priced it.
func (w *Workflow) OfferPrice() decimal.Decimal {
	if o := Offered(w); o != nil {
		return o.Price
	}
	return decimal.Zero
}

// Total is the cost of the offer taken (price × shares), zero when none.
func (w *Workflow) Total() decimal.Decimal { return w.Price.Mul(decimal.NewFromInt(w.Quantity)) }

// clone copies w deeply enough that the step can edit the copy.
func (w *Workflow) clone() *Workflow {
	c := *w
	c.Legs = make(map[string]Leg, len(w.Legs))
	for k, v := range w.Legs {
		c.Legs[k] = v
	}
	return &c
}

// Offer is an offer the engine is considering, or puts to a person.
type Offer struct {
	WorkflowID string
	Symbol     string
	QuoteReqID string // the leg: id, or id.SU for the SingleUse side
	LocateType int
	Price      decimal.Decimal
	Shares     int64
	Total      decimal.Decimal
	ExpiresAt  time.Time
}

// PriceAnswers reports whether price names this offer's price: exactly as
// the broker sent it, or as a person is shown it (PriceDecimals places,
// rounded as the CLI, the dashboard and the links show it). A broker's
// JSON number is a float: 0.013 comes as 0.013000000000000001 and is
// shown 0.0130, and an answer naming what was shown is an answer to
// this offer; one naming another price is not.
func (o *Offer) PriceAnswers(price decimal.Decimal) bool {
	return o.Price.Equal(price) || o.Price.Round(PriceDecimals).Equal(price)
}

// Order is one order placed under a write-ahead clientOrderId, with what it
// sent and what the broker said about it. On the account API a field that
// is zero is absent: a request that places an order again names only its
// ClientOrderID, and a record shows no placeholder for what did not happen.
type Order struct {
	ClientOrderID string `json:",omitzero"` // the id generated and sent
	// BrokerOrderID is the clientOrderId in the broker's answer when it
	// differs from the one sent (the spec's R118 rewrite); empty otherwise.
	BrokerOrderID    string          `json:",omitzero"`
	Account          string          `json:",omitzero"`
	Symbol           string          `json:",omitzero"`
	Side             string          `json:",omitzero"` // Buy or Sell
	OpenClose        string          `json:",omitzero"` // Open or Close
	OrderType        string          `json:",omitzero"`
	TimeInForce      string          `json:",omitzero"`
	Quantity         int64           `json:",omitzero"`
	LimitPrice       decimal.Decimal `json:",omitzero"` // zero when none was sent
	StopPrice        decimal.Decimal `json:",omitzero"` // zero when none was sent (Stop and StopLimit carry one)
	Route            string          `json:",omitzero"` // as sent, or as paper assigned it when none was
	LocateWorkflowID string          `json:",omitzero"` // the locate workflow that covers a short
	State            states.State    `json:",omitzero"`
	OrderStatus      string          `json:",omitzero"` // the broker's last orderStatus
	Executed         int64           `json:",omitzero"`
	PriceAvg         decimal.Decimal `json:",omitzero"`
	Code             string          `json:",omitzero"` // rejection code, as parsed from text
	Text             string          `json:",omitzero"` // the broker's text
	Reason           string          `json:",omitzero"` // why the state is what it is, for a person
	CreatedAt        time.Time       `json:",omitzero"`
	SentAt           time.Time       `json:",omitzero"`
	UpdatedAt        time.Time       `json:",omitzero"`
	// ExecutedAt is when the broker last executed shares of the order, on
	// the broker's clock (the lastUpdated of the answer that showed them),
	// so that a fill is dated on the trading day the broker made it, not
	// the one locator heard of it; zero when that answer gave no time with
	// a zone.
	ExecutedAt time.Time `json:",omitzero"`
	Version    int64     `json:",omitzero"`
	// MAC authenticates the request part of the row (RowKey.Order), as
	// Workflow.MAC does.
	MAC string `json:"-"`
}

// Terminal reports whether the order can no longer change.
func (o *Order) Terminal() bool { return states.Terminal(o.State) }

// LookupID is the id to look the order up by: the one the broker answered
// with when it rewrote it, else the one sent.
func (o *Order) LookupID() string {
	if o.BrokerOrderID != "" {
		return o.BrokerOrderID
	}
	return o.ClientOrderID
}

// Settled reports whether the broker's answer is recorded: the order is not
// in a write-ahead state that must be sent or looked up.
func (o *Order) Settled() bool {
	return o.State != states.OrderIntent && o.State != states.OrderSent && o.State != states.OrderUnknown
}

// Update is one change of a workflow or an order, as the engine publishes
// it and every caller of the account API receives it.
type Update struct {
	// Workflow is set for a locate or credit-back change, Order for an
	// order's.
	Workflow *Workflow    `json:"workflow,omitempty"`
	Order    *Order       `json:"order,omitempty"`
	From     states.State `json:"from,omitempty"`
	Event    states.Event `json:"event,omitempty"`
	Reason   string       `json:"reason,omitempty"`
	// Offer is set when the change is an offer arriving.
	Offer *Offer `json:"offer,omitempty"`
	// QueuedUntil is set, with no change of state, when a locate joins the
	// quote queue behind the broker's same-symbol spacing: its quote cannot
	// leave before then (later still if another of the symbol is open), so
	// a person is told why nothing happens for up to half a minute.
	QueuedUntil time.Time `json:"queuedUntil,omitzero"`
	// FellBehind, alone, is a subscription's last update when its reader
	// left too many unread (engine.Config.Backlog): every update before it
	// was delivered in order, none after; the store holds what followed.
	FellBehind bool `json:"fellBehind,omitempty"`
}

// NewID makes up a workflow id, as a caller choosing its own (the id of a
// locate, a credit back or a short's locate) should. NewID, NewOrderID and
// NewQuoteReqID are the one place locator makes up an id.
func NewID() string { return "wf-" + uuid.NewString()[:13] }

// NewOrderID makes up an order's clientOrderId (a short's, a placed
// order's), recorded before the order is sent.
func NewOrderID() string { return uuid.NewString() }

// NewQuoteReqID makes up a quote's quoteReqID, recorded before the quote
// is sent.
func NewQuoteReqID() string { return uuid.NewString() }
