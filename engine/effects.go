package engine

// What a committed step sends to the broker, on the workers, and how
// closely history is read meanwhile.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// updateHot tightens history polling while any sent workflow waits on the
// broker, and puts its reads first on the key pair's history bucket while
// a sent quote or sell-back waits for its outcome (an offer seen at once
// is accepted at once; a fill after that is not as pressing). A quote
// still waiting for the key pair's quote bucket is not sent: its history would show nothing, and with many accounts on one key
// pair those reads would take the turns of the quotes the broker has.
// With nothing open, the account's reads slow to the poller's quiet
// cadence.
func (l *loop) updateHot() {
	hot, awaiting := false, false
	for _, w := range l.open {
		if w.State == states.Requested || l.quoting[w.ID] {
			continue
		}
		hot = true
		switch w.State {
		case states.Quoting, states.Requoting, states.Pending, states.Submitted, states.New:
			awaiting = true
		}
	}
	l.e.poll.SetAwaiting(awaiting)
	l.e.poll.SetHot(hot)
	l.e.poll.SetQuiet(len(l.open) == 0)
}

// effect carries out one effect of a committed step.
func (l *loop) effect(w *Workflow, eff workflow.Effect) {
	e := l.e
	account, id, symbol := e.cfg.Account, w.ID, w.Symbol
	switch eff := eff.(type) {
	case workflow.Enqueue:
		if !slices.Contains(l.queue, id) {
			l.queue = append(l.queue, id)
		}
		if u, ok := l.queued(w); ok {
			l.publish(u)
		}
	case workflow.SendQuote:
		l.noteAnswer(symbol, e.clock.Now()) // the symbol is spaced from now on; overall spacing waits for the answer
		l.quoting[id] = true
		req := brokerclient.QuoteRequest{Account: account, Symbol: symbol, Quantity: w.Quantity, QuoteReqID: w.QuoteReqID}
		e.writes.push(func(ctx context.Context) event {
			_, _, err := e.client.Locates.Quote(ctx, req)
			return e.written(id, symbol, workflow.OpQuote, err)
		})
	case workflow.SendSell:
		e.poll.Wrote()
		l.selling[id] = true
		req := brokerclient.SellRequest{Account: account, Symbol: symbol, Quantity: w.Quantity,
			LocateType: brokercode.LocateType(w.LocateType), QuoteReqID: w.QuoteReqID}
		e.writes.push(func(ctx context.Context) event {
			_, _, err := e.client.Locates.Sell(ctx, req)
			return e.written(id, symbol, workflow.OpSell, err)
		})
	case workflow.SendAccept:
		e.poll.Wrote()
		e.writes.push(func(ctx context.Context) event {
			_, _, err := e.client.Locates.Accept(ctx, account, eff.Leg)
			return e.written(id, symbol, workflow.OpAccept, err)
		})
	case workflow.SendCancel:
		e.poll.Wrote()
		quote := w.QuoteReqID
		if eff.QuoteReqID != "" {
			quote = eff.QuoteReqID
		}
		e.writes.push(func(ctx context.Context) event {
			// The cancel must land even when the engine is being stopped:
			// nothing is left open at the broker.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer cancel()
			_, _, err := e.client.Locates.Cancel(ctx, account, quote)
			return e.written(id, symbol, workflow.OpCancel, err)
		})
	case workflow.Ask:
		offer, ask := eff.Offer, l.askerOf(id)
		deadline := w.ExpiresAt.Add(-e.cfg.Rules.AcceptMargin)
		e.asks.push(func(ctx context.Context) event {
			ctx, cancel := clock.WithDeadline(ctx, e.clock, deadline)
			defer cancel()
			ok := ask(ctx, offer)
			if e.ctx.Err() != nil {
				// The engine stops (its owner closing or stepping down): the
				// question was withdrawn, not answered, and the next owner
				// asks again within the offer's window. Taken as an answer,
				// it would decline the offer for the person.
				return nil
			}
			return answerEv{id: id, in: workflow.Answer{Accept: ok, Late: ctx.Err() != nil}}
		})
	case workflow.RefreshInventory:
		e.poll.RefreshInventory()
	default:
		e.log.Error("engine: unknown effect", "type", fmt.Sprintf("%T", eff))
	}
}

// written turns a broker write's error into the loop's event: none for a
// write its owner's gate held back (the owner is stepping down, and the
// next owner recovers the workflow from its stored state, as after a crash
// before the write).
func (e *Engine) written(id, symbol string, op workflow.Op, err error) event {
	in := workflow.Written{Op: op, Outcome: workflow.Done, At: e.clock.Now()}
	var unknown *brokerclient.OutcomeUnknownError
	switch {
	case errors.Is(err, brokerclient.ErrNotSent):
		// Nothing reached the broker. The workflow is left to its
		// history, as after a failed write (a quote the broker never had
		// ends by its no-row rule, never re-sent), but the loop must
		// still hear of it: a quote's turn stays taken until it does.
		in.Outcome, in.Detail = workflow.Failed, err.Error()
		e.log.Warn(string(op)+" held back: this process may no longer own the account", "id", id)
	case err == nil:
	case errors.As(err, &unknown):
		in.Outcome = workflow.Unknown
		e.log.Warn(string(op)+" outcome unknown; settling from history", "id", id)
	case errors.Is(err, brokerclient.ErrBadRequest), errors.Is(err, brokerclient.ErrNotFound), errors.Is(err, brokercode.ErrInput):
		in.Outcome, in.Detail = workflow.Refused, err.Error()
	default:
		in.Outcome, in.Detail = workflow.Failed, err.Error()
		e.log.Warn(string(op)+" failed; history will tell", "id", id, "err", err)
	}
	return writtenEv{id: id, in: in, sym: symbol}
}

// startWorker starts a goroutine running p's jobs (see pool).
func (e *Engine) startWorker(p *pool) {
	e.wg.Add(1)
	go e.work(p)
}

// work runs p's jobs until none is left, or until the engine stops (the
// jobs left are dropped, as the engine's state is).
func (e *Engine) work(p *pool) {
	defer e.wg.Done()
	for {
		j, ok := p.next(e.ctx.Err() != nil)
		if !ok {
			return
		}
		if ev := j(e.ctx); ev != nil {
			e.inbox.push(ev)
		}
	}
}

// onWritten steps the workflow a worker's write was for, after telling the poller.
func (l *loop) onWritten(ev writtenEv) {
	switch ev.in.Op {
	case workflow.OpQuote:
		// The broker has the quote now (its settling starts): history
		// is read within the settle window (poller.Quoted), not while
		// the quote still waited its turn on the key pair's quote bucket.
		delete(l.quoting, ev.id)
		l.noteQuote(ev.sym, ev.in.At)
		l.e.poll.Quoted(ev.in.At)
		l.updateHot() // the step below may leave the workflow as it is
	case workflow.OpSell:
		delete(l.selling, ev.id)
	case workflow.OpAccept:
		if ev.in.Outcome == workflow.Done {
			l.e.poll.Expect()
		}
	}
	if w := l.open[ev.id]; w != nil {
		l.step(w, ev.in)
	}
}
