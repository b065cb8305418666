package engine

import (
	"context"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
)

// quoteSpacingAny is the least gap between two quotes of one key pair: the
// quote route allows one per second.
const quoteSpacingAny = time.Second

// wakeDispatcher tells the dispatcher something changed.
func (e *Engine) wakeDispatcher() {
	select {
	case e.wakeQ <- struct{}{}:
	default:
	}
}

// dispatch sends queued quotes one at a time, never provoking the broker's
// asynchronous rejections: one open quote per symbol, 30 s between quotes
// of a symbol, one quote per second overall.
func (e *Engine) dispatch(ctx context.Context) {
	for {
		id, wait := e.nextQuotable()
		if id != "" {
			e.sendQuote(ctx, id)
			continue
		}
		if wait <= 0 {
			// Nothing queued: still sleep on the clock, so a virtual-time
			// driver can tell the dispatcher is idle.
			wait = time.Minute
		}
		timer := e.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-e.wakeQ:
		case <-timer.C():
		}
		timer.Stop()
	}
}

// nextQuotable returns the first queued workflow that may be quoted now, or
// how long until one may.
func (e *Engine) nextQuotable() (string, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	busy := map[string]bool{}
	for _, w := range e.active {
		if w.Kind == states.Locate && w.State != states.Requested {
			busy[w.Symbol] = true
		}
	}
	var wait time.Duration
	note := func(d time.Duration) {
		if d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	}
	if d := e.lastAny.Add(quoteSpacingAny).Sub(now); d > 0 {
		return "", d
	}
	for _, id := range e.queue {
		w := e.active[id]
		if w == nil || busy[w.Symbol] {
			continue
		}
		if d := e.lastQuote[w.Symbol].Add(e.cfg.QuoteSpacing).Sub(now); d > 0 {
			note(d)
			continue
		}
		return id, 0
	}
	return "", wait
}

// sendQuote re-checks coverage, persists the intent to quote (with its
// quoteReqID and quantity) and only then sends the quote, once.
func (e *Engine) sendQuote(ctx context.Context, id string) {
	e.mu.Lock()
	e.removeQueued(id)
	w := e.active[id]
	e.mu.Unlock()
	if w == nil || w.State != states.Requested {
		return
	}
	rows, err := e.readInventory(ctx)
	if err != nil {
		e.log.Warn("inventory read before quote failed; retrying later", "id", id, "err", err)
		e.mu.Lock()
		e.queue = append([]string{id}, e.queue...)
		e.lastAny = e.clock.Now().Add(2 * time.Second)
		e.mu.Unlock()
		return
	}
	have := brokerclient.Available(rows, w.Symbol)
	if have >= w.Requested {
		e.apply(w, store.Change{To: states.Covered, Event: states.Cover, Reason: "inventory now covers the request"}, nil)
		return
	}
	qty := roundUp100(w.Requested - have)
	now := e.clock.Now()
	saved, err := e.apply(w, store.Change{To: states.Quoting, Event: states.Send, Reason: "quote sent",
		Apply: func(w *store.Workflow) { w.Quantity, w.SentAt = qty, now }}, nil)
	if err != nil {
		e.log.Error("could not record the quote intent; not sending", "id", id, "err", err)
		return
	}
	e.poll.Watch(saved.QuoteReqID, e.onRows)
	e.poll.Wrote()
	e.updateHot()
	_, _, err = e.client.Locates.Quote(ctx, brokerclient.QuoteRequest{
		Account: e.cfg.Account, Symbol: saved.Symbol, Quantity: qty, QuoteReqID: saved.QuoteReqID,
	})
	// Spacing counts from the answer: the broker received the quote before
	// it answered, so the next one cannot reach it closer than the spacing,
	// whatever the network did to this one.
	done := e.clock.Now()
	e.mu.Lock()
	e.lastQuote[w.Symbol], e.lastAny = done, done
	e.mu.Unlock()
	e.writeOutcome(saved, "quote", err)
}

// sendSell persists the intent to credit back and sends the sell, once.
func (e *Engine) sendSell(id string) {
	w := e.get(id)
	if w == nil || w.State != states.Requested {
		return
	}
	now := e.clock.Now()
	saved, err := e.apply(w, store.Change{To: states.Submitted, Event: states.Send, Reason: "credit-back sent",
		Apply: func(w *store.Workflow) { w.SentAt = now }}, nil)
	if err != nil {
		e.log.Error("could not record the sell intent; not sending", "id", id, "err", err)
		return
	}
	e.poll.Watch(saved.QuoteReqID, e.onRows)
	e.poll.Wrote()
	e.updateHot()
	_, _, err = e.client.Locates.Sell(e.ctxOrBackground(), brokerclient.SellRequest{
		Account: e.cfg.Account, Symbol: saved.Symbol, Quantity: saved.Quantity,
		LocateType: brokerclient.LocateType(saved.LocateType), QuoteReqID: saved.QuoteReqID,
	})
	e.writeOutcome(saved, "credit-back", err)
}

// sendCancel cancels at the broker; safe to repeat.
func (e *Engine) sendCancel(w *store.Workflow) {
	if _, _, err := e.client.Locates.Cancel(e.ctxOrBackground(), e.cfg.Account, w.QuoteReqID); err != nil {
		e.log.Warn("cancel failed; history will tell", "id", w.ID, "err", err)
	}
	e.poll.Wrote()
}

func roundUp100(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return (n + 99) / 100 * 100
}
