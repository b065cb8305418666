package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/jobs"
	"github.com/locatorhq/locator/notify"
	"github.com/locatorhq/locator/service"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// account is how a command drives its account (docs/design.md rule 3): as the
// owner for its run — it takes the lease, runs the engine, and meanwhile
// serves the requests of other processes — or, when another process owns
// the account, as a follower that hands its requests to the owner and
// follows them. A follower whose owner goes away takes the account over
// and finishes what it follows.
type account struct {
	settings settings
	client   *brokerclient.Client
	store    *store.Store
	cfg      engine.Config // the engine this process runs when it owns
	// ask answers this process's offers (the terminal prompt); nil when
	// nobody here can answer.
	ask      func(ctx context.Context, o engine.Offer) bool
	onUpdate func(engine.Update)
	asker    string // this process, as recorded on its requests

	owner  *service.Owner  // while this process owns the account
	remote *service.Remote // while it follows another

	mu       sync.Mutex
	watching map[string]bool // workflows whose changes this command shows
}

// attach opens the account for a command: ask may be nil; onUpdate shows
// the changes of the workflows this command follows.
func (c *connFlags) attach(ctx context.Context, command string, ask func(context.Context, engine.Offer) bool, onUpdate func(engine.Update)) (*account, error) {
	return c.openAccount(ctx, command, ask, onUpdate, false)
}

// own opens the account as its owner, or fails with exit 2 naming the live
// owner: for the daemons (serve, run), which never follow another.
func (c *connFlags) own(ctx context.Context, command string) (*account, error) {
	return c.openAccount(ctx, command, nil, nil, true)
}

func (c *connFlags) openAccount(ctx context.Context, command string, ask func(context.Context, engine.Offer) bool, onUpdate func(engine.Update), mustOwn bool) (*account, error) {
	s, err := c.resolve(true)
	if err != nil {
		return nil, err
	}
	clk := clock.Real{}
	client, err := c.client(s, clk)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.db), 0o700); err != nil {
		return nil, fmt.Errorf("database directory: %w", err)
	}
	st, err := store.Open(ctx, s.db, clk)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	a := &account{settings: s, client: client, store: st, ask: ask, onUpdate: onUpdate,
		asker: fmt.Sprintf("%d@%s %s", os.Getpid(), host, command), watching: map[string]bool{}}
	a.cfg = engine.Config{Client: client, Store: st, Clock: clk, Account: s.account, Env: s.env, Logger: c.logger(), OnUpdate: a.show,
		// `resume` is run after a crash: no run is still sending the orders
		// it finds unanswered, however recent.
		SettleAllOrders: command == "resume"}
	if mustOwn {
		a.owner, err = service.OwnAsDaemon(ctx, a.cfg, s.db)
		var held *store.LeaseHeldError
		if errors.As(err, &held) {
			err = usagef("%v: it already drives the account; stop it first", err)
		}
		err = accountError(s.account, err)
	} else {
		err = a.connect(ctx)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

// connect follows the live owner, or becomes the owner when there is none.
func (a *account) connect(ctx context.Context) error {
	a.owner, a.remote = nil, nil
	for range 3 {
		lease, err := a.store.LiveLease(ctx, a.settings.account)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var o *service.Owner
		switch {
		case err != nil:
			o, err = service.Own(ctx, a.cfg, a.settings.db, service.RoleCommand)
		case service.Reachable(ctx, *lease):
			a.remote = service.Dial(*lease)
			return nil
		default: // its process is gone: take the account over now
			o, err = service.TakeOver(ctx, a.cfg, a.settings.db, service.RoleCommand, *lease)
		}
		var held *store.LeaseHeldError
		if errors.As(err, &held) {
			continue // another process won the race: follow it
		}
		if err != nil {
			return accountError(a.settings.account, err)
		}
		a.owner = o
		return nil
	}
	return fmt.Errorf("account %s: could neither own it nor find its owner", a.settings.account)
}

// followed is the lease of the owner this process follows (zero when it
// owns the account itself).
func (a *account) followed() store.Lease {
	if a.remote == nil {
		return store.Lease{}
	}
	return a.remote.Owner()
}

// show prints the changes of the workflows this command follows (the
// owner's engine reports every workflow of the account).
func (a *account) show(u engine.Update) {
	if a.onUpdate == nil {
		return
	}
	if u.Workflow != nil {
		a.mu.Lock()
		mine := a.watching[u.Workflow.ID] || u.Workflow.Asker == a.asker
		a.mu.Unlock()
		if !mine {
			return
		}
	}
	a.onUpdate(u)
}

func (a *account) watch(id string) {
	a.mu.Lock()
	a.watching[id] = true
	a.mu.Unlock()
}

// Locate hands a locate to the account's owner (this process or another).
func (a *account) Locate(ctx context.Context, req engine.Request) (string, error) {
	req.Asker = a.asker
	return retryGone(ctx, a, func() (string, error) {
		if a.owner != nil {
			r := req
			r.Ask = a.ask
			h, err := a.owner.Engine().Locate(ctx, r)
			if err != nil {
				return "", err
			}
			return h.ID, nil
		}
		return a.remote.Locate(ctx, service.LocateRequest{Symbol: req.Symbol, Quantity: req.Quantity, Policy: req.Policy, Asker: a.asker, Ask: a.ask != nil})
	})
}

// LocateAll hands several locates to the owner at once (the engine's batch
// call when this process owns the account, one request after another to
// another owner); ids[i] is "" where request i was refused.
func (a *account) LocateAll(ctx context.Context, reqs []engine.Request) ([]string, error) {
	ids := make([]string, len(reqs))
	if eng, owned := a.Engine(); owned {
		for i := range reqs {
			reqs[i].Ask, reqs[i].Asker = a.ask, a.asker
		}
		hs, err := eng.LocateAll(ctx, reqs)
		for i, h := range hs {
			if h != nil {
				ids[i] = h.ID
			}
		}
		return ids, err
	}
	var errs []error
	for i, r := range reqs {
		id, err := a.Locate(ctx, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Symbol, err))
			continue
		}
		ids[i] = id
	}
	return ids, errors.Join(errs...)
}

// CreditBack hands a credit-back to the owner.
func (a *account) CreditBack(ctx context.Context, symbol string, qty int64, typ brokerclient.LocateType) (string, error) {
	return retryGone(ctx, a, func() (string, error) {
		if a.owner != nil {
			h, err := a.owner.Engine().CreditBack(ctx, symbol, qty, typ)
			if err != nil {
				return "", err
			}
			return h.ID, nil
		}
		return a.remote.CreditBack(ctx, service.CreditBackRequest{Symbol: symbol, Quantity: qty, Type: string(typ), Asker: a.asker})
	})
}

// Cancel withdraws workflow id.
func (a *account) Cancel(ctx context.Context, id string) error {
	_, err := retryGone(ctx, a, func() (string, error) {
		if a.owner != nil {
			return "", a.owner.Engine().Cancel(ctx, id)
		}
		return "", a.remote.Cancel(ctx, id)
	})
	return err
}

// CancelOrder cancels a working order locator placed, through the owner,
// whose order workflow records the cancel before it is sent.
func (a *account) CancelOrder(ctx context.Context, clientOrderID string) (*workflow.Order, error) {
	var o *workflow.Order
	_, err := retryGone(ctx, a, func() (string, error) {
		var err error
		if a.owner != nil {
			o, err = a.owner.Engine().CancelOrder(ctx, clientOrderID)
		} else {
			o, err = a.remote.CancelOrder(ctx, clientOrderID)
		}
		return "", err
	})
	return o, err
}

// Answer answers workflow id's offer.
func (a *account) Answer(ctx context.Context, id string, accept bool, reason string) error {
	_, err := retryGone(ctx, a, func() (string, error) {
		if a.owner != nil {
			return "", a.owner.Engine().Answer(ctx, id, accept, reason)
		}
		return "", a.remote.Answer(ctx, service.AnswerRequest{ID: id, Accept: accept, Reason: reason})
	})
	return err
}

// retryGone runs op, and once more after reconnecting when the owner went
// away (this process may then be the owner).
func retryGone(ctx context.Context, a *account, op func() (string, error)) (string, error) {
	id, err := op()
	if !errors.Is(err, service.ErrOwnerGone) {
		return id, err
	}
	if err := a.reconnect(ctx); err != nil {
		return "", err
	}
	return op()
}

// reconnect follows the next owner, or becomes it, once the one followed
// went away (it released the lease, or its socket refuses connections).
func (a *account) reconnect(ctx context.Context) error {
	for {
		if err := a.connect(ctx); err != nil || a.owner != nil || service.Reachable(ctx, a.remote.Owner()) {
			return err
		}
		if err := clock.Sleep(ctx, clock.Real{}, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// Wait follows workflow id to its end, answering its offer here when this
// process can, and taking the account over if its owner goes away.
func (a *account) Wait(ctx context.Context, id string) (*workflow.Workflow, error) {
	a.watch(id)
	for {
		if a.owner != nil {
			if a.ask != nil {
				if err := a.owner.Engine().Attach(ctx, id, a.ask); err != nil && !errors.Is(err, engine.ErrNotOpen) {
					return nil, err
				}
			}
			select {
			case <-a.owner.Lost():
				return nil, fmt.Errorf("account %s: this process lost its lease (it stalled) and stopped", a.settings.account)
			default:
			}
			return a.owner.Engine().Wait(ctx, id)
		}
		w, err := a.remote.Follow(ctx, id, a.ask != nil, func(m service.Message) { a.message(ctx, id, m) })
		if !errors.Is(err, service.ErrOwnerGone) {
			return w, err
		}
		if err := a.reconnect(ctx); err != nil {
			return nil, err
		}
	}
}

// message shows a follower's update, or puts the owner's question to the
// person here and sends the answer back.
func (a *account) message(ctx context.Context, id string, m service.Message) {
	switch {
	case m.Update != nil && a.onUpdate != nil:
		a.onUpdate(engine.Update{Workflow: m.Update.Workflow, From: m.Update.From, Event: m.Update.Event, Reason: m.Update.Reason, Offer: m.Update.Offer, QueuedUntil: m.Update.QueuedUntil})
	case m.Ask != nil && a.ask != nil:
		offer, remote := *m.Ask, a.remote
		go func() {
			actx, cancel := context.WithDeadline(ctx, offer.ExpiresAt.Add(-workflow.DefaultRules.AcceptMargin))
			defer cancel()
			ok := a.ask(actx, offer)
			if actx.Err() != nil && !ok {
				return // no answer in time: the owner declines at the window's end
			}
			remote.Answer(context.WithoutCancel(ctx), service.AnswerRequest{ID: id, Accept: ok})
		}()
	}
}

// withdraw cancels workflow id after an interrupt, on a context that
// outlives it, and waits (bounded) for the broker to confirm, so that
// nothing this command asked for is left open.
func (a *account) withdraw(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if err := a.Cancel(ctx, id); err != nil {
		return // already over, or nothing to cancel
	}
	a.Wait(ctx, id)
}

// runner runs jobs on this process's engine (it owns the account).
func (a *account) runner(log *slog.Logger, notifier *notify.Notifier) *jobs.Runner {
	eng, _ := a.Engine()
	return &jobs.Runner{Engine: eng, Client: a.client, Store: a.store, Clock: clock.Real{}, Account: a.settings.account, Logger: log, Notifier: notifier}
}

// RunJob runs one run of j, a job of the jobs file config, on the account's
// owner: here when this process owns the account, else in the owner's
// process, whose engine, pacer and poller every job shares; the webhooks
// of this process's config are told of a failure either way. ctx's end
// drains the run (grace for its step in flight). When the owner goes away
// mid-run, this process follows or becomes the next one and runs the job
// again: a job's body adopts what an earlier run left open.
func (a *account) RunJob(ctx context.Context, config []byte, j jobs.Job, grace time.Duration, notifier *notify.Notifier, log *slog.Logger) (*store.JobRun, error) {
	for {
		if a.owner != nil {
			return a.runner(log, notifier).RunOnce(ctx, j, grace)
		}
		run, err := a.remote.RunJob(ctx, service.JobRequest{Config: config, Job: j.Name, Grace: grace})
		if !errors.Is(err, service.ErrOwnerGone) {
			if run != nil && err != nil {
				(&jobs.Runner{Account: a.settings.account, Logger: log, Notifier: notifier}).NotifyFailure(ctx, j, run, err)
			}
			return run, err
		}
		if err := a.reconnect(ctx); err != nil {
			return nil, err
		}
	}
}

// Engine is the engine when this process owns the account.
func (a *account) Engine() (*engine.Engine, bool) {
	if a.owner == nil {
		return nil, false
	}
	return a.owner.Engine(), true
}

func (a *account) close() {
	if a.owner != nil {
		a.owner.Close()
	}
	a.store.Close()
}
