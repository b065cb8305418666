package workflow

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
)

// Rules are the broker's timing rules the step applies.
type Rules struct {
	// OfferWindow is an offer's validity (spec "Locate limits": 30 s).
	OfferWindow time.Duration
	// AcceptMargin is the least time that must remain in the window for an
	// accept to be sent: less, and it could not land in time.
	AcceptMargin time.Duration
	// SettleGrace is how long after a quote or sell left its history row may
	// take to appear, and how long past an offer's window its final row may
	// take, before the engine gives up on it: a quote is then sent again,
	// once, under a new quoteReqID; a sell never is.
	SettleGrace time.Duration
}

// DefaultRules are the spec's windows with this engine's margins.
var DefaultRules = Rules{OfferWindow: 30 * time.Second, AcceptMargin: 2 * time.Second, SettleGrace: 20 * time.Second}

// Env is what a step may know besides the record and the input.
type Env struct {
	Now time.Time
	// CanAsk is true when a person can answer an offer the policy leaves to
	// them.
	CanAsk bool
	Rules  Rules
	// Skew is how far the broker's clock runs ahead of Now (behind when
	// negative), as far as it is known.
	Skew time.Duration
	// Budget is the account's locate budget for the day; Spent, when the
	// budget is set, says what the day's locates spent (of the workflow's
	// symbol too).
	Budget Budget
	Spent  func(symbol string) Spent
}

// overBudget says why offer o is past env's budget, or "".
func overBudget(w *Workflow, o *Offer, env Env) string {
	if !env.Budget.Set() || env.Spent == nil {
		return ""
	}
	return env.Budget.Refuses(w.Symbol, o.Total, env.Spent(w.Symbol))
}

// ErrNotOpen is returned for an input a workflow can no longer take (a
// cancel of one that ended, say).
var ErrNotOpen = errors.New("workflow is not open")

// Transition is one state change, with its reason and the broker's rows
// behind it.
type Transition struct {
	From   states.State
	To     states.State
	Event  states.Event
	Reason string
	Raw    []byte
}

// Step is what the step function decided: the record to persist (nil when
// nothing changes), the transition it makes (nil when only fields change),
// the effects to carry out once the record is committed, and a follow-up
// input to step at once (the decision on an offer that just arrived).
type Step struct {
	Next       *Workflow
	Transition *Transition
	Effects    []Effect
	Then       Input
	// Offer is set when an offer arrives (for displays).
	Offer *Offer
	// Err refuses the input; nothing changes.
	Err error
}

// Input is something that happens to a workflow.
type Input interface{ input() }

// Begin: a new locate request after its checks.
type Begin struct {
	EasyToBorrow bool
	Available    int64 // shares available to short (see Available)
}

// QuoteTurn: the dispatcher's turn to quote this request.
type QuoteTurn struct{ Available int64 }

// SellTurn: the credit-back's turn to send its sell.
type SellTurn struct{}

// Rows: new or changed history rows of this workflow (both legs of a Reg
// SHO pair that changed in one poll arrive together).
type Rows struct {
	Legs map[string]Leg
	// Latest is the id of the leg whose row changed last.
	Latest string
	// OfferedAt is when the broker says the latest row changed, on this
	// machine's clock; zero when unknown.
	OfferedAt time.Time
	Raw       []byte
}

// Decide: weigh the live offer under the policy (after it arrived, or after
// a restart).
type Decide struct{}

// Answer: a person's answer to an offer put to them.
type Answer struct {
	Accept bool
	// Side, when set, is the leg a person chose (its quoteReqID), one of
	// Sides; empty: the one Choose takes.
	Side string
	// Late is set when the answer came when an accept could no longer land.
	Late bool
	// By says who refused, when not the asker at its prompt (a person
	// elsewhere, or the asker gone); Reason says so in words.
	By     Cause
	Reason string
}

// CancelAsked: the user asked to cancel. By is CausePerson unless the
// asker withdraws its own request (CauseInterrupt); Reason says where.
type CancelAsked struct {
	By     Cause
	Reason string
}

// Written: a broker write carried out by a worker, and how it went.
type Written struct {
	Op      Op
	Outcome Outcome
	Detail  string
	// At is when the answer came back (or the write gave up).
	At time.Time
}

// Tick: the timers' check (windows and grace periods), after a history
// read.
type Tick struct {
	// Read is when the history read behind this check was asked for. A
	// row it lacks was missing then, not necessarily now: the verdicts of
	// absence (no row after SettleGrace, no final row after the offer
	// window or the trading day) count to Read, never to Now, so an owner
	// that takes the read late (stalled, descheduled) does not give up on
	// a row a later read shows. Zero counts to Now.
	Read time.Time
}

// Resume: re-drive what the persisted state was doing, after a restart.
type Resume struct{}

// Abandon: the engine gives up (a record that cannot be saved, say).
type Abandon struct{ Reason string }

func (Begin) input()       {}
func (QuoteTurn) input()   {}
func (SellTurn) input()    {}
func (Rows) input()        {}
func (Decide) input()      {}
func (Answer) input()      {}
func (CancelAsked) input() {}
func (Written) input()     {}
func (Tick) input()        {}
func (Resume) input()      {}
func (Abandon) input()     {}

// Op names a broker write.
type Op string

// Broker writes.
const (
	OpQuote  Op = "quote"
	OpSell   Op = "credit-back"
	OpAccept Op = "accept"
	OpCancel Op = "cancel"
)

// Outcome is how a broker write went.
type Outcome int

// Outcomes of a broker write.
const (
	// Done: the broker took it.
	Done Outcome = iota
	// Refused: the broker answered that it did not take it.
	Refused
	// Unknown: the answer was lost; history settles it.
	Unknown
	// Failed: it could not be sent (the engine stopping, say).
	Failed
)

// Effect is something to carry out once the step's record is committed.
type Effect interface{ effect() }

// SendQuote sends the quote of Next.Quantity under its QuoteReqID.
type SendQuote struct{}

// SendAccept accepts leg Leg (the id, or id.SU).
type SendAccept struct{ Leg string }

// SendCancel cancels the quote or sell at the broker (safe to repeat).
type SendCancel struct {
	// QuoteReqID is the quote to cancel when it is not the workflow's own
	// (a quote thought lost, or the one sent in its place).
	QuoteReqID string
}

// SendSell sends the credit-back's sell.
type SendSell struct{}

// Ask puts the offer to a person.
type Ask struct{ Offer Offer }

// Enqueue queues a locate for the quote dispatcher.
type Enqueue struct{}

// RefreshInventory asks for an inventory read (after a fill or a sell).
type RefreshInventory struct{}

func (SendQuote) effect()        {}
func (SendAccept) effect()       {}
func (SendCancel) effect()       {}
func (SendSell) effect()         {}
func (Ask) effect()              {}
func (Enqueue) effect()          {}
func (RefreshInventory) effect() {}

// ErrPriceCheckAccepts refuses a step that would accept a price check's
// offer: a price check only looks.
var ErrPriceCheckAccepts = errors.New("workflow: a price check never accepts an offer")

// StepWorkflow is the pure step of a locate, price-check or credit-back
// workflow: the record w, the input and the environment give the
// transition and the effects. Every state change is looked up in the
// states tables through the constructors below; none is written by hand.
// A step of a price check that would send an accept is refused whatever
// led to it (its table has no accept either).
func StepWorkflow(w *Workflow, in Input, env Env) Step {
	s := stepWorkflow(w, in, env)
	if w.Kind == states.PriceCheck {
		for _, e := range s.Effects {
			if _, ok := e.(SendAccept); ok {
				return Step{Err: fmt.Errorf("%w (%s)", ErrPriceCheckAccepts, w.ID)}
			}
		}
	}
	return s
}

func stepWorkflow(w *Workflow, in Input, env Env) Step {
	if env.Rules == (Rules{}) {
		env.Rules = DefaultRules
	}
	switch in := in.(type) {
	case Begin:
		return begin(w, in)
	case QuoteTurn:
		return quoteTurn(w, in, env)
	case SellTurn:
		if w.Kind != states.CreditBack {
			return Step{Err: fmt.Errorf("workflow: %s is a %s, not a credit-back", w.ID, w.Kind)}
		}
		if w.State != states.Requested {
			return Step{}
		}
		if end, soon := dayEndsSoon(env); soon {
			return move(w, states.Fail, fmt.Sprintf("not sent: the broker's trading day ends at %s, before its credit could show (the shares end with the day)", market.DateTime(end)), nil)
		}
		return move(w, states.Send, "credit-back sent", func(n *Workflow) { n.SentAt = env.Now }, SendSell{})
	case Rows:
		return rows(w, in, env)
	case Decide:
		return decide(w, env)
	case Answer:
		return answer(w, in, env)
	case CancelAsked:
		return cancelAsked(w, in)
	case Written:
		return written(w, in)
	case Tick:
		return tick(w, in, env)
	case Resume:
		return resume(w, env)
	case Abandon:
		return move(w, states.Fail, in.Reason, nil, leaveNothingOpen(w)...)
	}
	return Step{Err: fmt.Errorf("workflow: unknown input %T", in)}
}

// begin decides a new workflow before any quote: easy to borrow, covered
// by inventory, or queued for its quote turn.
func begin(w *Workflow, in Begin) Step {
	switch {
	case in.EasyToBorrow:
		return move(w, states.Skip, w.Symbol+" is easy to borrow", nil)
	case w.Kind == states.Locate && in.Available >= w.Requested:
		return move(w, states.Cover, fmt.Sprintf("inventory holds %d available", in.Available), nil)
	}
	return Step{Effects: []Effect{Enqueue{}}}
}

// quoteTurn sends a quote for what inventory does not cover, in lots.
func quoteTurn(w *Workflow, in QuoteTurn, env Env) Step {
	if !states.Quotes(w.Kind) {
		return Step{Err: fmt.Errorf("workflow: %s is a %s, not a locate or price check", w.ID, w.Kind)}
	}
	if w.State != states.Requested && w.State != states.Requoting {
		return Step{}
	}
	// A price check asks the price of what it was asked, whatever
	// inventory holds.
	qty := RoundUpLot(w.Requested)
	if w.Kind == states.Locate {
		if in.Available >= w.Requested {
			return move(w, states.Cover, fmt.Sprintf("inventory now covers the request (%d available)", in.Available), nil, cancelLost(w)...)
		}
		qty = RoundUpLot(w.Requested - in.Available)
	}
	return move(w, states.Send, "quote sent", func(n *Workflow) { n.Quantity, n.SentAt = qty, env.Now }, SendQuote{})
}

// answer takes a person's answer to an offer still open.
func answer(w *Workflow, in Answer, env Env) Step {
	if w.State != states.Offered {
		return Step{} // it ended, or was decided, while the person thought
	}
	switch {
	case in.Late:
		return decline(w, "no answer while an accept could still land", CauseNoAnswer)
	case !in.Accept && in.By != "":
		return decline(w, in.Reason, in.By)
	case !in.Accept:
		return decline(w, "declined at the prompt", CausePrompt)
	}
	return acceptSide(w, env, in.Side)
}

// cancelAsked cancels an open workflow on request: before sending, nothing
// goes out; after, a cancel does.
func cancelAsked(w *Workflow, in CancelAsked) Step {
	by, reason := in.By, in.Reason
	if by == "" {
		by = CausePerson
	}
	if reason == "" {
		reason = "on request"
	}
	caused := func(n *Workflow) { n.Cause = by }
	switch w.State {
	case states.Requested, states.Requoting:
		return move(w, states.Cancel, reason+"; cancelled before sending", caused, cancelLost(w)...)
	case states.Quoting, states.Pending, states.Offered, states.Submitted, states.New:
		return move(w, states.Cancel, reason, caused, append([]Effect{SendCancel{}}, cancelLost(w)...)...)
	case states.Releasing:
		// A price check's cancel is on its way already: the asker may
		// wait for its end as for any cancel.
		return Step{}
	}
	return Step{Err: fmt.Errorf("%w: %s is %s and cannot be cancelled now", ErrNotOpen, w.ID, w.State)}
}

// written takes the broker's answer to a quote or a sell: a refusal ends
// the workflow; an answer dates when the broker had it.
func written(w *Workflow, in Written) Step {
	if in.Op != OpQuote && in.Op != OpSell {
		return Step{}
	}
	if in.Outcome == Refused {
		return move(w, states.RowRejected, "broker refused the "+string(in.Op)+": "+in.Detail, nil)
	}
	if in.Outcome != Failed && in.At.After(w.SentAt) {
		// The broker had it by the time it answered: the same-symbol
		// spacing counts from here, in this process and the next.
		n := w.clone()
		n.SentAt = in.At
		return Step{Next: n}
	}
	return Step{}
}

// transition is the one constructor of transitions, of workflows and
// orders alike: the destination comes from kind's table; a self-transition
// yields the same state and no Transition; an event the table refuses from
// this state yields an error.
func transition(kind states.Kind, from states.State, ev states.Event, reason string) (states.State, *Transition, error) {
	to, changed, err := states.Next(kind, from, ev)
	if err != nil || !changed {
		return from, nil, err
	}
	return to, &Transition{From: from, To: to, Event: ev, Reason: reason}, nil
}

// reasonAfter is the one reason rule of workflows and orders: a state
// change that gives a reason replaces the record's; anything else keeps it
// (the transition log holds the earlier ones).
func reasonAfter(old string, tr *Transition) string {
	if tr != nil && tr.Reason != "" {
		return tr.Reason
	}
	return old
}

// move makes a workflow's transition (see transition); edit may change
// fields even when the state stays.
func move(w *Workflow, ev states.Event, reason string, edit func(*Workflow), effects ...Effect) Step {
	to, tr, err := transition(w.Kind, w.State, ev, reason)
	if err != nil {
		return Step{Err: err}
	}
	n := w.clone()
	if edit != nil {
		edit(n)
	}
	n.State, n.Reason = to, reasonAfter(n.Reason, tr)
	return Step{Next: n, Transition: tr, Effects: effects}
}

// leaveNothingOpen cancels what a workflow given up on may have open at
// the broker: its quote or sell once sent, and a quote thought lost.
func leaveNothingOpen(w *Workflow) []Effect {
	var out []Effect
	if w.State != states.Requested && w.State != states.Requoting {
		out = append(out, SendCancel{})
	}
	return append(out, cancelLost(w)...)
}

// cancelLost cancels the quote thought lost, if there is one: it may yet
// reach the broker, and a cancel is safe to repeat.
func cancelLost(w *Workflow) []Effect {
	if w.LostQuoteReqID == "" {
		return nil
	}
	return []Effect{SendCancel{QuoteReqID: w.LostQuoteReqID}}
}

// MaxResends bounds how many times a locate's quote is sent again after a
// proven loss (no history row within the settle grace), each under a new
// quoteReqID: a loss is a transport fault, and a few in a row mean the
// broker is unreachable, not unlucky.
const MaxResends = 3

// requoteID is the quoteReqID a lost quote is sent again under: new, and
// derived from the lost one so that the step stays pure.
func requoteID(lost string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("locator:requote:"+lost)).String()
}

// decide takes an offered workflow to accept, ask or decline.
func decide(w *Workflow, env Env) Step {
	if w.State != states.Offered {
		return Step{}
	}
	o, within, reason := Choose(w)
	switch {
	case o == nil || !within:
		return decline(w, reason, CausePolicy)
	case w.Kind == states.Locate && overBudget(w, o, env) != "":
		return decline(w, overBudget(w, o, env), CauseBudget)
	case w.Policy.AutoAccept || (!env.CanAsk && w.Policy.Capped()):
		return accept(w, env)
	case env.CanAsk:
		return Step{Effects: []Effect{Ask{Offer: *o}}}
	}
	// Nobody to ask yet: the asker may come back (a follower reconnecting
	// to a new owner); tick declines when the window is about to close.
	return Step{}
}

// accept records the choice of leg, then sends the accept, unless it could
// no longer land in the window: then the offer is declined (cancelled).
func accept(w *Workflow, env Env) Step { return acceptSide(w, env, "") }

// acceptSide is accept of the leg side a person chose among Sides (""
// for the one Choose takes).
func acceptSide(w *Workflow, env Env, side string) Step {
	o, within, reason := Choose(w)
	if side != "" {
		i := slices.IndexFunc(Sides(w), func(s Offer) bool { return s.QuoteReqID == side })
		if i < 0 {
			return decline(w, fmt.Sprintf("the side answered (%s) is not on offer within the policy", side), CausePolicy)
		}
		o, within = &Sides(w)[i], true
	}
	if o == nil || !within {
		return decline(w, reason, CausePolicy)
	}
	if why := overBudget(w, o, env); w.Kind == states.Locate && why != "" {
		return decline(w, why, CauseBudget) // a person's yes too: the budget is the desk's
	}
	if left := w.ExpiresAt.Sub(env.Now); left < env.Rules.AcceptMargin {
		// Too late for anyone's answer: the window, not a choice, ends it.
		return decline(w, fmt.Sprintf("only %s left in the offer window; an accept could not land", left.Round(time.Millisecond)), "")
	}
	if end, soon := dayEndsSoon(env); soon {
		// The fill could land after the 8 PM rollover, when the history
		// no longer shows the day's rows: it would be paid and never
		// confirmed, for shares that end with the day.
		return decline(w, fmt.Sprintf("the broker's trading day ends at %s, before an accept's fill could show", market.DateTime(end)), "")
	}
	return move(w, states.Accept, fmt.Sprintf("accept %s at %s × %d = %s", o.QuoteReqID, o.Price, o.Shares, o.Total.StringFixed(2)),
		func(n *Workflow) {
			n.AcceptedID, n.Price, n.LocateType = o.QuoteReqID, o.Price, string(brokercode.LocateTypeForCode(o.LocateType))
		}, SendAccept{Leg: o.QuoteReqID})
}

// decline records the refusal and who made it, then cancels the offer
// (both sides of a pair) so that it does not linger at the broker.
func decline(w *Workflow, reason string, by Cause) Step {
	return move(w, states.Decline, reason, func(n *Workflow) { n.Cause = by }, SendCancel{})
}

// tick settles what the broker never settled: a quote whose row never
// appeared is sent again once, under a new quoteReqID, at its turn (the
// lost one is cancelled if it turns up late); a second such quote, or a
// sell, fails and is never re-sent; an offer, pending quote or refusal past
// its window with no final row ends. Each of these counts to in.Read, the
// read that lacked the row; an offer nobody answered is declined on Now.
func tick(w *Workflow, in Tick, env Env) Step {
	if in.Read.IsZero() {
		in.Read = env.Now
	}
	if s := dayEnded(w, in, env); s.Next != nil {
		return s
	}
	switch w.State {
	case states.Quoting, states.Submitted:
		if len(w.Legs) == 0 && !w.SentAt.IsZero() && in.Read.Sub(w.SentAt) > env.Rules.SettleGrace {
			if w.State == states.Quoting && w.Resends < MaxResends {
				// The quote lost before this one, if any, is cancelled: only
				// the latest lost one is watched for late rows.
				return move(w, states.Requote, fmt.Sprintf("no history row %s after sending: the quote was lost on the way; sending it again under a new quoteReqID", env.Rules.SettleGrace),
					func(n *Workflow) {
						n.Resends, n.LostQuoteReqID, n.QuoteReqID = w.Resends+1, w.QuoteReqID, requoteID(w.QuoteReqID)
					},
					append([]Effect{Enqueue{}}, cancelLost(w)...)...)
			}
			reason := fmt.Sprintf("no history row %s after sending; not re-sent", env.Rules.SettleGrace)
			if w.Resends > 0 {
				reason = fmt.Sprintf("no history row %s after sending it %d times; not re-sent again", env.Rules.SettleGrace, w.Resends+1)
			}
			return move(w, states.Fail, reason, nil, leaveNothingOpen(w)...)
		}
	case states.Offered, states.Accepting, states.Pending, states.Declining, states.Releasing:
		if w.State == states.Offered && !w.ExpiresAt.IsZero() && !env.Now.Before(w.ExpiresAt.Add(-env.Rules.AcceptMargin)) {
			// Whoever was to answer did not in time: refuse and cancel
			// while the cancel can still land.
			return decline(w, "no answer while an accept could still land", CauseNoAnswer)
		}
		if !w.ExpiresAt.IsZero() && in.Read.After(w.ExpiresAt.Add(env.Rules.SettleGrace)) {
			// Cancelling is safe to repeat and leaves nothing open at the
			// broker, whatever became of the quote.
			reason := "offer window closed without a final history row"
			if w.State == states.Releasing {
				reason = "price seen; the offer window closed without the cancel's row"
			}
			return move(w, states.Timeout, reason, nil, SendCancel{})
		}
	}
	return Step{}
}

// dayEndsSoon reports whether the broker's trading day ends (its 8 PM
// rollover, end) within SettleGrace and OfferWindow, the longest this
// engine waits for a row: an accept or a sell sent now could settle, or
// be seen settled, only after it, when the history no longer shows the
// day's rows (an owner stalled for seconds, as under load, sees its rows
// late).
func dayEndsSoon(env Env) (end time.Time, soon bool) {
	now := env.Now.Add(env.Skew)
	end = market.SessionEnd(now)
	return end, end.Sub(now) < env.Rules.SettleGrace+env.Rules.OfferWindow
}

// dayEnded gives up on a quote or sell still under way once the broker's
// trading day it was sent in has ended and an offer made by then has run
// out: the broker's history serves the trading day's rows only (spec
// "Short locates": history "for the trading day"), so the final row of a
// quote, offer or sell the 8 PM rollover overtook never shows, and nothing
// else would end it. By then an offer made up to SettleGrace after the
// rollover has expired unanswered (nobody saw it); the cancel sent, as for
// any workflow given up on, settles whatever else is left. The day it was
// sent in is taken on the broker's clock, a second early (a skew below a
// second is not known), so a quote sent just before the rollover is never
// waited on a day long. The end is judged at in.Read, the read that lacked
// the final row.
func dayEnded(w *Workflow, in Tick, env Env) Step {
	if w.SentAt.IsZero() || states.Terminal(w.State) {
		return Step{}
	}
	end := market.SessionEnd(w.SentAt.Add(env.Skew - time.Second))
	if in.Read.Add(env.Skew).Before(end.Add(env.Rules.SettleGrace + env.Rules.OfferWindow)) {
		return Step{}
	}
	s := move(w, states.Fail, fmt.Sprintf("still under way after the broker's trading day it was sent in ended (%s): its final row will never show", market.DateTime(end)), nil, leaveNothingOpen(w)...)
	if s.Err != nil {
		return Step{}
	}
	return s
}

// resume re-drives a recovered workflow from its persisted state.
func resume(w *Workflow, env Env) Step {
	switch w.State {
	case states.Requested, states.Requoting:
		if w.Kind == states.CreditBack {
			return StepWorkflow(w, SellTurn{}, env)
		}
		return Step{Effects: []Effect{Enqueue{}}}
	case states.Offered:
		return decide(w, env)
	case states.Accepting:
		// An accept is safe to repeat (spec "Short locates" rule 3), and
		// only this one resend happens per recovery.
		if w.Legs[w.AcceptedID].Status == brokercode.LocateStatusOffered && env.Now.Before(w.ExpiresAt) {
			return Step{Effects: []Effect{SendAccept{Leg: w.AcceptedID}}}
		}
	case states.Canceling, states.Declining, states.Releasing:
		return Step{Effects: []Effect{SendCancel{}}}
	}
	return Step{}
}
