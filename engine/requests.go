package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Request is a locate request with "ensure" semantics: have at least
// Quantity shares of Symbol available to short.
type Request struct {
	// ID, when set, is the workflow's id, chosen by the caller so that a
	// request sent again (its owner went away before answering) is not
	// started twice: a request whose ID exists returns that workflow.
	ID       string
	Symbol   string
	Quantity int64
	Policy   Policy
	// Ask, when set, is who answers this request's offer when the policy
	// leaves it to a person (the process that asked, through the owner);
	// it overrides Config.Ask.
	Ask func(ctx context.Context, o Offer) bool
	// Asker names who asked (pid@host and the command), for the record.
	Asker string
}

// Validate checks the request before anything is recorded or sent. canAsk
// says whether a person can confirm an offer: without one, the policy must
// decide alone (auto-accept, or a cap to accept within).
func (r Request) Validate(canAsk bool) error {
	if err := r.validateTarget(); err != nil {
		return err
	}
	if err := workflow.ValidatePolicy(r.Policy); err != nil {
		return err
	}
	if !canAsk && !r.Policy.Decides() {
		return &brokercode.InputError{Field: "policy", Message: "an offer would need a person's confirmation and nobody can give one here: set a price or cost cap, or auto-accept"}
	}
	return nil
}

// validateTarget checks what a locate and a price check both name: the
// caller's id, the symbol and the quantity.
func (r Request) validateTarget() error {
	if err := workflow.ValidateID(r.ID); err != nil {
		return err
	}
	if err := brokercode.ValidateSymbol(r.Symbol); err != nil {
		return err
	}
	return brokercode.ValidateLocateQuantity(r.Quantity)
}

// validatePriceCheck checks a price check's request before anything is
// recorded or sent: no policy and nobody to ask, since it takes nothing.
func (r Request) validatePriceCheck() error {
	if err := r.validateTarget(); err != nil {
		return err
	}
	if r.Policy != (Policy{}) || r.Ask != nil {
		return &brokercode.InputError{Field: "policy", Message: "a price check accepts nothing: it takes no policy and asks nobody"}
	}
	return nil
}

// Locate ensures at least req.Quantity shares of req.Symbol available to
// short (see workflow.Available): an easy-to-borrow symbol ends
// "not_needed" and inventory that already covers the quantity ends
// "covered", both without a quote; otherwise the shortfall, rounded up to
// 100, is queued for a quote. Bad input is refused before anything is
// recorded or sent. It is LocateAll of one request.
func (e *Engine) Locate(ctx context.Context, req Request) (*Handle, error) {
	if err := req.Validate(req.Ask != nil || e.cfg.Ask != nil); err != nil {
		return nil, err
	}
	hs, errs := e.locateAll(ctx, states.Locate, []Request{req})
	return hs[0], errs[0]
}

// CreditBackRequest returns Shares of Symbol's Type inventory row.
type CreditBackRequest struct {
	// ID: see Request.
	ID     string
	Symbol string
	Shares int64
	Type   brokercode.LocateType
	// Force sends Shares past the row's unused shares (ledger.Unused):
	// those working short sales need, a SingleUse row's used ones (the
	// CLI's --force), or shares the caller has just found unused.
	Force bool
}

// CreditBack returns shares of an inventory row (spec "Short locates" rule
// 5). It refuses, sending nothing, when the row does not hold that many
// available shares, or (unless Force) that many unused ones: located
// shares a working short sale needs are never credited back by a
// quantity, whichever door the request came by.
func (e *Engine) CreditBack(ctx context.Context, req CreditBackRequest) (*Handle, error) {
	symbol, shares, typ := req.Symbol, req.Shares, req.Type
	if err := workflow.ValidateID(req.ID); err != nil {
		return nil, err
	}
	if h, ok := e.existing(ctx, req.ID); ok {
		return h, nil
	}
	if err := brokercode.ValidateSymbol(symbol); err != nil {
		return nil, err
	}
	if err := brokercode.ValidateLocateQuantity(shares); err != nil {
		return nil, err
	}
	if typ == brokercode.LocateTypeIntraDay {
		typ = brokercode.LocateTypeLocate // the spec's deprecated alias
	}
	if typ != brokercode.LocateTypeLocate && typ != brokercode.LocateTypePreBorrow && typ != brokercode.LocateTypeSingleUse {
		return nil, brokercode.Invalid("type", "%q: want Locate, PreBorrow or SingleUse", typ)
	}
	rows, _, err := e.client.Locates.Inventory(ctx, e.cfg.Account)
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	e.gotInventory(rows)
	var have int64
	for _, r := range rows {
		if r.Symbol == symbol && r.Type() == typ {
			have += r.Available
		}
	}
	if have < shares {
		return nil, brokercode.Invalid("quantity", "%s %s inventory has %d available, fewer than %d", symbol, typ, have, shares)
	}
	if !req.Force {
		if err := e.withinUnused(ctx, symbol, typ, shares); err != nil {
			return nil, err
		}
	}
	ev := creditEv{w: e.newWorkflow(states.CreditBack, req.ID, symbol, shares)}
	ev.w.Quantity, ev.w.LocateType = shares, string(typ)
	if err := e.request(ctx, func(r chan error) event { ev.reply = r; return ev }); err != nil {
		return nil, err
	}
	return &Handle{ID: ev.w.ID, e: e}, nil
}

// Unused are the account's unused located shares that filter keeps
// (ledger.Unused, which reads the broker and sends nothing), "today"
// being the broker's trading day since its last 8 PM rollover (the
// SingleUse fills).
func (e *Engine) Unused(ctx context.Context, filter ledger.UnusedFilter) ([]locator.Credit, []locator.Skip, error) {
	day := market.SessionStart(e.clock.Now().Add(e.client.ClockSkew()))
	return ledger.Unused(ctx, e.client, e.store, e.cfg.Account, day, filter)
}

// withinUnused refuses a credit-back of shares above the unused shares of
// symbol's row of typ (Unused), with the numbers.
func (e *Engine) withinUnused(ctx context.Context, symbol string, typ brokercode.LocateType, shares int64) error {
	credits, skipped, err := e.Unused(ctx, ledger.UnusedFilter{Symbol: symbol, Type: typ})
	if err != nil {
		return err
	}
	var free int64
	for _, c := range credits {
		free += c.Shares
	}
	if shares <= free {
		return nil
	}
	why := "the others are held for working short sales, or used"
	for _, sk := range skipped {
		why = sk.Reason
	}
	return brokercode.Invalid("quantity", "credit back %d %s %s: %d of them are unused (%s); only a forced credit-back takes more (a person's locator credit-back --force)",
		shares, symbol, typ, free, why)
}

// Cancel cancels an unfinished workflow: one not yet sent ends at once; a
// sent quote or sell is cancelled at the broker and ends when history shows
// it (status 52). in says who asks (a person unless set) and why.
func (e *Engine) Cancel(ctx context.Context, id string, in workflow.CancelAsked) error {
	return e.request(ctx, func(r chan error) event { return cancelEv{id: id, in: in, reply: r} })
}

// Answer answers workflow id's offer from anywhere (`locator approve` or
// `decline`, a dashboard): accepting takes it within the policy; a refusal
// declines and cancels it, recording who refused (in.By) and why.
func (e *Engine) Answer(ctx context.Context, id string, in workflow.Answer) error {
	return e.request(ctx, func(r chan error) event {
		return answerEv{id: id, in: in, reply: r}
	})
}

// request sends an event whose reply is an error.
func (e *Engine) request(ctx context.Context, build func(chan error) event) error {
	err, waitErr := ask(ctx, e, build)
	if waitErr != nil {
		return waitErr
	}
	return err
}

// existing is the workflow a request sent again already started, when its
// id is set and recorded.
func (e *Engine) existing(ctx context.Context, id string) (*Handle, bool) {
	if id == "" {
		return nil, false
	}
	if _, err := e.store.Get(ctx, id); err != nil {
		return nil, false
	}
	return &Handle{ID: id, e: e}, true
}

// onAnswer steps an offer's workflow with its answer.
func (l *loop) onAnswer(ev answerEv) {
	w := l.open[ev.id]
	var err error
	if w == nil {
		err = fmt.Errorf("%w: %s", ErrNotOpen, ev.id)
	} else if w.State != states.Offered {
		err = fmt.Errorf("%w: %s is %s, no offer waits for an answer", ErrNotOpen, ev.id, w.State)
	} else {
		err = l.step(w, ev.in)
	}
	if ev.reply != nil {
		ev.reply <- err
	}
}

// onLocate creates a requested locate or price check.
func (l *loop) onLocate(ctx context.Context, ev locateEv) {
	if ev.ask != nil {
		l.askers[ev.w.ID] = ev.ask
	}
	err := l.create(ctx, ev.w, ev.begin, ev.book)
	if err != nil {
		delete(l.askers, ev.w.ID)
	}
	ev.reply <- err
}

// onWait answers with the channel a workflow's end is sent on (nil: ended).
func (l *loop) onWait(ev waitEv) {
	if l.open[ev.id] == nil {
		ev.reply <- nil
		return
	}
	ch := make(chan *Workflow, 1)
	l.waiters[ev.id] = append(l.waiters[ev.id], ch)
	ev.reply <- ch
}

// onCoverage answers with the inventory when it is fresh for the symbols.
func (l *loop) onCoverage(ev coverageAskEv) {
	if l.freshFor(ev.symbols) {
		ev.reply <- freshInventory{rows: slices.Clone(l.inventory), ok: true}
		return
	}
	ev.reply <- freshInventory{}
}

// onSubscribe adds a subscriber, telling it why the queued locates wait.
func (l *loop) onSubscribe(ev subscribeEv) {
	l.subs = append(l.subs, ev.feed)
	// A subscriber that came after a locate was queued (a process
	// following the request it handed over) still learns why it waits.
	for _, id := range l.queue {
		if u, ok := l.queued(l.open[id]); ok {
			ev.feed.put(u)
		}
	}
	ev.reply <- struct{}{}
}
