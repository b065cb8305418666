package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// etbWorkers is how many easy-to-borrow checks of a batch are under way at
// once: the route's burst (spec "Rate limits"), so the pacer, not a queue
// here, sets their pace.
const etbWorkers = 2

// LocateAll is Locate for a watchlist: every request is validated before
// anything is sent (one bad request refuses the whole batch, sending
// nothing). Then the easy-to-borrow checks run concurrently, one inventory
// and order-book reading serves every coverage check (the loop's latest
// inventory when it is fresh, see loop.freshFor), and each request joins
// the quote queue, in the batch's order, as soon as its own checks are
// done, so quoting starts while later checks are still under way. When
// some requests could not be queued (their checks failed), those have nil
// handles and the error is a *BatchError saying why, request by request.
func (e *Engine) LocateAll(ctx context.Context, reqs []Request) ([]*Handle, error) {
	for i, r := range reqs {
		if err := r.Validate(r.Ask != nil || e.cfg.Ask != nil); err != nil {
			return nil, fmt.Errorf("request %d (%s): %w", i+1, r.Symbol, err)
		}
	}
	hs, errs := e.locateAll(ctx, states.Locate, reqs)
	return batched(reqs, hs, errs)
}

// PriceCheckAll asks the broker's price for each request without taking
// it: each is checked (id, symbol, quantity; a price check has no policy
// and asks nobody) before anything is sent, then, unless the symbol is easy
// to borrow, its quote joins the same queue as the locates', under the same
// spacing, and its offer (both sides of a Reg SHO pair) is recorded and
// cancelled at once. The workflows end priced, or as the broker ended the
// quote; none is ever accepted. Errors as LocateAll's.
func (e *Engine) PriceCheckAll(ctx context.Context, reqs []Request) ([]*Handle, error) {
	for i, r := range reqs {
		if err := r.validatePriceCheck(); err != nil {
			return nil, fmt.Errorf("request %d (%s): %w", i+1, r.Symbol, err)
		}
	}
	hs, errs := e.locateAll(ctx, states.PriceCheck, reqs)
	return batched(reqs, hs, errs)
}

// batched is a batch's handles and, when some requests could not be
// queued, the *BatchError saying why.
func batched(reqs []Request, hs []*Handle, errs []error) ([]*Handle, error) {
	failed := false
	for i, err := range errs {
		if err != nil {
			errs[i], failed = fmt.Errorf("%s: %w", reqs[i].Symbol, err), true
		}
	}
	if failed {
		return hs, &BatchError{Errs: errs}
	}
	return hs, nil
}

// BatchError is LocateAll's error when some requests could not be queued.
type BatchError struct {
	// Errs holds each request's error by index, nil for those queued.
	Errs []error
}

func (e *BatchError) Error() string { return errors.Join(e.Errs...).Error() }

// Unwrap gives the requests' errors, so errors.Is sees through the batch.
func (e *BatchError) Unwrap() []error {
	var out []error
	for _, err := range e.Errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// coverage is the batch's one reading of the two inputs of
// workflow.Available.
type coverage struct {
	inventory []brokerclient.InventoryRow
	book      []workflow.BookOrder
	err       error
}

// locateAll runs validated requests of kind (a locate or a price check):
// handles and errors by index. Only a locate reads its coverage: a price
// check asks the price of the whole quantity.
func (e *Engine) locateAll(ctx context.Context, kind states.Kind, reqs []Request) ([]*Handle, []error) {
	hs, errs := make([]*Handle, len(reqs)), make([]error, len(reqs))
	etb := e.easyToBorrowAll(ctx, reqs)
	var cov coverage
	covDone := make(chan struct{})
	if kind == states.Locate {
		go func() {
			defer close(covDone)
			cov = e.coverage(ctx, reqs)
		}()
	}
	for i, r := range reqs {
		res := <-etb[i]
		if h, ok := e.existing(ctx, r.ID); ok {
			hs[i] = h
			continue
		}
		if res.err != nil {
			errs[i] = fmt.Errorf("easy-to-borrow check: %w", res.err)
			continue
		}
		ev := locateEv{w: e.newWorkflow(kind, r.ID, r.Symbol, r.Quantity), begin: workflow.Begin{EasyToBorrow: res.etb}, ask: r.Ask}
		ev.w.Policy, ev.w.Asker = r.Policy, r.Asker
		if !res.etb && kind == states.Locate {
			<-covDone
			if cov.err != nil {
				errs[i] = cov.err
				continue
			}
			located := brokerclient.Available(cov.inventory, r.Symbol)
			ev.begin.Available, ev.book = workflow.Available(located, cov.book, r.Symbol), cov.book
		}
		if errs[i] = e.request(ctx, func(r chan error) event { ev.reply = r; return ev }); errs[i] == nil {
			hs[i] = &Handle{ID: ev.w.ID, e: e}
		}
	}
	return hs, errs
}

type etbResult struct {
	etb bool
	err error
}

// easyToBorrowAll starts the requests' easy-to-borrow checks, etbWorkers at
// a time in the batch's order; each answer arrives on its own channel.
func (e *Engine) easyToBorrowAll(ctx context.Context, reqs []Request) []chan etbResult {
	out := make([]chan etbResult, len(reqs))
	next := make(chan int, len(reqs))
	for i := range reqs {
		out[i] = make(chan etbResult, 1)
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(etbWorkers, len(reqs)) {
		wg.Go(func() {
			for i := range next {
				etb, _, err := e.client.Orders.EasyToBorrow(ctx, e.cfg.Account, reqs[i].Symbol)
				out[i] <- etbResult{etb, err}
			}
		})
	}
	return out
}

// coverage reads what the batch's coverage checks need: the loop's latest
// inventory when it still stands for every symbol, else one new read (which
// also refreshes the loop's), and today's order book.
func (e *Engine) coverage(ctx context.Context, reqs []Request) coverage {
	symbols := make([]string, len(reqs))
	for i, r := range reqs {
		symbols[i] = r.Symbol
	}
	fresh, err := ask(ctx, e, func(r chan freshInventory) event { return coverageAskEv{symbols: symbols, reply: r} })
	if err != nil {
		return coverage{err: err}
	}
	rows := fresh.rows
	if !fresh.ok {
		if rows, _, err = e.client.Locates.Inventory(ctx, e.cfg.Account); err != nil {
			return coverage{err: fmt.Errorf("inventory: %w", err)}
		}
		e.gotInventory(rows)
	}
	orders, _, err := e.client.Orders.Book(ctx, e.cfg.Account)
	if err != nil {
		return coverage{err: fmt.Errorf("order book: %w", err)}
	}
	return coverage{inventory: rows, book: ledger.BookOrders(orders)}
}

// freshInventory is the loop's answer to coverageAskEv: its latest
// inventory, when ok says it still stands.
type freshInventory struct {
	rows []brokerclient.InventoryRow
	ok   bool
}

// gotInventory hands an inventory read to the loop, stamped with when it
// arrived.
func (e *Engine) gotInventory(rows []brokerclient.InventoryRow) {
	e.inbox.push(inventoryEv{rows: rows, at: e.clock.Now()})
}
