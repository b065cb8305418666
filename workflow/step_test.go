package workflow_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// ---------------------------------------------------------------------------
// Fixtures shared by the package's tests.
// ---------------------------------------------------------------------------

// t0 is "now" in every test unless a case moves it.
var t0 = time.Date(2026, time.November, 26, 14, 30, 0, 0, time.UTC)

var rules = workflow.DefaultRules

// equateEmpty makes a nil effect list equal to an empty one.
var equateEmpty = cmpopts.EquateEmpty()

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func envAt(now time.Time, canAsk bool) workflow.Env {
	return workflow.Env{Now: now, CanAsk: canAsk, Rules: rules}
}

// Legs as the history shows them (spec "Locate history row": price 0 while
// Quoting or Pending, non-zero once Offered or Filled; "Quote expired." on
// expiry).
func quotingLeg() workflow.Leg {
	return workflow.Leg{Status: brokercode.LocateStatusQuoting, Shares: 200}
}
func pendingLeg(typ int) workflow.Leg {
	return workflow.Leg{Status: brokercode.LocateStatusPending, Type: typ, Shares: 200}
}
func offeredLeg(price string, typ int) workflow.Leg {
	return workflow.Leg{Status: brokercode.LocateStatusOffered, Price: dec(price), Type: typ, Shares: 200}
}
func filledLeg(price string, typ int) workflow.Leg {
	return workflow.Leg{Status: brokercode.LocateStatusFilled, Price: dec(price), Type: typ, Shares: 200}
}
func canceledLeg() workflow.Leg {
	return workflow.Leg{Status: brokercode.LocateStatusCanceled, Price: dec("0.05"), Type: brokercode.TypeCodeLocate, Shares: 200}
}
func expiredLeg(typ int) workflow.Leg {
	return workflow.Leg{Status: brokercode.LocateStatusExpired, Type: typ, Shares: 200, Text: "Quote expired."}
}
func rejectedLeg(text string, code int) workflow.Leg {
	return workflow.Leg{Status: brokercode.LocateStatusRejected, Shares: 200, Text: text, Error: code}
}

// Credit-back rows carry negative locateShares (spec "Locate statuses").
func sellLeg(st brokercode.LocateStatus) workflow.Leg {
	l := workflow.Leg{Status: st, Type: brokercode.TypeCodeLocate, Shares: -200}
	if st == brokercode.LocateStatusRejected {
		l.Text, l.Error = "16 Insufficient shares.", 16
	}
	return l
}

type legs = map[string]workflow.Leg

func rowsOf(latest string, l legs) workflow.Rows {
	return workflow.Rows{Legs: l, Latest: latest, Raw: []byte(`[{"quoteReqID":"` + latest + `"}]`)}
}

type wfMod func(*workflow.Workflow)

func withLegs(l legs) wfMod { return func(w *workflow.Workflow) { w.Legs = l } }
func withPolicy(p workflow.Policy) wfMod {
	return func(w *workflow.Workflow) { w.Policy = p }
}
func withWindow(offeredAt time.Time) wfMod {
	return func(w *workflow.Workflow) {
		w.OfferedAt, w.ExpiresAt = offeredAt, offeredAt.Add(rules.OfferWindow)
	}
}
func withAccepted(id string, l workflow.Leg) wfMod {
	return func(w *workflow.Workflow) {
		w.AcceptedID, w.Price, w.LocateType = id, l.Price, string(brokercode.LocateTypeForCode(l.Type))
	}
}
func withState(st states.State) wfMod { return func(w *workflow.Workflow) { w.State = st } }

// withLost records lost as the quote sent before Q1 and thought lost.
func withLost(lost string) wfMod { return func(w *workflow.Workflow) { w.LostQuoteReqID = lost } }

// withResends has the quote sent again n times already.
func withResends(n int) wfMod { return func(w *workflow.Workflow) { w.Resends = n } }

// locate is a locate request for 200 HTBX under quote id Q1, in state st.
// Anything past Requested has been sent 5 s before t0.
func locate(st states.State, mods ...wfMod) *workflow.Workflow {
	w := &workflow.Workflow{
		ID: "wf-1", Kind: states.Locate, Account: "ACCT1", Symbol: "HTBX", Requested: 200,
		QuoteReqID: "Q1", State: st, Policy: workflow.Policy{AutoAccept: true},
		CreatedAt: t0.Add(-time.Minute), UpdatedAt: t0.Add(-time.Second), Version: 3,
	}
	if st != states.Requested {
		w.Quantity, w.SentAt = 200, t0.Add(-5*time.Second)
	}
	for _, m := range mods {
		m(w)
	}
	return w
}

// offered is a locate holding a live single-leg offer of 0.05 per share
// (total 10.00), offered 1 s before t0 (29 s left in the window).
func offered(mods ...wfMod) *workflow.Workflow {
	base := []wfMod{withLegs(legs{"Q1": offeredLeg("0.05", brokercode.TypeCodeLocate)}), withWindow(t0.Add(-time.Second))}
	return locate(states.Offered, append(base, mods...)...)
}

// creditBack is a credit-back of 200 HTBX Locate shares under sell id S1.
func creditBack(st states.State, mods ...wfMod) *workflow.Workflow {
	w := &workflow.Workflow{
		ID: "cb-1", Kind: states.CreditBack, Account: "ACCT1", Symbol: "HTBX", Requested: 200, Quantity: 200,
		QuoteReqID: "S1", LocateType: "Locate", State: st, CreatedAt: t0.Add(-time.Minute),
	}
	if st != states.Requested {
		w.SentAt = t0.Add(-5 * time.Second)
	}
	for _, m := range mods {
		m(w)
	}
	return w
}

func copyWorkflow(w *workflow.Workflow) *workflow.Workflow {
	c := *w
	c.Legs = maps.Clone(w.Legs)
	return &c
}

// result is what a test compares of a Step.
type result struct {
	State   states.State // Next.State; "" when Next is nil
	Event   states.Event // the transition's event; "" when none
	Effects []workflow.Effect
	Then    workflow.Input
	Err     bool
}

func summary(s workflow.Step) result {
	r := result{Effects: s.Effects, Then: s.Then, Err: s.Err != nil}
	if s.Next != nil {
		r.State = s.Next.State
	}
	if s.Transition != nil {
		r.Event = s.Transition.Event
	}
	return r
}

// stepChain steps w with in, then with each follow-up input the step asks
// for (Then), and returns the last record and every step.
func stepChain(t *testing.T, w *workflow.Workflow, in workflow.Input, env workflow.Env) (*workflow.Workflow, []workflow.Step) {
	t.Helper()
	var steps []workflow.Step
	for in != nil {
		if len(steps) > 4 {
			t.Fatalf("follow-up inputs do not settle: %+v", steps)
		}
		s := workflow.StepWorkflow(w, in, env)
		steps = append(steps, s)
		if s.Err != nil {
			t.Fatalf("step %T: %v", in, s.Err)
		}
		if s.Next != nil {
			w = s.Next
		}
		in = s.Then
	}
	return w, steps
}

func allEffects(steps []workflow.Step) []workflow.Effect {
	var out []workflow.Effect
	for _, s := range steps {
		out = append(out, s.Effects...)
	}
	return out
}

// ---------------------------------------------------------------------------
// Every row of every table is driven by the step functions.
// ---------------------------------------------------------------------------

type rowKey struct {
	Kind  states.Kind
	Src   states.State
	Event states.Event
}

func (k rowKey) String() string { return fmt.Sprintf("%s/%s--%s", k.Kind, k.Src, k.Event) }

// wfDrive is a record in the row's source state and the input that makes
// StepWorkflow take the row.
type wfDrive struct {
	w   *workflow.Workflow
	in  workflow.Input
	env workflow.Env // zero: envAt(t0, false)
}

type orderDrive struct {
	o  *workflow.Order
	in workflow.OrderInput
}

func workflowDrivers() map[rowKey]wfDrive {
	L, CB := states.Locate, states.CreditBack
	loc := func(st states.State) *workflow.Workflow {
		switch st {
		case states.Requested, states.Quoting:
			return locate(st)
		case states.Requoting:
			return locate(st, withLost("Q0"))
		case states.Pending:
			return locate(st, withLegs(legs{"Q1": pendingLeg(brokercode.TypeCodeLocate)}), withWindow(t0.Add(-5*time.Second)))
		case states.Accepting:
			l := offeredLeg("0.05", brokercode.TypeCodeLocate)
			return offered(withState(st), withAccepted("Q1", l))
		case states.Filled:
			l := filledLeg("0.05", brokercode.TypeCodeLocate)
			return offered(withState(st), withLegs(legs{"Q1": l}), withAccepted("Q1", l))
		case states.Canceled, states.Declined:
			return offered(withState(st), withLegs(legs{"Q1": canceledLeg()}))
		case states.Expired:
			return offered(withState(st), withLegs(legs{"Q1": expiredLeg(brokercode.TypeCodeLocate)}))
		case states.Rejected:
			return locate(st, withLegs(legs{"Q1": rejectedLeg("11 No shares available. Please try again later.", 11)}))
		}
		return offered(withState(st)) // Offered, Canceling, Declining
	}
	cb := func(st states.State) *workflow.Workflow {
		switch st {
		case states.Requested, states.Submitted:
			return creditBack(st)
		case states.Credited:
			return creditBack(st, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusFilled)}))
		case states.Canceled:
			return creditBack(st, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusCanceled)}))
		case states.Rejected:
			return creditBack(st, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusRejected)}))
		}
		return creditBack(st, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)})) // New, Canceling
	}
	q1 := func(l workflow.Leg) workflow.Rows { return rowsOf("Q1", legs{"Q1": l}) }
	s1 := func(st brokercode.LocateStatus) workflow.Rows { return rowsOf("S1", legs{"S1": sellLeg(st)}) }
	pastWindow := envAt(t0.Add(-5*time.Second+rules.OfferWindow+rules.SettleGrace+time.Millisecond), false)
	pastOffer := envAt(t0.Add(-time.Second+rules.OfferWindow+rules.SettleGrace+time.Millisecond), false)
	pastSend := envAt(t0.Add(-5*time.Second+rules.SettleGrace+time.Millisecond), false)

	d := map[rowKey]wfDrive{
		// Locate: the request (spec "Short locates" rule 1: check
		// easy-to-borrow, then quote).
		{L, states.Requested, states.Skip}:   {w: loc(states.Requested), in: workflow.Begin{EasyToBorrow: true}},
		{L, states.Requested, states.Cover}:  {w: loc(states.Requested), in: workflow.Begin{Available: 200}},
		{L, states.Requested, states.Send}:   {w: loc(states.Requested), in: workflow.QuoteTurn{}},
		{L, states.Requested, states.Cancel}: {w: loc(states.Requested), in: workflow.CancelAsked{}},
		{L, states.Requested, states.Fail}:   {w: loc(states.Requested), in: workflow.Abandon{Reason: "record not saved"}},
		// Quoting: rows by status (spec "Locate statuses").
		{L, states.Quoting, states.RowQuoting}:  {w: loc(states.Quoting), in: q1(quotingLeg())},
		{L, states.Quoting, states.RowPending}:  {w: loc(states.Quoting), in: q1(pendingLeg(brokercode.TypeCodeLocate))},
		{L, states.Quoting, states.RowOffered}:  {w: loc(states.Quoting), in: q1(offeredLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Quoting, states.RowFilled}:   {w: loc(states.Quoting), in: q1(filledLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Quoting, states.Cancel}:      {w: loc(states.Quoting), in: workflow.CancelAsked{}},
		{L, states.Quoting, states.RowCanceled}: {w: loc(states.Quoting), in: q1(canceledLeg())},
		{L, states.Quoting, states.RowExpired}:  {w: loc(states.Quoting), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{L, states.Quoting, states.RowRejected}: {w: loc(states.Quoting), in: q1(rejectedLeg("14 Locate is already pending.", 14))},
		{L, states.Quoting, states.Requote}:     {w: loc(states.Quoting), in: workflow.Tick{Read: pastSend.Now}, env: pastSend},
		{L, states.Quoting, states.Fail}:        {w: locate(states.Quoting, withLost("Q0"), withResends(workflow.MaxResends)), in: workflow.Tick{Read: pastSend.Now}, env: pastSend},
		// Requoting: the lost quote is sent again once, at its turn; it is
		// taken if it turns up offered (or filled) first.
		{L, states.Requoting, states.Send}:       {w: loc(states.Requoting), in: workflow.QuoteTurn{}},
		{L, states.Requoting, states.Cover}:      {w: loc(states.Requoting), in: workflow.QuoteTurn{Available: 200}},
		{L, states.Requoting, states.Cancel}:     {w: loc(states.Requoting), in: workflow.CancelAsked{}},
		{L, states.Requoting, states.Fail}:       {w: loc(states.Requoting), in: workflow.Abandon{Reason: "stopping"}},
		{L, states.Requoting, states.RowQuoting}: {w: loc(states.Requoting), in: rowsOf("Q0", legs{"Q0": quotingLeg()})},
		{L, states.Requoting, states.RowPending}: {w: loc(states.Requoting), in: rowsOf("Q0", legs{"Q0": pendingLeg(brokercode.TypeCodeLocate)})},
		{L, states.Requoting, states.RowOffered}: {w: loc(states.Requoting), in: rowsOf("Q0", legs{"Q0": offeredLeg("0.05", brokercode.TypeCodeLocate)})},
		{L, states.Requoting, states.RowFilled}:  {w: loc(states.Requoting), in: rowsOf("Q0", legs{"Q0": filledLeg("0.05", brokercode.TypeCodeLocate)})},
		// Pending.
		{L, states.Pending, states.RowPending}:  {w: loc(states.Pending), in: q1(pendingLeg(brokercode.TypeCodeLocate))},
		{L, states.Pending, states.RowOffered}:  {w: loc(states.Pending), in: q1(offeredLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Pending, states.RowFilled}:   {w: loc(states.Pending), in: q1(filledLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Pending, states.Cancel}:      {w: loc(states.Pending), in: workflow.CancelAsked{}},
		{L, states.Pending, states.RowCanceled}: {w: loc(states.Pending), in: q1(canceledLeg())},
		{L, states.Pending, states.RowExpired}:  {w: loc(states.Pending), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{L, states.Pending, states.RowRejected}: {w: loc(states.Pending), in: q1(rejectedLeg("11 No shares available. Please try again later.", 11))},
		{L, states.Pending, states.Timeout}:     {w: loc(states.Pending), in: workflow.Tick{Read: pastWindow.Now}, env: pastWindow},
		{L, states.Pending, states.Fail}:        {w: loc(states.Pending), in: workflow.Abandon{Reason: "stopping"}},
		// Offered: the policy decides within the 30-second window.
		{L, states.Offered, states.RowOffered}: {w: loc(states.Offered), in: q1(offeredLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Offered, states.Accept}:     {w: loc(states.Offered), in: workflow.Decide{}},
		{L, states.Offered, states.RowFilled}:  {w: loc(states.Offered), in: q1(filledLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Offered, states.Decline}: {
			w: offered(withPolicy(workflow.Policy{MaxPrice: dec("0.01")})), in: workflow.Decide{},
		},
		{L, states.Offered, states.Cancel}:      {w: loc(states.Offered), in: workflow.CancelAsked{}},
		{L, states.Offered, states.RowCanceled}: {w: loc(states.Offered), in: q1(canceledLeg())},
		{L, states.Offered, states.RowExpired}:  {w: loc(states.Offered), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{L, states.Offered, states.Fail}:        {w: loc(states.Offered), in: workflow.Abandon{Reason: "stopping"}},
		// Accepting: only the accepted leg counts.
		{L, states.Accepting, states.RowFilled}:   {w: loc(states.Accepting), in: q1(filledLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Accepting, states.RowCanceled}: {w: loc(states.Accepting), in: q1(canceledLeg())},
		{L, states.Accepting, states.RowExpired}:  {w: loc(states.Accepting), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{L, states.Accepting, states.Timeout}:     {w: loc(states.Accepting), in: workflow.Tick{Read: pastOffer.Now}, env: pastOffer},
		{L, states.Accepting, states.Fail}:        {w: loc(states.Accepting), in: workflow.Abandon{Reason: "stopping"}},
		// Canceling (a user's cancel in flight).
		{L, states.Canceling, states.RowFilled}:   {w: loc(states.Canceling), in: q1(filledLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Canceling, states.RowCanceled}: {w: loc(states.Canceling), in: q1(canceledLeg())},
		{L, states.Canceling, states.RowExpired}:  {w: loc(states.Canceling), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{L, states.Canceling, states.Fail}:        {w: loc(states.Canceling), in: workflow.Abandon{Reason: "stopping"}},
		// Declining (the policy's cancel in flight).
		{L, states.Declining, states.Confirm}:   {w: loc(states.Declining), in: q1(canceledLeg())},
		{L, states.Declining, states.RowFilled}: {w: loc(states.Declining), in: q1(filledLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Declining, states.Timeout}:   {w: loc(states.Declining), in: workflow.Tick{Read: pastOffer.Now}, env: pastOffer},
		{L, states.Declining, states.Fail}:      {w: loc(states.Declining), in: workflow.Abandon{Reason: "stopping"}},
		// Rows seen again after the end.
		{L, states.Filled, states.RowFilled}:     {w: loc(states.Filled), in: q1(filledLeg("0.05", brokercode.TypeCodeLocate))},
		{L, states.Canceled, states.RowCanceled}: {w: loc(states.Canceled), in: q1(canceledLeg())},
		{L, states.Expired, states.RowExpired}:   {w: loc(states.Expired), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{L, states.Rejected, states.RowRejected}: {w: loc(states.Rejected), in: q1(rejectedLeg("11 No shares available. Please try again later.", 11))},
		{L, states.Declined, states.Confirm}:     {w: loc(states.Declined), in: q1(canceledLeg())},

		// Credit-back (spec "Short locates" rule 5, "Locate statuses" 48).
		{CB, states.Requested, states.Send}:        {w: cb(states.Requested), in: workflow.SellTurn{}},
		{CB, states.Requested, states.Cancel}:      {w: cb(states.Requested), in: workflow.CancelAsked{}},
		{CB, states.Requested, states.Fail}:        {w: cb(states.Requested), in: workflow.Abandon{Reason: "record not saved"}},
		{CB, states.Submitted, states.RowNew}:      {w: cb(states.Submitted), in: s1(brokercode.LocateStatusNew)},
		{CB, states.Submitted, states.RowFilled}:   {w: cb(states.Submitted), in: s1(brokercode.LocateStatusFilled)},
		{CB, states.Submitted, states.Cancel}:      {w: cb(states.Submitted), in: workflow.CancelAsked{}},
		{CB, states.Submitted, states.RowCanceled}: {w: cb(states.Submitted), in: s1(brokercode.LocateStatusCanceled)},
		{CB, states.Submitted, states.RowRejected}: {w: cb(states.Submitted), in: s1(brokercode.LocateStatusRejected)},
		{CB, states.Submitted, states.Fail}:        {w: cb(states.Submitted), in: workflow.Tick{Read: pastSend.Now}, env: pastSend},
		{CB, states.New, states.RowNew}:            {w: cb(states.New), in: s1(brokercode.LocateStatusNew)},
		{CB, states.New, states.RowFilled}:         {w: cb(states.New), in: s1(brokercode.LocateStatusFilled)},
		{CB, states.New, states.Cancel}:            {w: cb(states.New), in: workflow.CancelAsked{}},
		{CB, states.New, states.RowCanceled}:       {w: cb(states.New), in: s1(brokercode.LocateStatusCanceled)},
		{CB, states.New, states.RowRejected}:       {w: cb(states.New), in: s1(brokercode.LocateStatusRejected)},
		{CB, states.New, states.Fail}:              {w: cb(states.New), in: workflow.Abandon{Reason: "stopping"}},
		{CB, states.Canceling, states.RowCanceled}: {w: cb(states.Canceling), in: s1(brokercode.LocateStatusCanceled)},
		{CB, states.Canceling, states.RowRejected}: {w: cb(states.Canceling), in: s1(brokercode.LocateStatusRejected)},
		{CB, states.Canceling, states.Fail}:        {w: cb(states.Canceling), in: workflow.Abandon{Reason: "stopping"}},
		{CB, states.Credited, states.RowFilled}:    {w: cb(states.Credited), in: s1(brokercode.LocateStatusFilled)},
		{CB, states.Canceled, states.RowCanceled}:  {w: cb(states.Canceled), in: s1(brokercode.LocateStatusCanceled)},
		{CB, states.Rejected, states.RowRejected}:  {w: cb(states.Rejected), in: s1(brokercode.LocateStatusRejected)},
	}
	// Price check: the locate's way to an offer, then straight to its
	// cancel (no accept, no decision).
	pc := func(st states.State) *workflow.Workflow {
		w := loc(st)
		switch st {
		case states.Releasing:
			w = offered(withState(st))
		case states.Priced:
			w = offered(withState(st), withLegs(legs{"Q1": canceledLeg()}))
		}
		w.Kind, w.Policy = states.PriceCheck, workflow.Policy{}
		return w
	}
	PC := states.PriceCheck
	for k, v := range map[rowKey]wfDrive{
		{PC, states.Requested, states.Skip}:        {w: pc(states.Requested), in: workflow.Begin{EasyToBorrow: true}},
		{PC, states.Requested, states.Send}:        {w: pc(states.Requested), in: workflow.QuoteTurn{Available: 200}},
		{PC, states.Requested, states.Cancel}:      {w: pc(states.Requested), in: workflow.CancelAsked{}},
		{PC, states.Requested, states.Fail}:        {w: pc(states.Requested), in: workflow.Abandon{Reason: "record not saved"}},
		{PC, states.Quoting, states.RowQuoting}:    {w: pc(states.Quoting), in: q1(quotingLeg())},
		{PC, states.Quoting, states.RowPending}:    {w: pc(states.Quoting), in: q1(pendingLeg(brokercode.TypeCodeLocate))},
		{PC, states.Quoting, states.RowOffered}:    {w: pc(states.Quoting), in: q1(offeredLeg("0.05", brokercode.TypeCodeLocate))},
		{PC, states.Quoting, states.Requote}:       {w: pc(states.Quoting), in: workflow.Tick{Read: pastSend.Now}, env: pastSend},
		{PC, states.Quoting, states.Cancel}:        {w: pc(states.Quoting), in: workflow.CancelAsked{}},
		{PC, states.Quoting, states.RowCanceled}:   {w: pc(states.Quoting), in: q1(canceledLeg())},
		{PC, states.Quoting, states.RowExpired}:    {w: pc(states.Quoting), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{PC, states.Quoting, states.RowRejected}:   {w: pc(states.Quoting), in: q1(rejectedLeg("56 easy to borrow", 56))},
		{PC, states.Quoting, states.Fail}:          {w: pc(states.Quoting), in: workflow.Abandon{Reason: "stopping"}},
		{PC, states.Requoting, states.Send}:        {w: pc(states.Requoting), in: workflow.QuoteTurn{}},
		{PC, states.Requoting, states.Cancel}:      {w: pc(states.Requoting), in: workflow.CancelAsked{}},
		{PC, states.Requoting, states.Fail}:        {w: pc(states.Requoting), in: workflow.Abandon{Reason: "stopping"}},
		{PC, states.Requoting, states.RowQuoting}:  {w: pc(states.Requoting), in: rowsOf("Q0", legs{"Q0": quotingLeg()})},
		{PC, states.Requoting, states.RowPending}:  {w: pc(states.Requoting), in: rowsOf("Q0", legs{"Q0": pendingLeg(brokercode.TypeCodeLocate)})},
		{PC, states.Requoting, states.RowOffered}:  {w: pc(states.Requoting), in: rowsOf("Q0", legs{"Q0": offeredLeg("0.05", brokercode.TypeCodeLocate)})},
		{PC, states.Pending, states.RowPending}:    {w: pc(states.Pending), in: q1(pendingLeg(brokercode.TypeCodeLocate))},
		{PC, states.Pending, states.RowOffered}:    {w: pc(states.Pending), in: q1(offeredLeg("0.05", brokercode.TypeCodeLocate))},
		{PC, states.Pending, states.Cancel}:        {w: pc(states.Pending), in: workflow.CancelAsked{}},
		{PC, states.Pending, states.RowCanceled}:   {w: pc(states.Pending), in: q1(canceledLeg())},
		{PC, states.Pending, states.RowExpired}:    {w: pc(states.Pending), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{PC, states.Pending, states.RowRejected}:   {w: pc(states.Pending), in: q1(rejectedLeg("11 No shares available. Please try again later.", 11))},
		{PC, states.Pending, states.Timeout}:       {w: pc(states.Pending), in: workflow.Tick{Read: pastWindow.Now}, env: pastWindow},
		{PC, states.Pending, states.Fail}:          {w: pc(states.Pending), in: workflow.Abandon{Reason: "stopping"}},
		{PC, states.Releasing, states.RowOffered}:  {w: pc(states.Releasing), in: q1(offeredLeg("0.06", brokercode.TypeCodeLocate))},
		{PC, states.Releasing, states.Confirm}:     {w: pc(states.Releasing), in: q1(canceledLeg())},
		{PC, states.Releasing, states.Timeout}:     {w: pc(states.Releasing), in: workflow.Tick{Read: pastOffer.Now}, env: pastOffer},
		{PC, states.Releasing, states.Fail}:        {w: pc(states.Releasing), in: workflow.Abandon{Reason: "stopping"}},
		{PC, states.Canceling, states.RowCanceled}: {w: pc(states.Canceling), in: q1(canceledLeg())},
		{PC, states.Canceling, states.RowExpired}:  {w: pc(states.Canceling), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{PC, states.Canceling, states.Fail}:        {w: pc(states.Canceling), in: workflow.Abandon{Reason: "stopping"}},
		{PC, states.Priced, states.Confirm}:        {w: pc(states.Priced), in: q1(canceledLeg())},
		{PC, states.Canceled, states.RowCanceled}:  {w: pc(states.Canceled), in: q1(canceledLeg())},
		{PC, states.Expired, states.RowExpired}:    {w: pc(states.Expired), in: q1(expiredLeg(brokercode.TypeCodeLocate))},
		{PC, states.Rejected, states.RowRejected}:  {w: pc(states.Rejected), in: q1(rejectedLeg("11 No shares available. Please try again later.", 11))},
	} {
		d[k] = v
	}
	return d
}

func orderDrivers() map[rowKey]orderDrive {
	O := states.Order
	d := map[rowKey]orderDrive{
		{O, states.OrderIntent, states.Send}:   {o: order(states.OrderIntent), in: workflow.OrderSend{}},
		{O, states.OrderIntent, states.Cancel}: {o: order(states.OrderIntent), in: workflow.OrderCancelAsked{}},
		// An intent found after a crash may have left: looked up, not sent.
		{O, states.OrderIntent, states.Lost}:          {o: order(states.OrderIntent), in: workflow.OrderResume{}},
		{O, states.OrderSent, states.Refuse}:          {o: order(states.OrderSent), in: workflow.OrderRefused{Reason: "400 schema"}},
		{O, states.OrderSent, states.Lost}:            {o: order(states.OrderSent), in: workflow.OrderLost{Reason: "502"}},
		{O, states.OrderUnknown, states.Unregistered}: {o: order(states.OrderUnknown), in: workflow.OrderNotFound{}},
		{O, states.Pending, states.Cancel}:            {o: order(states.Pending), in: workflow.OrderCancelAsked{}},
		{O, states.OrderWorking, states.Cancel}:       {o: order(states.OrderWorking), in: workflow.OrderCancelAsked{}},
	}
	// The engine gives up on an order whose record cannot be saved.
	for _, src := range []states.State{states.OrderIntent, states.OrderSent, states.OrderUnknown, states.Pending, states.OrderWorking, states.Canceling} {
		d[rowKey{O, src, states.Fail}] = orderDrive{o: order(src), in: workflow.Abandon{Reason: "its record could not be saved"}}
	}
	// Spec "Order statuses": the broker's orderStatus, seen from every state
	// the table lets it move. Each OrderSeen carries something new (the
	// route paper assigned), so a repeat still yields a record.
	add := func(ev states.Event, status brokercode.OrderStatus, srcs ...states.State) {
		for _, src := range srcs {
			d[rowKey{O, src, ev}] = orderDrive{o: order(src), in: seenStatus(status)}
		}
	}
	live := []states.State{states.OrderSent, states.OrderUnknown, states.Pending, states.OrderWorking, states.Canceling}
	add(states.StatusPending, "PendingNew", states.OrderSent, states.OrderUnknown, states.Pending, states.Canceling)
	add(states.StatusWorking, "PartiallyFilled", states.OrderSent, states.OrderUnknown, states.Pending, states.OrderWorking, states.Canceling)
	add(states.StatusFilled, "Filled", append(live, states.Filled)...)
	add(states.StatusCanceled, "Canceled", append(live, states.Canceled)...)
	add(states.StatusExpired, "Expired", append(live, states.Expired)...)
	add(states.StatusRejected, "Rejected", append(live, states.Rejected)...)
	return d
}

// TestEveryTableRowIsDriven checks that each (event, src) row of the three
// transition tables is taken by StepWorkflow or StepOrder from a record in
// src, lands in the row's Dst, reports the row's event (self-loops report
// no transition), and leaves the input record untouched.
func TestEveryTableRowIsDriven(t *testing.T) {
	t.Parallel()
	wf, od := workflowDrivers(), orderDrivers()
	rows := map[rowKey]states.State{}
	for _, kind := range states.Kinds() {
		for _, e := range states.Events(kind) {
			for _, src := range e.Src {
				k := rowKey{kind, states.State(src), states.Event(e.Name)}
				if dst, dup := rows[k]; dup {
					t.Errorf("%s: the table lists this (event, src) twice (to %s and %s); looplab keeps only one", k, dst, e.Dst)
				}
				rows[k] = states.State(e.Dst)
			}
		}
	}
	for k, dst := range rows {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			var (
				next  states.State
				tr    *workflow.Transition
				err   error
				moved bool
			)
			switch drv, okw := wf[k]; {
			case okw:
				env := drv.env
				if env.Now.IsZero() {
					env = envAt(t0, false)
				}
				before := copyWorkflow(drv.w)
				s := workflow.StepWorkflow(drv.w, drv.in, env)
				if diff := cmp.Diff(before, drv.w); diff != "" {
					t.Errorf("StepWorkflow changed its input record (-before +after):\n%s", diff)
				}
				err, tr, moved = s.Err, s.Transition, s.Next != nil
				if moved {
					next = s.Next.State
				}
			default:
				drv, oko := od[k]
				if !oko {
					t.Fatalf("no test case drives table row %s -> %s: add one to workflowDrivers/orderDrivers, "+
						"or drop the row if no input can take it", k, dst)
				}
				before := *drv.o
				s := workflow.StepOrder(drv.o, drv.in, t0)
				if diff := cmp.Diff(&before, drv.o); diff != "" {
					t.Errorf("StepOrder changed its input record (-before +after):\n%s", diff)
				}
				err, tr, moved = s.Err, s.Transition, s.Next != nil
				if moved {
					next = s.Next.State
				}
			}
			if err != nil {
				t.Fatalf("step refused the input: %v", err)
			}
			if !moved {
				t.Fatalf("step returned no record: it did not take the row")
			}
			if next != dst {
				t.Errorf("Next.State = %s, want the row's Dst %s", next, dst)
			}
			if k.Src == dst {
				if tr != nil {
					t.Errorf("self-loop produced a transition %+v, want none", *tr)
				}
				return
			}
			want := workflow.Transition{From: k.Src, To: dst, Event: k.Event}
			if tr == nil {
				t.Fatalf("no transition, want %+v", want)
			}
			got := workflow.Transition{From: tr.From, To: tr.To, Event: tr.Event}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("transition (-want +got):\n%s", diff)
			}
		})
	}
	// Every driver names a real row.
	for k := range wf {
		if _, ok := rows[k]; !ok {
			t.Errorf("driver %s names no table row (stale case?)", k)
		}
	}
	for k := range od {
		if _, ok := rows[k]; !ok {
			t.Errorf("driver %s names no table row (stale case?)", k)
		}
	}
}

// ---------------------------------------------------------------------------
// Reg SHO pairs (spec "Short locates" rule 2).
// ---------------------------------------------------------------------------

func TestRegSHOPair(t *testing.T) {
	t.Parallel()
	const pb, su = brokercode.TypeCodePreBorrow, brokercode.TypeCodeSingleUse
	auto := workflow.Policy{AutoAccept: true}
	autoSU := workflow.Policy{AutoAccept: true, AllowSingleUse: true}
	cases := []struct {
		name   string
		w      *workflow.Workflow
		rows   legs
		latest string
		// want
		state      states.State
		effects    []workflow.Effect
		offerLeg   string // the Offer shown when the pair arrives offered
		acceptedID string
		price      string
		typeName   string
		reason     string // substring of the final Reason
	}{
		{
			name: "rule 2: both priced, cheaper SingleUse taken with AllowSingleUse",
			w:    locate(states.Quoting, withPolicy(autoSU)), latest: "Q1.SU",
			rows:  legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1.SU"}},
			offerLeg: "Q1.SU", acceptedID: "Q1.SU", price: "0.04", typeName: "SingleUse",
		},
		{
			name: "rule 2: both priced, SingleUse not allowed: the PreBorrow side is taken",
			w:    locate(states.Quoting, withPolicy(auto)), latest: "Q1.SU",
			rows:  legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}},
			offerLeg: "Q1", acceptedID: "Q1", price: "0.06", typeName: "PreBorrow",
		},
		{
			name: "rule 2: both priced, PreBorrow cheaper wins even with AllowSingleUse",
			w:    locate(states.Quoting, withPolicy(autoSU)), latest: "Q1",
			rows:  legs{"Q1": offeredLeg("0.03", pb), "Q1.SU": offeredLeg("0.04", su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}},
			offerLeg: "Q1", acceptedID: "Q1", price: "0.03", typeName: "PreBorrow",
		},
		{
			name: "rule 2: both priced equally: the primary id is taken (stable choice)",
			w:    locate(states.Quoting, withPolicy(autoSU)), latest: "Q1.SU",
			rows:  legs{"Q1": offeredLeg("0.05", pb), "Q1.SU": offeredLeg("0.05", su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}},
			offerLeg: "Q1", acceptedID: "Q1", price: "0.05", typeName: "PreBorrow",
		},
		{
			name: "rule 2: both priced, SingleUse within the price cap, PreBorrow above it",
			w:    locate(states.Quoting, withPolicy(workflow.Policy{MaxPrice: dec("0.05"), AllowSingleUse: true})), latest: "Q1",
			rows:  legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1.SU"}},
			offerLeg: "Q1.SU", acceptedID: "Q1.SU", price: "0.04", typeName: "SingleUse",
		},
		{
			name: "rule 2: both priced, SingleUse not allowed and PreBorrow above the cap: declined",
			w:    locate(states.Quoting, withPolicy(workflow.Policy{MaxPrice: dec("0.05")})), latest: "Q1",
			rows:  legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)},
			state: states.Declining, effects: []workflow.Effect{workflow.SendCancel{}},
			offerLeg: "Q1.SU", reason: "SingleUse side not allowed",
		},
		{
			name: "rule 2: only the PreBorrow side priced (SingleUse still pending): it is accepted",
			w:    locate(states.Quoting, withPolicy(autoSU)), latest: "Q1",
			rows:  legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": pendingLeg(su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}},
			offerLeg: "Q1", acceptedID: "Q1", price: "0.06", typeName: "PreBorrow",
		},
		{
			name: "rule 2: only the SingleUse side priced, allowed: it is accepted",
			w:    locate(states.Quoting, withPolicy(autoSU)), latest: "Q1.SU",
			rows:  legs{"Q1": pendingLeg(pb), "Q1.SU": offeredLeg("0.04", su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1.SU"}},
			offerLeg: "Q1.SU", acceptedID: "Q1.SU", price: "0.04", typeName: "SingleUse",
		},
		{
			name: "rule 2: only the SingleUse side priced, not allowed: declined with the reason",
			w:    locate(states.Quoting, withPolicy(auto)), latest: "Q1.SU",
			rows:  legs{"Q1": pendingLeg(pb), "Q1.SU": offeredLeg("0.04", su)},
			state: states.Declining, effects: []workflow.Effect{workflow.SendCancel{}},
			offerLeg: "Q1.SU", reason: "SingleUse side not allowed",
		},
		{
			name: "rule 2: a side at 65 with price 0 is unpriced: the priced side is taken",
			w:    locate(states.Quoting, withPolicy(autoSU)), latest: "Q1.SU",
			rows:  legs{"Q1": {Status: brokercode.LocateStatusOffered, Type: pb, Shares: 200}, "Q1.SU": offeredLeg("0.04", su)},
			state: states.Accepting, effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1.SU"}},
			offerLeg: "Q1.SU", acceptedID: "Q1.SU", price: "0.04", typeName: "SingleUse",
		},
		{
			name: "rule 2: neither priced, both Pending: the workflow is Pending",
			w:    locate(states.Quoting, withPolicy(autoSU)), latest: "Q1.SU",
			rows:  legs{"Q1": pendingLeg(pb), "Q1.SU": pendingLeg(su)},
			state: states.Pending,
		},
		{
			name: "rule 2: neither priced, one side expired and one still Pending: still Pending",
			w: locate(states.Pending, withPolicy(autoSU), withWindow(t0.Add(-10*time.Second)),
				withLegs(legs{"Q1": pendingLeg(pb), "Q1.SU": pendingLeg(su)})),
			latest: "Q1.SU", rows: legs{"Q1.SU": expiredLeg(su)},
			state: states.Pending,
		},
		{
			name: "rule 2: neither priced, both expire: Expired",
			w: locate(states.Pending, withPolicy(autoSU), withWindow(t0.Add(-10*time.Second)),
				withLegs(legs{"Q1": pendingLeg(pb), "Q1.SU": pendingLeg(su)})),
			latest: "Q1.SU", rows: legs{"Q1": expiredLeg(pb), "Q1.SU": expiredLeg(su)},
			state: states.Expired, reason: "Quote expired.",
		},
		{
			name:   "rule 2: neither priced, both expire while still Quoting: Expired",
			w:      locate(states.Quoting, withPolicy(autoSU)),
			latest: "Q1", rows: legs{"Q1": expiredLeg(pb), "Q1.SU": expiredLeg(su)},
			state: states.Expired, reason: "Quote expired.",
		},
		{
			name:   "rule 4: both sides rejected (a quote already open): Rejected with the broker's text",
			w:      locate(states.Quoting, withPolicy(autoSU)),
			latest: "Q1", rows: legs{"Q1": rejectedLeg("14 Locate is already pending.", 14), "Q1.SU": rejectedLeg("14 Locate is already pending.", 14)},
			state: states.Rejected, reason: "14 Locate is already pending.",
		},
		{
			name: "rule 2: accepting one expires the other: the sibling's expiry is ignored",
			w: offered(withState(states.Accepting), withAccepted("Q1.SU", offeredLeg("0.04", su)),
				withLegs(legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)})),
			latest: "Q1", rows: legs{"Q1": expiredLeg(pb)},
			state: states.Accepting, acceptedID: "Q1.SU", price: "0.04", typeName: "SingleUse",
		},
		{
			name: "rule 2: accepted PreBorrow side, the SingleUse sibling expires: ignored",
			w: offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.06", pb)),
				withLegs(legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)})),
			latest: "Q1.SU", rows: legs{"Q1.SU": expiredLeg(su)},
			state: states.Accepting, acceptedID: "Q1", price: "0.06", typeName: "PreBorrow",
		},
		{
			name: "rule 2/3: the accepted side fills as the sibling expires (one poll): Filled",
			w: offered(withState(states.Accepting), withAccepted("Q1.SU", offeredLeg("0.04", su)),
				withLegs(legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)})),
			latest: "Q1.SU", rows: legs{"Q1": expiredLeg(pb), "Q1.SU": filledLeg("0.04", su)},
			state: states.Filled, effects: []workflow.Effect{workflow.RefreshInventory{}},
			acceptedID: "Q1.SU", price: "0.04", typeName: "SingleUse",
		},
		{
			name: "rule 2: a side filled elsewhere (no accept recorded) names the accepted leg",
			w: offered(withPolicy(autoSU),
				withLegs(legs{"Q1": offeredLeg("0.06", pb), "Q1.SU": offeredLeg("0.04", su)})),
			latest: "Q1.SU", rows: legs{"Q1": expiredLeg(pb), "Q1.SU": filledLeg("0.04", su)},
			state: states.Filled, effects: []workflow.Effect{workflow.RefreshInventory{}},
			acceptedID: "Q1.SU", price: "0.04", typeName: "SingleUse",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, steps := stepChain(t, c.w, rowsOf(c.latest, c.rows), envAt(t0, false))
			if got.State != c.state {
				t.Errorf("state = %s, want %s (steps %+v)", got.State, c.state, steps)
			}
			if diff := cmp.Diff(c.effects, allEffects(steps), equateEmpty); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
			if got.AcceptedID != c.acceptedID {
				t.Errorf("AcceptedID = %q, want %q", got.AcceptedID, c.acceptedID)
			}
			if c.price != "" && !got.Price.Equal(dec(c.price)) {
				t.Errorf("Price = %s, want %s", got.Price, c.price)
			}
			if got.LocateType != c.typeName && c.typeName != "" {
				t.Errorf("LocateType = %q, want %q", got.LocateType, c.typeName)
			}
			if !strings.Contains(got.Reason, c.reason) {
				t.Errorf("Reason = %q, want it to contain %q", got.Reason, c.reason)
			}
			var offerLeg string
			if o := steps[0].Offer; o != nil {
				offerLeg = o.QuoteReqID
			}
			if offerLeg != c.offerLeg {
				t.Errorf("Offer shown for leg %q, want %q", offerLeg, c.offerLeg)
			}
			for id, l := range c.rows {
				if !cmp.Equal(got.Legs[id], l) {
					t.Errorf("leg %s = %+v, want the row %+v recorded", id, got.Legs[id], l)
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------
// The cost policy on a live offer (Decide and Answer).
// ---------------------------------------------------------------------------

func TestPolicy(t *testing.T) {
	t.Parallel()
	ask := workflow.Ask{Offer: workflow.Offer{
		WorkflowID: "wf-1", Symbol: "HTBX", QuoteReqID: "Q1", LocateType: brokercode.TypeCodeLocate,
		Price: dec("0.05"), Shares: 200, Total: dec("10"), ExpiresAt: t0.Add(29 * time.Second),
	}}
	accepted := result{State: states.Accepting, Event: states.Accept, Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}}}
	declined := result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}}
	cases := []struct {
		name   string
		policy workflow.Policy
		canAsk bool
		in     workflow.Input
		state  states.State // default Offered
		want   result
		reason string
	}{
		{name: "AutoAccept, nobody to ask: accepted", policy: workflow.Policy{AutoAccept: true}, in: workflow.Decide{}, want: accepted, reason: "accept Q1 at 0.05 × 200 = 10.00"},
		{name: "AutoAccept with someone to ask: accepted without asking", policy: workflow.Policy{AutoAccept: true}, canAsk: true, in: workflow.Decide{}, want: accepted},
		{name: "price cap, nobody to ask: accepted within the cap", policy: workflow.Policy{MaxPrice: dec("0.10")}, in: workflow.Decide{}, want: accepted},
		{name: "price cap equal to the price: accepted (the cap is inclusive)", policy: workflow.Policy{MaxPrice: dec("0.05")}, in: workflow.Decide{}, want: accepted},
		{name: "cost cap, nobody to ask: accepted within the cap", policy: workflow.Policy{MaxCost: dec("20")}, in: workflow.Decide{}, want: accepted},
		{name: "cost cap equal to the total: accepted (the cap is inclusive)", policy: workflow.Policy{MaxCost: dec("10.00")}, in: workflow.Decide{}, want: accepted},
		{name: "price cap with someone to ask, no AutoAccept: Ask", policy: workflow.Policy{MaxPrice: dec("0.10")}, canAsk: true, in: workflow.Decide{}, want: result{Effects: []workflow.Effect{ask}}},
		{name: "cost cap with someone to ask, no AutoAccept: Ask", policy: workflow.Policy{MaxCost: dec("20")}, canAsk: true, in: workflow.Decide{}, want: result{Effects: []workflow.Effect{ask}}},
		{name: "no cap, no AutoAccept, someone to ask: Ask", canAsk: true, in: workflow.Decide{}, want: result{Effects: []workflow.Effect{ask}}},
		{name: "no cap, no AutoAccept, nobody to ask yet: held for an asker (tick declines near the window's end)", in: workflow.Decide{}, want: result{}},
		{name: "over the price cap: declined with the reason", policy: workflow.Policy{MaxPrice: dec("0.04"), AutoAccept: true}, in: workflow.Decide{}, want: declined, reason: "price 0.05 above the cap 0.04 per share"},
		{name: "over the price cap with someone to ask: declined, not asked", policy: workflow.Policy{MaxPrice: dec("0.04")}, canAsk: true, in: workflow.Decide{}, want: declined, reason: "above the cap 0.04"},
		{name: "over the cost cap: declined with the reason", policy: workflow.Policy{MaxCost: dec("9.99"), AutoAccept: true}, in: workflow.Decide{}, want: declined, reason: "total 10.00 above the cap 9.99"},
		{name: "Decide when not Offered: nothing", policy: workflow.Policy{AutoAccept: true}, state: states.Accepting, in: workflow.Decide{}, want: result{}},
		{name: "Answer accept: accepted", canAsk: true, in: workflow.Answer{Accept: true}, want: accepted},
		{name: "Answer reject: declined at the prompt", canAsk: true, in: workflow.Answer{}, want: declined, reason: "declined at the prompt"},
		{name: "Answer late (even an accept): declined", canAsk: true, in: workflow.Answer{Accept: true, Late: true}, want: declined, reason: "no answer while an accept could still land"},
		{name: "Answer accept over the cap (policy changed): declined", policy: workflow.Policy{MaxCost: dec("5")}, canAsk: true, in: workflow.Answer{Accept: true}, want: declined, reason: "above the cap 5"},
		{name: "Answer after the offer was decided: nothing", canAsk: true, state: states.Declining, in: workflow.Answer{Accept: true}, want: result{}},
		{name: "Answer after the offer ended: nothing", canAsk: true, state: states.Expired, in: workflow.Answer{Accept: true}, want: result{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := offered(withPolicy(c.policy))
			if c.state != "" {
				w.State = c.state
			}
			s := workflow.StepWorkflow(w, c.in, envAt(t0, c.canAsk))
			if diff := cmp.Diff(c.want, summary(s), equateEmpty); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
			if c.reason != "" {
				if s.Next == nil || !strings.Contains(s.Next.Reason, c.reason) || !strings.Contains(s.Transition.Reason, c.reason) {
					t.Errorf("reason: got step %+v, want it to contain %q", s, c.reason)
				}
			}
			if c.want.State == states.Accepting {
				n := s.Next
				if n.AcceptedID != "Q1" || !n.Price.Equal(dec("0.05")) || n.LocateType != "Locate" {
					t.Errorf("accepted offer recorded as %q %s %q, want Q1 0.05 Locate", n.AcceptedID, n.Price, n.LocateType)
				}
			}
			if c.want.State == states.Declining && s.Next.AcceptedID != "" {
				t.Errorf("a declined offer records AcceptedID %q", s.Next.AcceptedID)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Windows and timers (spec "Locate limits": 30 s from reaching 65).
// ---------------------------------------------------------------------------

func TestAcceptMargin(t *testing.T) {
	t.Parallel()
	expires := t0.Add(29 * time.Second)
	cases := []struct {
		name   string
		now    time.Time
		rules  workflow.Rules // zero: StepWorkflow uses DefaultRules (2 s margin)
		want   result
		reason string
	}{
		{name: "exactly AcceptMargin left: accepted", now: expires.Add(-rules.AcceptMargin),
			want: result{State: states.Accepting, Event: states.Accept, Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}}}},
		{name: "1 ms under AcceptMargin: declined and cancelled", now: expires.Add(-rules.AcceptMargin + time.Millisecond),
			want:   result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}},
			reason: "only 1.999s left in the offer window"},
		{name: "1 ns under AcceptMargin: declined and cancelled", now: expires.Add(-rules.AcceptMargin + time.Nanosecond),
			want: result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "window already closed: declined and cancelled", now: expires.Add(time.Second),
			want:   result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}},
			reason: "only -1s left"},
		{name: "DefaultRules given explicitly: 2 s left accepted", now: expires.Add(-2 * time.Second), rules: workflow.DefaultRules,
			want: result{State: states.Accepting, Event: states.Accept, Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}}}},
		{name: "Env.Rules honoured: 4 s left under a 5 s margin is declined", now: expires.Add(-4 * time.Second),
			rules: workflow.Rules{OfferWindow: 30 * time.Second, AcceptMargin: 5 * time.Second, SettleGrace: time.Second},
			want:  result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := offered()
			env := workflow.Env{Now: c.now, Rules: c.rules} // zero Rules: DefaultRules
			for _, in := range []workflow.Input{workflow.Decide{}, workflow.Answer{Accept: true}} {
				s := workflow.StepWorkflow(w, in, env)
				if diff := cmp.Diff(c.want, summary(s), equateEmpty); diff != "" {
					t.Errorf("%T (-want +got):\n%s", in, diff)
				}
				if c.reason != "" && (s.Next == nil || !strings.Contains(s.Next.Reason, c.reason)) {
					t.Errorf("%T: reason %q, want it to contain %q", in, s.Next.Reason, c.reason)
				}
			}
		})
	}
}

func TestOfferWindowStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		w         *workflow.Workflow
		rows      workflow.Rows
		offeredAt time.Time
		expiresAt time.Time
	}{
		{
			name:      "broker's OfferedAt before now: the window starts then",
			w:         locate(states.Quoting),
			rows:      workflow.Rows{Legs: legs{"Q1": offeredLeg("0.05", 1)}, Latest: "Q1", OfferedAt: t0.Add(-3 * time.Second)},
			offeredAt: t0.Add(-3 * time.Second), expiresAt: t0.Add(27 * time.Second),
		},
		{
			name:      "OfferedAt unknown (zero): the window starts now",
			w:         locate(states.Quoting),
			rows:      workflow.Rows{Legs: legs{"Q1": offeredLeg("0.05", 1)}, Latest: "Q1"},
			offeredAt: t0, expiresAt: t0.Add(30 * time.Second),
		},
		{
			name:      "OfferedAt equal to now: now",
			w:         locate(states.Quoting),
			rows:      workflow.Rows{Legs: legs{"Q1": offeredLeg("0.05", 1)}, Latest: "Q1", OfferedAt: t0},
			offeredAt: t0, expiresAt: t0.Add(30 * time.Second),
		},
		{
			name:      "OfferedAt after now (clock skew): now, never a longer window",
			w:         locate(states.Quoting),
			rows:      workflow.Rows{Legs: legs{"Q1": offeredLeg("0.05", 1)}, Latest: "Q1", OfferedAt: t0.Add(2 * time.Second)},
			offeredAt: t0, expiresAt: t0.Add(30 * time.Second),
		},
		{
			name:      "a Pending quote starts a window too (for its timeout)",
			w:         locate(states.Quoting),
			rows:      workflow.Rows{Legs: legs{"Q1": pendingLeg(1)}, Latest: "Q1", OfferedAt: t0.Add(-time.Second)},
			offeredAt: t0.Add(-time.Second), expiresAt: t0.Add(29 * time.Second),
		},
		{
			name:      "an offer seen again keeps its window",
			w:         offered(),
			rows:      workflow.Rows{Legs: legs{"Q1": offeredLeg("0.05", 1)}, Latest: "Q1", OfferedAt: t0},
			offeredAt: t0.Add(-time.Second), expiresAt: t0.Add(29 * time.Second),
		},
		{
			// BUG (rows.go rows()): the window is only set while
			// ExpiresAt is zero, so the Pending window set when the quote
			// went to 54 is kept when it later reaches 65, and the offer is
			// judged (and declined, or timed out) on the wrong clock. Spec
			// "Locate limits": offer validity is 30 seconds from reaching 65.
			name:      "BUG: Pending then Offered: the 30-second window restarts at 65 (spec Locate limits)",
			w:         locate(states.Pending, withLegs(legs{"Q1": pendingLeg(1)}), withWindow(t0.Add(-40*time.Second))),
			rows:      workflow.Rows{Legs: legs{"Q1": offeredLeg("0.05", 1)}, Latest: "Q1", OfferedAt: t0.Add(-time.Second)},
			offeredAt: t0.Add(-time.Second), expiresAt: t0.Add(29 * time.Second),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := workflow.StepWorkflow(c.w, c.rows, envAt(t0, false))
			if s.Err != nil || s.Next == nil {
				t.Fatalf("step = %+v", s)
			}
			if !s.Next.OfferedAt.Equal(c.offeredAt) || !s.Next.ExpiresAt.Equal(c.expiresAt) {
				t.Errorf("window = [%s, %s], want [%s, %s]", s.Next.OfferedAt, s.Next.ExpiresAt, c.offeredAt, c.expiresAt)
			}
			if s.Offer != nil && !s.Offer.ExpiresAt.Equal(c.expiresAt) {
				t.Errorf("Offer.ExpiresAt = %s, want %s", s.Offer.ExpiresAt, c.expiresAt)
			}
		})
	}
}

// A Pending quote that gets its offer late must still be acceptable: the
// whole path, Rows then the Decide it asks for (spec "Locate limits").
func TestPendingThenOfferedIsAccepted(t *testing.T) {
	t.Parallel()
	// BUG (see TestOfferWindowStart): the stale Pending window makes this
	// offer look closed, so it is declined instead of accepted.
	w := locate(states.Pending, withLegs(legs{"Q1": pendingLeg(1)}), withWindow(t0.Add(-40*time.Second)))
	got, steps := stepChain(t, w, workflow.Rows{Legs: legs{"Q1": offeredLeg("0.05", 1)}, Latest: "Q1", OfferedAt: t0.Add(-time.Second)}, envAt(t0, false))
	want := []workflow.Effect{workflow.SendAccept{Leg: "Q1"}}
	if got.State != states.Accepting || !cmp.Equal(want, allEffects(steps)) {
		t.Errorf("BUG: got %s with effects %#v (reason %q), want Accepting with %#v", got.State, allEffects(steps), got.Reason, want)
	}
}

func TestTick(t *testing.T) {
	t.Parallel()
	expires := t0.Add(29 * time.Second) // offered() window
	settle := expires.Add(rules.SettleGrace)
	sent := t0.Add(-5 * time.Second) // locate() SentAt
	// A timeout cancels at the broker too: nothing is left open there.
	timeout := func(to states.State) result {
		return result{State: to, Event: states.Timeout, Effects: []workflow.Effect{workflow.SendCancel{}}}
	}
	failed := result{State: states.Failed, Event: states.Fail, Effects: []workflow.Effect{workflow.SendCancel{}}}
	cases := []struct {
		name   string
		w      *workflow.Workflow
		now    time.Time
		want   result
		reason string
	}{
		// An offer nobody answered is refused, and cancelled, while the
		// cancel can still land (AcceptMargin before the window's end).
		{name: "Offered just before ExpiresAt-AcceptMargin: nothing", w: offered(), now: expires.Add(-rules.AcceptMargin - time.Millisecond), want: result{}},
		{name: "Offered at ExpiresAt-AcceptMargin: declined, cancelled", w: offered(), now: expires.Add(-rules.AcceptMargin),
			want: result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}}, reason: "no answer"},
		{name: "Accepting just before: nothing", w: offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.05", 1))), now: settle.Add(-time.Millisecond), want: result{}},
		{name: "Accepting just after: Expired", w: offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.05", 1))), now: settle.Add(time.Millisecond), want: timeout(states.Expired)},
		{name: "Pending just before: nothing", w: offered(withState(states.Pending), withLegs(legs{"Q1": pendingLeg(1)})), now: settle.Add(-time.Millisecond), want: result{}},
		{name: "Pending just after: Expired", w: offered(withState(states.Pending), withLegs(legs{"Q1": pendingLeg(1)})), now: settle.Add(time.Millisecond), want: timeout(states.Expired)},
		{name: "Declining just before: nothing", w: offered(withState(states.Declining)), now: settle.Add(-time.Millisecond), want: result{}},
		{name: "Declining just after: Declined", w: offered(withState(states.Declining)), now: settle.Add(time.Millisecond), want: timeout(states.Declined)},
		{name: "Offered with no window recorded: nothing", w: offered(func(w *workflow.Workflow) { w.ExpiresAt = time.Time{} }), now: settle.Add(time.Hour), want: result{}},
		{name: "Canceling past the window: nothing (waits for 52)", w: offered(withState(states.Canceling)), now: settle.Add(time.Hour), want: result{}},
		{name: "Quoting with no legs just before SettleGrace: nothing", w: locate(states.Quoting), now: sent.Add(rules.SettleGrace - time.Millisecond), want: result{}},
		{name: "Quoting with no legs exactly at SettleGrace: nothing", w: locate(states.Quoting), now: sent.Add(rules.SettleGrace), want: result{}},
		{name: "Quoting with no legs past SettleGrace: Requoting, queued to send again", w: locate(states.Quoting), now: sent.Add(rules.SettleGrace + time.Millisecond),
			want: result{State: states.Requoting, Event: states.Requote, Effects: []workflow.Effect{workflow.Enqueue{}}}, reason: "lost on the way"},
		{name: "Quoting sent again once, no legs past SettleGrace: Requoting again, the quote lost before cancelled", w: locate(states.Quoting, withLost("Q0"), withResends(1)), now: sent.Add(rules.SettleGrace + time.Millisecond),
			want: result{State: states.Requoting, Event: states.Requote, Effects: []workflow.Effect{workflow.Enqueue{}, workflow.SendCancel{QuoteReqID: "Q0"}}}, reason: "lost on the way"},
		{name: "Quoting sent again MaxResends times, no legs past SettleGrace: Failed, both cancelled, not re-sent again", w: locate(states.Quoting, withLost("Q0"), withResends(workflow.MaxResends)), now: sent.Add(rules.SettleGrace + time.Millisecond),
			want: result{State: states.Failed, Event: states.Fail, Effects: []workflow.Effect{workflow.SendCancel{}, workflow.SendCancel{QuoteReqID: "Q0"}}}, reason: "not re-sent again"},
		{name: "Quoting with a leg seen, past SettleGrace: nothing", w: locate(states.Quoting, withLegs(legs{"Q1": quotingLeg()})), now: sent.Add(time.Hour), want: result{}},
		{name: "Quoting with no SentAt: nothing", w: locate(states.Quoting, func(w *workflow.Workflow) { w.SentAt = time.Time{} }), now: sent.Add(time.Hour), want: result{}},
		{name: "credit-back Submitted with no legs past SettleGrace: Failed, cancel sent", w: creditBack(states.Submitted), now: sent.Add(rules.SettleGrace + time.Millisecond), want: failed},
		{name: "credit-back New: nothing", w: creditBack(states.New, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)})), now: sent.Add(time.Hour), want: result{}},
		{name: "terminal: nothing", w: offered(withState(states.Filled)), now: settle.Add(time.Hour), want: result{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := workflow.StepWorkflow(c.w, workflow.Tick{Read: c.now}, envAt(c.now, false))
			if diff := cmp.Diff(c.want, summary(s), equateEmpty); diff != "" {
				t.Errorf("tick (-want +got):\n%s", diff)
			}
			if c.reason != "" && (s.Next == nil || !strings.Contains(s.Next.Reason, c.reason)) {
				t.Errorf("reason: %+v, want it to contain %q", s.Next, c.reason)
			}
		})
	}
}

// A verdict of absence counts to the history read that lacked the row, not
// to when the owner got round to it (seeds 259 and 445 under load: a
// credit-back failed "no history row 20s after sending" on a read taken
// before its row existed, handled 20 s later, while the broker filled it;
// an owner descheduled or stalled on its database is the same). Spec
// "Short locates" rule 7: history is read to learn outcomes; a read is as
// old as the moment it was asked for.
func TestTickJudgesAbsenceAtTheRead(t *testing.T) {
	t.Parallel()
	sent := t0.Add(-5 * time.Second) // locate() and creditBack() SentAt
	expires := t0.Add(29 * time.Second)
	late := expires.Add(rules.SettleGrace + time.Hour) // the owner takes the read this late
	cases := []struct {
		name string
		w    *workflow.Workflow
		due  time.Time // the first read instant that may give the verdict
		want states.State
	}{
		{"quote with no row", locate(states.Quoting), sent.Add(rules.SettleGrace + time.Millisecond), states.Requoting},
		{"credit-back with no row", creditBack(states.Submitted), sent.Add(rules.SettleGrace + time.Millisecond), states.Failed},
		{"accept with no final row", offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.05", 1))), expires.Add(rules.SettleGrace + time.Millisecond), states.Expired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if s := workflow.StepWorkflow(c.w, workflow.Tick{Read: c.due.Add(-2 * time.Millisecond)}, envAt(late, false)); s.Next != nil {
				t.Errorf("read before the grace ran out, handled at %s: %s (%s), want nothing", late, s.Next.State, s.Next.Reason)
			}
			if s := workflow.StepWorkflow(c.w, workflow.Tick{Read: c.due}, envAt(late, false)); s.Next == nil || s.Next.State != c.want {
				t.Errorf("read after the grace ran out: %+v, want %s", summary(s), c.want)
			}
		})
	}
}

// A quote, offer or sell the broker's 8 PM rollover overtook is given up
// on (and cancelled) once an offer made by then has run out: the broker's
// history serves the trading day's rows only (spec "Short locates":
// history "for the trading day"), so its final row never shows. Before
// this, the generated days' evening operation (seed 16 of the faults
// branch: RSHO quoted at 7:59:57 PM, offered after 8 PM) left the locate
// Quoting for ever and its follower waiting. The day is the broker's: a
// quote sent at 7:59:30 PM here is the next day's on a broker 40 s ahead.
// An offer answered less than SettleGrace plus OfferWindow before 8 PM is declined, not
// accepted, nor is a credit-back sent then (nor within the offer window
// before that: an owner stalled for seconds would see the row too late).
func TestTickAfterTheRollover(t *testing.T) {
	t.Parallel()
	eightPM := time.Date(2026, time.November, 25, 20, 0, 0, 0, market.NewYork)
	giveUp := eightPM.Add(rules.SettleGrace + rules.OfferWindow)
	sentAt := func(at time.Time) wfMod { return func(w *workflow.Workflow) { w.SentAt = at } }
	failed := result{State: states.Failed, Event: states.Fail, Effects: []workflow.Effect{workflow.SendCancel{}}}
	cases := []struct {
		name string
		w    *workflow.Workflow
		now  time.Time
		skew time.Duration
		want result
	}{
		{name: "Quoting with a leg seen, sent 7:59:57 PM, just before: nothing", w: locate(states.Quoting, withLegs(legs{"Q1": quotingLeg()}), sentAt(eightPM.Add(-3*time.Second))),
			now: giveUp.Add(-time.Millisecond), want: result{}},
		{name: "Quoting with a leg seen, sent 7:59:57 PM, at the end: Failed, cancelled", w: locate(states.Quoting, withLegs(legs{"Q1": quotingLeg()}), sentAt(eightPM.Add(-3*time.Second))),
			now: giveUp, want: failed},
		{name: "Pending sent before 8 PM, the next morning: Failed, cancelled", w: locate(states.Pending, withLegs(legs{"Q1": pendingLeg(1)}), sentAt(eightPM.Add(-time.Minute))),
			now: eightPM.Add(14 * time.Hour), want: failed},
		{name: "credit-back New sent before 8 PM: Failed, cancelled", w: creditBack(states.New, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)}), sentAt(eightPM.Add(-time.Second))),
			now: giveUp, want: failed},
		{name: "Quoting sent 8:00:05 PM (the next day's): nothing", w: locate(states.Quoting, withLegs(legs{"Q1": quotingLeg()}), sentAt(eightPM.Add(5*time.Second))),
			now: giveUp.Add(time.Hour), want: result{}},
		{name: "sent 7:59:30 PM here, 8:00:10 PM on a broker 40 s ahead: nothing", w: locate(states.Quoting, withLegs(legs{"Q1": quotingLeg()}), sentAt(eightPM.Add(-30*time.Second))),
			now: giveUp.Add(time.Hour), skew: 40 * time.Second, want: result{}},
		{name: "sent 8:00:30 PM here, 7:59:50 PM on a broker 40 s behind: Failed", w: locate(states.Quoting, withLegs(legs{"Q1": quotingLeg()}), sentAt(eightPM.Add(30*time.Second))),
			now: giveUp.Add(40 * time.Second), skew: -40 * time.Second, want: failed},
		{name: "terminal: nothing", w: locate(states.Filled, sentAt(eightPM.Add(-3*time.Second))), now: giveUp.Add(time.Hour), want: result{}},
	}
	// An accept that could fill after the rollover is not sent: nothing
	// would confirm it (seeds 48 and 74: filled at the broker, failed here).
	late := offered(withWindow(eightPM.Add(-55 * time.Second)))
	for _, in := range []workflow.Input{workflow.Decide{}, workflow.Answer{Accept: true}} {
		s := workflow.StepWorkflow(late, in, envAt(eightPM.Add(-rules.SettleGrace-rules.OfferWindow+time.Millisecond), false))
		if want := (result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}}); !cmp.Equal(want, summary(s), equateEmpty) || !strings.Contains(s.Next.Reason, "trading day ends") {
			t.Errorf("%T %s before 8 PM: %+v (%v), want declined as the day ends", in, rules.SettleGrace, summary(s), s.Next)
		}
		if s := workflow.StepWorkflow(late, in, envAt(eightPM.Add(-rules.SettleGrace-rules.OfferWindow), false)); summary(s).Event != states.Accept {
			t.Errorf("%T %s before 8 PM: %+v, want accepted", in, rules.SettleGrace, summary(s))
		}
	}
	// Nor a credit-back (seed 275: sent at 7:59:5x PM, credited after 8
	// PM, failed here).
	if s := workflow.StepWorkflow(creditBack(states.Requested), workflow.SellTurn{}, envAt(eightPM.Add(-rules.SettleGrace-rules.OfferWindow+time.Millisecond), false)); summary(s).State != states.Failed || len(s.Effects) != 0 {
		t.Errorf("credit-back %s before 8 PM: %+v, want failed, nothing sent", rules.SettleGrace, summary(s))
	}
	if s := workflow.StepWorkflow(creditBack(states.Requested), workflow.SellTurn{}, envAt(eightPM.Add(-rules.SettleGrace-rules.OfferWindow), false)); summary(s).Event != states.Send {
		t.Errorf("credit-back %s before 8 PM: %+v, want sent", rules.SettleGrace, summary(s))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := envAt(c.now, false)
			env.Skew = c.skew
			s := workflow.StepWorkflow(c.w, workflow.Tick{Read: env.Now}, env)
			if diff := cmp.Diff(c.want, summary(s), equateEmpty); diff != "" {
				t.Errorf("tick (-want +got):\n%s", diff)
			}
			if c.want.State != "" && !strings.Contains(s.Next.Reason, "trading day") {
				t.Errorf("reason %q does not name the trading day's end", s.Next.Reason)
			}
		})
	}
}

// A quote lost on the way (no history row within
// SettleGrace) is sent again once under a new quoteReqID, at its turn
// (spec "Locate limits": the same-symbol spacing still holds). If the lost
// one's rows turn up late, before its replacement left it is taken and
// nothing else is sent; after, it is taken when offered (or filled) before
// the replacement was, and that one is cancelled; otherwise it is
// cancelled while open.
func TestLostQuote(t *testing.T) {
	t.Parallel()
	sent := t0.Add(-5 * time.Second)
	s := workflow.StepWorkflow(locate(states.Quoting), workflow.Tick{Read: sent.Add(rules.SettleGrace + time.Millisecond)}, envAt(sent.Add(rules.SettleGrace+time.Millisecond), false))
	if s.Next == nil || s.Next.LostQuoteReqID != "Q1" || s.Next.QuoteReqID == "" || s.Next.QuoteReqID == "Q1" {
		t.Fatalf("requote: %+v, want Q1 kept as lost and a new quoteReqID", s.Next)
	}
	again := workflow.StepWorkflow(locate(states.Quoting), workflow.Tick{Read: sent.Add(rules.SettleGrace + time.Millisecond)}, envAt(sent.Add(rules.SettleGrace+time.Millisecond), false))
	if again.Next.QuoteReqID != s.Next.QuoteReqID {
		t.Errorf("the new quoteReqID is %s one time and %s the next: the step is not pure", s.Next.QuoteReqID, again.Next.QuoteReqID)
	}
	turn := workflow.StepWorkflow(s.Next, workflow.QuoteTurn{Available: 100}, envAt(t0.Add(30*time.Second), false))
	if diff := cmp.Diff(result{State: states.Quoting, Event: states.Send, Effects: []workflow.Effect{workflow.SendQuote{}}}, summary(turn), equateEmpty); diff != "" {
		t.Errorf("the requote's turn (-want +got):\n%s", diff)
	}
	if turn.Next.Quantity != 100 || turn.Next.QuoteReqID != s.Next.QuoteReqID {
		t.Errorf("sent again for %d shares under %s, want the 100 shortfall under %s", turn.Next.Quantity, turn.Next.QuoteReqID, s.Next.QuoteReqID)
	}

	lost := func(l workflow.Leg) workflow.Rows { return rowsOf("Q0", legs{"Q0": l}) }
	cancelQ0 := []workflow.Effect{workflow.SendCancel{QuoteReqID: "Q0"}}
	cases := []struct {
		name      string
		w         *workflow.Workflow
		in        workflow.Input
		want      []result // the step and its follow-ups
		quote     string   // QuoteReqID after
		lostAfter string   // LostQuoteReqID after
	}{
		{name: "offered while its replacement waits its turn: taken, nothing to cancel",
			w: locate(states.Requoting, withLost("Q0")), in: lost(offeredLeg("0.05", 1)),
			want: []result{{State: states.Offered, Event: states.RowOffered, Then: workflow.Decide{}},
				{State: states.Accepting, Event: states.Accept, Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q0"}}}},
			quote: "Q0"},
		{name: "offered while its replacement is quoting: taken, the replacement cancelled",
			w: locate(states.Quoting, withLost("Q0")), in: lost(offeredLeg("0.05", 1)),
			want: []result{{State: states.Offered, Event: states.RowOffered, Effects: []workflow.Effect{workflow.SendCancel{QuoteReqID: "Q1"}}, Then: workflow.Decide{}},
				{State: states.Accepting, Event: states.Accept, Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q0"}}}},
			quote: "Q0", lostAfter: "Q1"},
		{name: "offered while its replacement is pending: taken, the replacement cancelled",
			w: locate(states.Pending, withLost("Q0"), withLegs(legs{"Q1": pendingLeg(1)})), in: lost(offeredLeg("0.05", 1)),
			want: []result{{State: states.Offered, Event: states.RowOffered, Effects: []workflow.Effect{workflow.SendCancel{QuoteReqID: "Q1"}}, Then: workflow.Decide{}},
				{State: states.Accepting, Event: states.Accept, Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q0"}}}},
			quote: "Q0", lostAfter: "Q1"},
		{name: "quoting while its replacement waits its turn: taken, nothing sent again",
			w: locate(states.Requoting, withLost("Q0")), in: lost(quotingLeg()),
			want: []result{{State: states.Quoting, Event: states.RowQuoting}}, quote: "Q0"},
		{name: "offered after its replacement was: cancelled",
			w: offered(withLost("Q0")), in: lost(offeredLeg("0.04", 1)), want: []result{{Effects: cancelQ0}}, quote: "Q1", lostAfter: "Q0"},
		{name: "quoting while its replacement is quoting: cancelled",
			w: locate(states.Quoting, withLost("Q0")), in: lost(quotingLeg()), want: []result{{Effects: cancelQ0}}, quote: "Q1", lostAfter: "Q0"},
		{name: "pending while the replacement is being accepted: cancelled",
			w: offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.05", 1)), withLost("Q0")), in: lost(pendingLeg(1)),
			want: []result{{Effects: cancelQ0}}, quote: "Q1", lostAfter: "Q0"},
		{name: "expired: nothing to do", w: locate(states.Quoting, withLost("Q0")), in: lost(expiredLeg(1)), want: []result{{}}, quote: "Q1", lostAfter: "Q0"},
		{name: "the replacement's own rows move it as usual",
			w: locate(states.Quoting, withLost("Q0")), in: rowsOf("Q1", legs{"Q1": pendingLeg(1)}),
			want: []result{{State: states.Pending, Event: states.RowPending}}, quote: "Q1", lostAfter: "Q0"},
		{name: "cancelled while waiting to send again: ends, the lost one cancelled blind",
			w: locate(states.Requoting, withLost("Q0")), in: workflow.CancelAsked{},
			want: []result{{State: states.Canceled, Event: states.Cancel, Effects: cancelQ0}}, quote: "Q1", lostAfter: "Q0"},
		{name: "cancelled after sending again: both cancelled",
			w: locate(states.Quoting, withLost("Q0")), in: workflow.CancelAsked{},
			want: []result{{State: states.Canceling, Event: states.Cancel, Effects: []workflow.Effect{workflow.SendCancel{}, workflow.SendCancel{QuoteReqID: "Q0"}}}}, quote: "Q1", lostAfter: "Q0"},
		{name: "covered while waiting to send again: ends, the lost one cancelled blind",
			w: locate(states.Requoting, withLost("Q0")), in: workflow.QuoteTurn{Available: 200},
			want: []result{{State: states.Covered, Event: states.Cover, Effects: cancelQ0}}, quote: "Q1", lostAfter: "Q0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			last, steps := stepChain(t, c.w, c.in, envAt(t0, false))
			var got []result
			for _, s := range steps {
				got = append(got, summary(s))
			}
			if diff := cmp.Diff(c.want, got, equateEmpty); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if last.QuoteReqID != c.quote || last.LostQuoteReqID != c.lostAfter {
				t.Errorf("quote %q, lost %q; want %q, %q", last.QuoteReqID, last.LostQuoteReqID, c.quote, c.lostAfter)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Resume after a restart.
// ---------------------------------------------------------------------------

func TestResume(t *testing.T) {
	t.Parallel()
	accepting := func(id string, l workflow.Leg) *workflow.Workflow {
		return offered(withState(states.Accepting), withAccepted(id, l),
			withLegs(legs{"Q1": offeredLeg("0.06", brokercode.TypeCodePreBorrow), "Q1.SU": offeredLeg("0.04", brokercode.TypeCodeSingleUse)}))
	}
	expires := t0.Add(29 * time.Second)
	cases := []struct {
		name   string
		w      *workflow.Workflow
		now    time.Time
		canAsk bool
		want   result
	}{
		{name: "rule 3: Accepting, leg still Offered, inside the window: exactly one SendAccept",
			w: accepting("Q1.SU", offeredLeg("0.04", brokercode.TypeCodeSingleUse)), now: t0,
			want: result{Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1.SU"}}}},
		{name: "Accepting the primary leg: SendAccept names it",
			w: accepting("Q1", offeredLeg("0.06", brokercode.TypeCodePreBorrow)), now: expires.Add(-time.Nanosecond),
			want: result{Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}}}},
		{name: "Accepting at ExpiresAt: nothing sent",
			w: accepting("Q1.SU", offeredLeg("0.04", brokercode.TypeCodeSingleUse)), now: expires, want: result{}},
		{name: "Accepting past the window: nothing sent",
			w: accepting("Q1.SU", offeredLeg("0.04", brokercode.TypeCodeSingleUse)), now: expires.Add(time.Second), want: result{}},
		{name: "Accepting, leg already Filled: nothing sent",
			w: offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.05", 1)), withLegs(legs{"Q1": filledLeg("0.05", 1)})), now: t0, want: result{}},
		{name: "Offered: re-decided (AutoAccept accepts)", w: offered(), now: t0,
			want: result{State: states.Accepting, Event: states.Accept, Effects: []workflow.Effect{workflow.SendAccept{Leg: "Q1"}}}},
		{name: "Offered: re-decided (over the cap declines)", w: offered(withPolicy(workflow.Policy{MaxPrice: dec("0.01")})), now: t0,
			want: result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "Offered: re-decided (too late to accept declines)", w: offered(), now: expires.Add(-time.Second),
			want: result{State: states.Declining, Event: states.Decline, Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "Declining: the cancel is resent", w: offered(withState(states.Declining)), now: t0,
			want: result{Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "Canceling: the cancel is resent", w: offered(withState(states.Canceling)), now: t0,
			want: result{Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "credit-back Canceling: the cancel is resent", w: creditBack(states.Canceling, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)})), now: t0,
			want: result{Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "Requested locate: queued again, not quoted", w: locate(states.Requested), now: t0,
			want: result{Effects: []workflow.Effect{workflow.Enqueue{}}}},
		{name: "Requested credit-back: its sell is sent", w: creditBack(states.Requested), now: t0,
			want: result{State: states.Submitted, Event: states.Send, Effects: []workflow.Effect{workflow.SendSell{}}}},
		{name: "Quoting: nothing (never re-quoted)", w: locate(states.Quoting), now: t0, want: result{}},
		{name: "Pending: nothing", w: offered(withState(states.Pending), withLegs(legs{"Q1": pendingLeg(1)})), now: t0, want: result{}},
		{name: "credit-back Submitted: nothing (never re-sold)", w: creditBack(states.Submitted), now: t0, want: result{}},
		{name: "Filled: nothing", w: offered(withState(states.Filled)), now: t0, want: result{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := workflow.StepWorkflow(c.w, workflow.Resume{}, envAt(c.now, c.canAsk))
			if diff := cmp.Diff(c.want, summary(s), equateEmpty); diff != "" {
				t.Errorf("resume (-want +got):\n%s", diff)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// The other inputs.
// ---------------------------------------------------------------------------

// bogusInput is an Input of a type the step does not know.
type bogusInput struct{ workflow.Input }

func TestInputs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		w       *workflow.Workflow
		in      workflow.Input
		want    result
		check   func(t *testing.T, s workflow.Step)
		notOpen bool
	}{
		// Spec "Short locates" rule 1: easy-to-borrow needs no quote.
		{name: "rule 1: Begin, easy to borrow: NotNeeded", w: locate(states.Requested), in: workflow.Begin{EasyToBorrow: true, Available: 500},
			want: result{State: states.NotNeeded, Event: states.Skip}},
		{name: "Begin, inventory covers exactly: Covered", w: locate(states.Requested), in: workflow.Begin{Available: 200},
			want: result{State: states.Covered, Event: states.Cover}},
		{name: "Begin, inventory short by one share: queued", w: locate(states.Requested), in: workflow.Begin{Available: 199},
			want: result{Effects: []workflow.Effect{workflow.Enqueue{}}}},
		{name: "QuoteTurn: quotes the shortfall in lots (spec Locate limits)", w: locate(states.Requested, func(w *workflow.Workflow) { w.Requested = 250 }),
			in:   workflow.QuoteTurn{Available: 100},
			want: result{State: states.Quoting, Event: states.Send, Effects: []workflow.Effect{workflow.SendQuote{}}},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Quantity != 200 || !s.Next.SentAt.Equal(t0) {
					t.Errorf("Quantity %d SentAt %s, want 200 at t0", s.Next.Quantity, s.Next.SentAt)
				}
			}},
		{name: "QuoteTurn: a 1-share shortfall quotes one lot of 100", w: locate(states.Requested, func(w *workflow.Workflow) { w.Requested = 201 }),
			in:   workflow.QuoteTurn{Available: 200},
			want: result{State: states.Quoting, Event: states.Send, Effects: []workflow.Effect{workflow.SendQuote{}}},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Quantity != 100 {
					t.Errorf("Quantity %d, want 100", s.Next.Quantity)
				}
			}},
		{name: "QuoteTurn, inventory arrived meanwhile: Covered", w: locate(states.Requested), in: workflow.QuoteTurn{Available: 300},
			want: result{State: states.Covered, Event: states.Cover}},
		{name: "QuoteTurn when already quoting: nothing (never a second quote)", w: locate(states.Quoting), in: workflow.QuoteTurn{}, want: result{}},
		{name: "SellTurn: Submitted, SendSell", w: creditBack(states.Requested), in: workflow.SellTurn{},
			want: result{State: states.Submitted, Event: states.Send, Effects: []workflow.Effect{workflow.SendSell{}}},
			check: func(t *testing.T, s workflow.Step) {
				if !s.Next.SentAt.Equal(t0) {
					t.Errorf("SentAt %s, want t0", s.Next.SentAt)
				}
			}},
		{name: "SellTurn when already submitted: nothing", w: creditBack(states.Submitted), in: workflow.SellTurn{}, want: result{}},
		// Cancels (spec "Short locates" rule 6).
		{name: "rule 6: cancel before sending: Canceled, nothing sent", w: locate(states.Requested), in: workflow.CancelAsked{},
			want: result{State: states.Canceled, Event: states.Cancel}},
		{name: "rule 6: cancel while Quoting: Canceling, SendCancel", w: locate(states.Quoting), in: workflow.CancelAsked{},
			want: result{State: states.Canceling, Event: states.Cancel, Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "rule 6: cancel an offer: Canceling, SendCancel", w: offered(), in: workflow.CancelAsked{},
			want: result{State: states.Canceling, Event: states.Cancel, Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "rule 6: cancel a pending sell-back: Canceling, SendCancel", w: creditBack(states.New, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)})), in: workflow.CancelAsked{},
			want: result{State: states.Canceling, Event: states.Cancel, Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "cancel while Accepting: refused (ErrNotOpen)", w: offered(withState(states.Accepting)), in: workflow.CancelAsked{}, want: result{Err: true}, notOpen: true},
		{name: "cancel once Filled: refused (ErrNotOpen)", w: offered(withState(states.Filled)), in: workflow.CancelAsked{}, want: result{Err: true}, notOpen: true},
		// Broker writes.
		{name: "quote refused by the broker: Rejected with the detail", w: locate(states.Quoting), in: workflow.Written{Op: workflow.OpQuote, Outcome: workflow.Refused, Detail: "400 Quantity"},
			want: result{State: states.Rejected, Event: states.RowRejected},
			check: func(t *testing.T, s workflow.Step) {
				if !strings.Contains(s.Next.Reason, "400 Quantity") {
					t.Errorf("reason %q", s.Next.Reason)
				}
			}},
		{name: "sell refused by the broker: Rejected", w: creditBack(states.Submitted), in: workflow.Written{Op: workflow.OpSell, Outcome: workflow.Refused},
			want: result{State: states.Rejected, Event: states.RowRejected}},
		{name: "quote answer lost: nothing (history settles it)", w: locate(states.Quoting), in: workflow.Written{Op: workflow.OpQuote, Outcome: workflow.Unknown}, want: result{}},
		{name: "quote done: nothing", w: locate(states.Quoting), in: workflow.Written{Op: workflow.OpQuote, Outcome: workflow.Done}, want: result{}},
		{name: "\"Locate limits\" spacing: the quote's answer time is recorded as SentAt, no transition", w: locate(states.Quoting),
			in: workflow.Written{Op: workflow.OpQuote, Outcome: workflow.Done, At: t0.Add(700 * time.Millisecond)}, want: result{State: states.Quoting},
			check: func(t *testing.T, s workflow.Step) {
				if !s.Next.SentAt.Equal(t0.Add(700 * time.Millisecond)) {
					t.Errorf("SentAt %s, want the answer's time", s.Next.SentAt)
				}
			}},
		{name: "rule 3: accept refused: nothing (history settles it)", w: offered(withState(states.Accepting)), in: workflow.Written{Op: workflow.OpAccept, Outcome: workflow.Refused}, want: result{}},
		{name: "cancel refused: nothing", w: offered(withState(states.Declining)), in: workflow.Written{Op: workflow.OpCancel, Outcome: workflow.Refused}, want: result{}},
		// Abandon.
		{name: "Abandon before sending: Failed, nothing to cancel", w: locate(states.Requested), in: workflow.Abandon{Reason: "disk full"},
			want: result{State: states.Failed, Event: states.Fail},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Reason != "disk full" {
					t.Errorf("reason %q", s.Next.Reason)
				}
			}},
		{name: "Abandon an offer: Failed, cancelled at the broker", w: offered(), in: workflow.Abandon{Reason: "stopping"},
			want: result{State: states.Failed, Event: states.Fail, Effects: []workflow.Effect{workflow.SendCancel{}}}},
		{name: "Abandon a finished workflow: refused", w: offered(withState(states.Filled)), in: workflow.Abandon{Reason: "x"}, want: result{Err: true}},
		// Rows: effects of reaching an end, and rows that do not fit.
		{name: "rule 1: Filled refreshes inventory", w: offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.05", 1))),
			in:   rowsOf("Q1", legs{"Q1": filledLeg("0.05", 1)}),
			want: result{State: states.Filled, Event: states.RowFilled, Effects: []workflow.Effect{workflow.RefreshInventory{}}},
			check: func(t *testing.T, s workflow.Step) {
				if string(s.Transition.Raw) != `[{"quoteReqID":"Q1"}]` {
					t.Errorf("Transition.Raw = %q, want the rows", s.Transition.Raw)
				}
			}},
		{name: "credit-back Credited refreshes inventory", w: creditBack(states.New, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)})),
			in:   rowsOf("S1", legs{"S1": sellLeg(brokercode.LocateStatusFilled)}),
			want: result{State: states.Credited, Event: states.RowFilled, Effects: []workflow.Effect{workflow.RefreshInventory{}}}},
		{name: "rule 6: a cancelled sell-back refreshes inventory (available restored)", w: creditBack(states.Canceling, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)})),
			in:   rowsOf("S1", legs{"S1": sellLeg(brokercode.LocateStatusCanceled)}),
			want: result{State: states.Canceled, Event: states.RowCanceled, Effects: []workflow.Effect{workflow.RefreshInventory{}}}},
		{name: "an offer arriving asks for a decision and shows the offer", w: locate(states.Quoting),
			in:   rowsOf("Q1", legs{"Q1": offeredLeg("0.05", 1)}),
			want: result{State: states.Offered, Event: states.RowOffered, Then: workflow.Decide{}},
			check: func(t *testing.T, s workflow.Step) {
				want := &workflow.Offer{WorkflowID: "wf-1", Symbol: "HTBX", QuoteReqID: "Q1", LocateType: 1, Price: dec("0.05"),
					Shares: 200, Total: dec("10"), ExpiresAt: t0.Add(30 * time.Second)}
				if diff := cmp.Diff(want, s.Offer); diff != "" {
					t.Errorf("Offer (-want +got):\n%s", diff)
				}
			}},
		{name: "the same rows again: record kept, no transition, no effects", w: offered(),
			in: rowsOf("Q1", legs{"Q1": offeredLeg("0.05", 1)}), want: result{State: states.Offered}},
		{name: "rule 6: the declined offer's cancel confirmed (52): Declined, the decline's reason kept",
			w:    offered(withState(states.Declining), func(w *workflow.Workflow) { w.Reason = "declined at the prompt" }),
			in:   rowsOf("Q1", legs{"Q1": canceledLeg()}),
			want: result{State: states.Declined, Event: states.Confirm},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Reason != "declined at the prompt" {
					t.Errorf("reason %q, want the decline's reason kept", s.Next.Reason)
				}
			}},
		{name: "the declined offer lapsed (67) before the cancel landed: Declined, the decline's reason kept",
			w:    offered(withState(states.Declining), func(w *workflow.Workflow) { w.Reason = "declined at the prompt" }),
			in:   rowsOf("Q1", legs{"Q1": expiredLeg(1)}),
			want: result{State: states.Declined, Event: states.Confirm},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Reason != "declined at the prompt" {
					t.Errorf("reason %q, want the decline's reason kept", s.Next.Reason)
				}
			}},
		{name: "a user's cancel confirmed (52): Canceled with the broker's text", w: offered(withState(states.Canceling)),
			in:   rowsOf("Q1", legs{"Q1": {Status: brokercode.LocateStatusCanceled, Text: "Canceled by user", Shares: 200}}),
			want: result{State: states.Canceled, Event: states.RowCanceled, Effects: []workflow.Effect{workflow.RefreshInventory{}}},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Reason != "Canceled by user" {
					t.Errorf("reason %q, want the broker's text", s.Next.Reason)
				}
			}},
		{name: "an ending row without text: the status code as the reason", w: offered(withState(states.Canceling)),
			in:   rowsOf("Q1", legs{"Q1": canceledLeg()}),
			want: result{State: states.Canceled, Event: states.RowCanceled, Effects: []workflow.Effect{workflow.RefreshInventory{}}},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Reason != "locate status 52 Canceled" {
					t.Errorf("reason %q", s.Next.Reason)
				}
			}},
		{name: "a row that does not fit the state is recorded, state kept", w: offered(),
			in:   rowsOf("Q1", legs{"Q1": quotingLeg()}),
			want: result{State: states.Offered},
			check: func(t *testing.T, s workflow.Step) {
				if s.Next.Legs["Q1"].Status != brokercode.LocateStatusQuoting {
					t.Errorf("leg not recorded: %+v", s.Next.Legs)
				}
			}},
		{name: "credit-back row of an unknown latest leg: nothing", w: creditBack(states.Submitted),
			in: workflow.Rows{Latest: "S9"}, want: result{}},
		{name: "unknown input type: refused", w: offered(), in: bogusInput{}, want: result{Err: true}},
		{name: "nil input: refused", w: offered(), in: nil, want: result{Err: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := workflow.StepWorkflow(c.w, c.in, envAt(t0, false))
			if diff := cmp.Diff(c.want, summary(s), equateEmpty); diff != "" {
				t.Fatalf("step (-want +got):\n%s", diff)
			}
			if c.notOpen && !errors.Is(s.Err, workflow.ErrNotOpen) {
				t.Errorf("Err = %v, want ErrNotOpen", s.Err)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

// TestStepInvariants steps every state of each kind with every kind of
// input and checks what must hold whatever the case: a transition agrees
// with the table, a record stays in the kind's states, the input record is
// not changed, a quote or sell is only sent from Requested (never twice),
// and an accept only from Offered or Accepting.
func TestStepInvariants(t *testing.T) {
	t.Parallel()
	inputs := []workflow.Input{
		workflow.Begin{}, workflow.Begin{EasyToBorrow: true}, workflow.Begin{Available: 1 << 20},
		workflow.QuoteTurn{}, workflow.QuoteTurn{Available: 1 << 20}, workflow.SellTurn{},
		rowsOf("Q1", legs{"Q1": quotingLeg()}), rowsOf("Q1", legs{"Q1": pendingLeg(1)}),
		rowsOf("Q1", legs{"Q1": offeredLeg("0.05", 1)}), rowsOf("Q1", legs{"Q1": filledLeg("0.05", 1)}),
		rowsOf("Q1", legs{"Q1": canceledLeg()}), rowsOf("Q1", legs{"Q1": expiredLeg(1)}),
		rowsOf("Q1", legs{"Q1": rejectedLeg("11 No shares available. Please try again later.", 11)}),
		rowsOf("S1", legs{"S1": sellLeg(brokercode.LocateStatusNew)}), rowsOf("S1", legs{"S1": sellLeg(brokercode.LocateStatusFilled)}),
		rowsOf("S1", legs{"S1": sellLeg(brokercode.LocateStatusCanceled)}), rowsOf("S1", legs{"S1": sellLeg(brokercode.LocateStatusRejected)}),
		workflow.Decide{}, workflow.Answer{Accept: true}, workflow.Answer{}, workflow.Answer{Late: true},
		workflow.CancelAsked{}, workflow.Tick{}, workflow.Resume{}, workflow.Abandon{Reason: "x"},
		workflow.Written{Op: workflow.OpQuote, Outcome: workflow.Refused}, workflow.Written{Op: workflow.OpSell, Outcome: workflow.Refused},
		workflow.Written{Op: workflow.OpAccept, Outcome: workflow.Refused}, workflow.Written{Op: workflow.OpCancel, Outcome: workflow.Unknown},
	}
	nows := []time.Time{t0, t0.Add(time.Hour)}
	for _, kind := range []states.Kind{states.Locate, states.CreditBack} {
		known := map[states.State]bool{}
		for _, st := range states.All(kind) {
			known[st] = true
		}
		for _, st := range states.All(kind) {
			var w *workflow.Workflow
			if kind == states.Locate {
				w = offered(withState(st))
				if st == states.Accepting {
					w.AcceptedID = "Q1"
				}
			} else {
				w = creditBack(st, withLegs(legs{"S1": sellLeg(brokercode.LocateStatusNew)}))
			}
			for _, in := range inputs {
				for _, now := range nows {
					before := copyWorkflow(w)
					s := workflow.StepWorkflow(w, in, envAt(now, true))
					name := fmt.Sprintf("%s/%s/%T%+v@%s", kind, st, in, in, now.Sub(t0))
					if diff := cmp.Diff(before, w); diff != "" {
						t.Errorf("%s: input record changed:\n%s", name, diff)
					}
					if s.Err != nil {
						if s.Next != nil || s.Transition != nil || len(s.Effects) != 0 {
							t.Errorf("%s: a refused input still changes things: %+v", name, s)
						}
						continue
					}
					if s.Next != nil && !known[s.Next.State] {
						t.Errorf("%s: Next.State %s is not a %s state", name, s.Next.State, kind)
					}
					if tr := s.Transition; tr != nil {
						to, changed, err := states.Next(kind, tr.From, tr.Event)
						if err != nil || !changed || to != tr.To || tr.From != st || s.Next == nil || s.Next.State != tr.To {
							t.Errorf("%s: transition %+v disagrees with the table (to %s changed %v err %v)", name, *tr, to, changed, err)
						}
					}
					for _, e := range s.Effects {
						switch e.(type) {
						case workflow.SendQuote, workflow.SendSell:
							// A quote thought lost is sent again once, from
							// Requoting, under a new id.
							resend := st == states.Requoting && s.Next != nil && s.Next.QuoteReqID == w.QuoteReqID && w.QuoteReqID != w.LostQuoteReqID
							if st != states.Requested && !resend {
								t.Errorf("%s: %T from %s: a quote or sell is sent once, from Requested", name, e, st)
							}
						case workflow.SendAccept:
							if st != states.Offered && st != states.Accepting {
								t.Errorf("%s: SendAccept from %s", name, st)
							}
						}
					}
				}
			}
		}
	}
}

func TestWorkflowMethods(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		w        *workflow.Workflow
		terminal bool
		located  bool
		total    string
	}{
		{name: "filled locate is located", w: offered(withState(states.Filled), withAccepted("Q1", filledLeg("0.05", 1))), terminal: true, located: true, total: "10"},
		{name: "covered locate is located", w: locate(states.Covered), terminal: true, located: true, total: "0"},
		{name: "easy to borrow is located", w: locate(states.NotNeeded), terminal: true, located: true, total: "0"},
		{name: "declined is not located", w: offered(withState(states.Declined)), terminal: true, total: "0"},
		{name: "accepting is neither", w: offered(withState(states.Accepting), withAccepted("Q1", offeredLeg("0.05", 1))), total: "10"},
		{name: "a credited credit-back is not a located locate", w: creditBack(states.Credited), terminal: true, total: "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.w.Terminal(); got != c.terminal {
				t.Errorf("Terminal = %v", got)
			}
			if got := c.w.Located(); got != c.located {
				t.Errorf("Located = %v", got)
			}
			if got := c.w.Total(); !got.Equal(dec(c.total)) {
				t.Errorf("Total = %s, want %s", got, c.total)
			}
		})
	}
}

// A quote turn is a locate's and a sell turn a credit-back's: the step should
// refuse the other kind rather than send the wrong write.
//
// BUG (step.go StepWorkflow, the QuoteTurn and SellTurn cases): neither
// checks w.Kind, and both tables have Send from Requested, so a SellTurn on a
// locate moves it to Quoting with a SendSell, and a QuoteTurn on a
// credit-back moves it to Submitted with a SendQuote.
func TestTurnsRefuseTheOtherKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		w    *workflow.Workflow
		in   workflow.Input
	}{
		{name: "BUG: SellTurn on a locate", w: locate(states.Requested), in: workflow.SellTurn{}},
		{name: "BUG: QuoteTurn on a credit-back", w: creditBack(states.Requested), in: workflow.QuoteTurn{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := workflow.StepWorkflow(c.w, c.in, envAt(t0, false))
			if s.Err == nil {
				t.Errorf("%s workflow took %T: %#v; want it refused (Err) with nothing sent", c.w.Kind, c.in, summary(s))
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Price checks: the offer is seen and cancelled, never taken.
// ---------------------------------------------------------------------------

// priceCheck is a price check of 200 HTBX under quote id Q1, in state st.
func priceCheck(st states.State, mods ...wfMod) *workflow.Workflow {
	w := locate(st, mods...)
	w.Kind, w.Policy = states.PriceCheck, workflow.Policy{}
	return w
}

// Spec "Short locates" rule 2 and "Locate statuses": both sides of a Reg
// SHO pair offered are recorded and cancelled at once (cancelling either id
// cancels both); the cancel's 52 rows end it priced, with both prices kept
// though the rows no longer carry them; nothing is accepted; the quote is
// the whole quantity asked, whatever inventory holds.
func TestPriceCheckRegSHOPair(t *testing.T) {
	t.Parallel()
	w, steps := stepChain(t, priceCheck(states.Requested), workflow.QuoteTurn{Available: 5000}, envAt(t0, true))
	if w.State != states.Quoting || w.Quantity != 200 {
		t.Fatalf("after the turn: %s quoting %d, want quoting 200 (a price check is never covered)", w.State, w.Quantity)
	}
	pair := legs{"Q1": offeredLeg("0.09", brokercode.TypeCodePreBorrow), "Q1.SU": offeredLeg("0.04", brokercode.TypeCodeSingleUse)}
	w, steps = stepChain(t, w, rowsOf("Q1.SU", pair), envAt(t0, true))
	if w.State != states.Releasing {
		t.Fatalf("offered pair: %s, want releasing", w.State)
	}
	if diff := cmp.Diff([]workflow.Effect{workflow.SendCancel{}}, allEffects(steps)); diff != "" {
		t.Errorf("effects of the offer (-want +got):\n%s", diff)
	}
	if w.ExpiresAt.IsZero() || steps[0].Offer == nil {
		t.Errorf("offer window %v, offer %+v: want both set for displays", w.ExpiresAt, steps[0].Offer)
	}
	// Answers and decisions change nothing: no offer waits on anyone; a
	// cancel asked (an interrupt) is not refused: its cancel is on its way.
	for _, in := range []workflow.Input{workflow.Decide{}, workflow.Answer{Accept: true}, workflow.CancelAsked{By: workflow.CauseInterrupt}} {
		if s := workflow.StepWorkflow(w, in, envAt(t0, true)); s.Next != nil || len(s.Effects) != 0 || s.Err != nil {
			t.Errorf("%T on a price check: %#v, want nothing", in, summary(s))
		}
	}
	canceled := workflow.Leg{Status: brokercode.LocateStatusCanceled, Shares: 200}
	w, _ = stepChain(t, w, rowsOf("Q1", legs{"Q1": canceled, "Q1.SU": canceled}), envAt(t0.Add(2*time.Second), true))
	if w.State != states.Priced || !w.Terminal() || w.AcceptedID != "" {
		t.Fatalf("after the cancel's rows: %s accepted %q, want priced, nothing accepted", w.State, w.AcceptedID)
	}
	got := workflow.Prices(w)
	if len(got) != 2 || got[0].QuoteReqID != "Q1" || !got[0].Price.Equal(dec("0.09")) || got[0].LocateType != brokercode.TypeCodePreBorrow ||
		got[1].QuoteReqID != "Q1.SU" || !got[1].Price.Equal(dec("0.04")) || got[1].LocateType != brokercode.TypeCodeSingleUse || !got[1].Total.Equal(dec("8")) {
		t.Errorf("prices %+v, want PreBorrow 0.09 and SingleUse 0.04 × 200", got)
	}
}

// docs/design.md rule 8 for price checks: whatever the record says, a step
// that would send an accept is refused, and one given up on or resumed
// cancels what it may have open.
func TestPriceCheckNeverAccepts(t *testing.T) {
	t.Parallel()
	l := offeredLeg("0.05", brokercode.TypeCodeLocate)
	forged := map[string]struct {
		w  *workflow.Workflow
		in workflow.Input
	}{
		"decide on an offered record":   {priceCheck(states.Offered, withLegs(legs{"Q1": l}), withWindow(t0.Add(-time.Second))), workflow.Decide{}},
		"answer yes on an offered one":  {priceCheck(states.Offered, withLegs(legs{"Q1": l}), withWindow(t0.Add(-time.Second))), workflow.Answer{Accept: true}},
		"resume an accepting record":    {priceCheck(states.Accepting, withLegs(legs{"Q1": l}), withWindow(t0.Add(-time.Second)), withAccepted("Q1", l)), workflow.Resume{}},
		"auto-accept policy on a check": {func() *workflow.Workflow { w := priceCheck(states.Quoting); w.Policy.AutoAccept = true; return w }(), rowsOf("Q1", legs{"Q1": l})},
	}
	for name, c := range forged {
		s := workflow.StepWorkflow(c.w, c.in, envAt(t0, true))
		for _, e := range allEffects([]workflow.Step{s}) {
			if _, ok := e.(workflow.SendAccept); ok {
				t.Errorf("%s: an accept would leave: %#v", name, summary(s))
			}
		}
	}
	s := workflow.StepWorkflow(priceCheck(states.Accepting, withLegs(legs{"Q1": l}), withWindow(t0.Add(-time.Second)), withAccepted("Q1", l)), workflow.Resume{}, envAt(t0, true))
	if !errors.Is(s.Err, workflow.ErrPriceCheckAccepts) {
		t.Errorf("resumed accept of a price check: %v, want ErrPriceCheckAccepts", s.Err)
	}
	for _, st := range []states.State{states.Releasing, states.Canceling} {
		if s := workflow.StepWorkflow(priceCheck(st, withLegs(legs{"Q1": l}), withWindow(t0)), workflow.Resume{}, envAt(t0, false)); !cmp.Equal(s.Effects, []workflow.Effect{workflow.SendCancel{}}) {
			t.Errorf("resume %s: %#v, want the cancel sent again", st, summary(s))
		}
	}
}
