package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
)

// Fleet is the accounts one process keeps as a daemon (`locator serve`
// with several): each owned with its own engine and lease, those sharing a
// key pair sharing its client, and so its pacer; with Config.Standby, an
// account another daemon owns is followed, and taken over when its owner
// goes. The accounts of one key pair are owned by one process (see
// store.KeyPairHeldError): a standby that finds another process owning
// some of them waits for it to own the rest, and follows.
type Fleet struct {
	handles []*Handle
	// stop ends the announcements (see announce); done is closed when
	// they ended.
	stop context.CancelFunc
	done chan struct{}
	// announcing serializes announce.
	announcing sync.Mutex
	// takes are the takeovers of the key pairs its standbys find free.
	takes *takeovers
	// holders are the processes whose database sessions were found live
	// (true) or not as the fleet opened, by store (see standByHolders).
	holdersMu sync.Mutex
	holders   map[holder]bool
}

// holder is a process holding leases in a store.
type holder struct {
	st      *store.Store
	process string
}

// OpenFleet opens every account of cfgs as a daemon (see Open), the
// accounts of a key pair at once and up to pairsAtOnce key pairs at once,
// in the order listed: two standbys started together that list the same
// key pairs in different orders each own the pairs it lists first (see
// yieldTo). An account that cannot be opened
// (refused: another daemon owns it, its keys do not reach it, ...; or not
// yet: the broker or the database out of reach, its owner starting) is
// logged, told by Say, and left to Wait, which tries it again while the
// others are served, as it does a standby's account whose key pair
// another process owns, followed once that process owns it too. Only
// when every account is refused does OpenFleet give up and say why (the
// first refusal).
func OpenFleet(ctx context.Context, cfgs []Config) (*Fleet, error) {
	f := &Fleet{holders: map[holder]bool{}}
	beat := newRenewals() // one statement renews every lease the fleet holds
	syncs := make(chan struct{}, ledgerSyncsAtOnce)
	for _, cfg := range cfgs {
		cfg.Role = wire.RoleDaemon
		cfg.renewals, cfg.ledgerSyncs = beat, syncs
		f.handles = append(f.handles, newHandle(cfg))
	}
	pairs := f.pairs()
	f.takes = &takeovers{fleet: f, opening: make(chan struct{}, takeoverOpens)}
	for rank, pair := range pairs {
		kp := &keyPair{handles: pair, takes: f.takes}
		for _, h := range pair {
			h.rank, h.pair = rank, kp
		}
	}
	actx, stop := context.WithCancel(context.WithoutCancel(ctx))
	f.stop, f.done = stop, make(chan struct{})
	announced := map[*Handle]locator.Standby{}
	// Before the first is opened: commands for the others wait from now
	// on, and a daemon starting beside this one sees where it lists each
	// key pair.
	f.announce(actx, announced)
	graceEnds := time.Now().Add(claimGrace)
	go func() {
		defer close(f.done)
		for clock.Sleep(actx, clock.Real{}, announceEvery) == nil {
			f.announce(actx, announced)
		}
		f.announce(context.WithoutCancel(actx), nil)
	}()
	// The accounts of one key pair are taken at once and opened at once,
	// and key pairs are opened pairsAtOnce at a time: each account's
	// start-up (its reads of the broker) is queued work on its key pair's
	// pacer, and each key pair has a budget of its own. The first listed
	// is opened at once; the others wait out claimGrace, for a daemon
	// started beside this one to announce where it lists them.
	slots := make(chan struct{}, pairsAtOnce)
	var wg sync.WaitGroup
	for rank, pair := range pairs {
		if rank > 0 && clock.Sleep(ctx, clock.Real{}, time.Until(graceEnds)) != nil {
			break
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			f.openPair(ctx, pair)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		f.Close()
		return nil, ctx.Err()
	}
	if err := f.refused(); err != nil {
		f.Close()
		return nil, err
	}
	f.announce(actx, announced) // with why each account it could not open is not served
	return f, nil
}

// A daemon's record of standing by for an account (see announce) lasts
// StandbyTTL, and is renewed every announceEvery: a command waits for a
// daemon that died standing by for at most that long. It is not the
// lease's: a desk's daemons stand by for thousands of accounts each, and
// a record says who is to own an account next, not who owns it now.
const (
	StandbyTTL    = 10 * time.Second
	announceEvery = 3 * time.Second
)

// ledgerSyncsAtOnce is how many of a fleet's accounts sync their ledger at
// once (see OwnerConfig.ledgerSyncs).
const ledgerSyncsAtOnce = 2

// pairsAtOnce is how many key pairs a fleet opens at once: 500 key pairs
// opened one after another took 283 s to own (each waiting for the
// start-up reads of the one before), 16 at once 18.8 s (docs/benchmarks.md,
// "A desk on Postgres"); a process of a desk of 5,000 key pairs on four
// opens 1,250, each pair's start-up about a second of its pacer's (its
// second account's detail), so more at once, as many as the machine's
// CPU keeps up with: 32 at once, 10,000 accounts on four processes were
// served in 52.9 to 63.0 s; 64 at once, in 80.0 s.
const pairsAtOnce = 32

// claimGrace is how long after announcing its accounts a fleet waits
// before it takes any key pair but the one it lists first, so that a
// daemon started at the same time has announced where it lists them (see
// Handle.yieldTo): two processes a bench or an init system starts
// together announce within a fraction of a second of each other.
const claimGrace = time.Second

// yieldAtMost bounds how long a fleet leaves an account's key pair to a
// daemon that lists it first and has stood by for it without owning it
// (see listedFirst).
const yieldAtMost = 30 * time.Second

// openPair takes the leases of pair's accounts (one key pair's) at once and
// opens each of them; an account it cannot open yet is recorded for Wait
// to try again (see OpenFleet). A key pair another daemon lists first is
// left to it (see yieldTo): Wait follows that daemon once it owns it.
func (f *Fleet) openPair(ctx context.Context, pair []*Handle) {
	if yieldTo(ctx, pair...) { // each told by Say
		return
	}
	reserved, refused := reserve(ctx, pair, false)
	list(ctx, pair, reserved)
	watching := f.standByHolders(ctx, pair, refused)
	errs := make([]error, len(pair))
	var wg sync.WaitGroup
	for i, h := range pair {
		if !watching[h] {
			wg.Go(func() { errs[i] = h.claim(ctx) })
		}
	}
	wg.Wait()
	for i, h := range pair {
		cfg, err := h.cfg, errs[i]
		if t, ok := reserved[h]; ok && h.Owner() == nil {
			// The lease taken for it and not owned: given back, no
			// longer renewed.
			cfg.renewals.unreserve(t.Owner)
			if rerr := cfg.Engine.Store.ReleaseLease(context.WithoutCancel(ctx), t.Account, t.Owner, t.Term); rerr != nil {
				cfg.Engine.Logger.Warn("the lease taken for the account was not given back; it lapses", "account", t.Account, "err", rerr)
			}
		}
		switch {
		case err == nil, cfg.Standby && errors.Is(err, store.ErrKeyPairHeld), ctx.Err() != nil:
		default:
			cfg.Engine.Logger.Warn("cannot own or follow the account yet; trying again", "account", cfg.Engine.Account, "err", err)
			wait := time.Duration(0) // Wait tries it again at once
			if !notYet(err) {
				wait = refusedWait
			}
			h.setNotYet(err, wait)
		}
	}
}

// list reads pair's key pair's account list once for the accounts of
// pair taken (reserved) that check their environment at start, when
// there are two or more: each engine checks its row (engine.Config.Listed)
// rather than read its account's detail, which the key pair allows once a
// second (a fleet's start opened each key pair a second after the other
// for it). An account the list does not show, or a list that cannot be
// read, reads its detail as before, which says why.
func list(ctx context.Context, pair []*Handle, reserved map[*Handle]store.Term) {
	var check []*Handle
	for _, h := range pair {
		if _, ok := reserved[h]; ok && h.cfg.Engine.Env != "" {
			check = append(check, h)
		}
	}
	if len(check) < 2 {
		return
	}
	rows, _, err := check[0].cfg.Engine.Client.Accounts.List(ctx)
	if err != nil {
		return
	}
	for _, h := range check {
		for i := range rows {
			if strings.EqualFold(rows[i].Account, h.cfg.Engine.Account) {
				h.mu.Lock()
				h.listed = &rows[i]
				h.mu.Unlock()
			}
		}
	}
}

// standByHolders has each standby handle of pair whose lease reserve
// found held by another daemon whose process lives (its database session
// says so: see store.Session) stand by for that lease, as claim would
// once its own take was refused so, and returns them. A desk's daemons
// each list every account: each found the others' thousands of accounts
// owned as it came to them, and refused the take of each again, in a
// transaction of its own, and read its holder's session, per account,
// while the accounts it owns were starting; and each daemon that lost a
// takeover's race so for each account (see takeover.run). A session is
// read once in the fleet's life: one that ends later is the standbys' to
// find (see Handle.standBy).
func (f *Fleet) standByHolders(ctx context.Context, pair []*Handle, refused map[*Handle]error) map[*Handle]bool {
	out := map[*Handle]bool{}
	for _, h := range pair {
		var held *store.LeaseHeldError
		if !h.cfg.Standby || h.yieldedTo() != nil || !errors.As(refused[h], &held) || roleOf(held.Holder) != wire.RoleDaemon {
			continue
		}
		if f.holderLives(ctx, h.cfg.Engine.Store, held.Holder.Process) {
			h.mu.Lock()
			h.watched = &held.Holder
			h.mu.Unlock()
			out[h] = true
		}
	}
	return out
}

// holderLives reports whether process's session in st was live when the
// fleet first asked (see standByHolders).
func (f *Fleet) holderLives(ctx context.Context, st *store.Store, process string) bool {
	f.holdersMu.Lock()
	defer f.holdersMu.Unlock()
	live, known := f.holders[holder{st, process}]
	if !known {
		state, err := st.Session(ctx, process)
		live = err == nil && state == store.SessionLive
		if err == nil {
			f.holders[holder{st, process}] = live
		}
	}
	return live
}

// pairs are the fleet's handles by key pair (and store), in the order
// the fleet lists them.
func (f *Fleet) pairs() [][]*Handle {
	type key struct {
		st   *store.Store
		pair string
	}
	at := map[key]int{}
	var out [][]*Handle
	for _, h := range f.handles {
		k := key{h.cfg.Engine.Store, h.cfg.Engine.Client.PacingKey()}
		i, ok := at[k]
		if !ok || k.pair == "" {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], h)
	}
	return out
}

// refused is the first account's refusal when every account of the fleet
// was refused the last time it was opened (nothing left to serve), else
// nil.
func (f *Fleet) refused() error {
	for _, h := range f.handles {
		if err := h.notYet(); err == nil || notYet(err) {
			return nil
		}
	}
	return f.handles[0].notYet()
}

// notYet reports whether err, which kept an account from being opened, may
// pass by itself (a failure of the broker or the database, an owner going
// or starting): not a refusal, bad input or keys the broker rejects.
func notYet(err error) bool {
	k := account.KindOf(err)
	return (k == account.KindFailed || k == account.KindOwnerGone) && !errors.Is(err, brokerclient.ErrUnauthorized)
}

// Accounts are the fleet's accounts as the account API (the dashboard's).
func (f *Fleet) Accounts() []account.Account {
	out := make([]account.Account, len(f.handles))
	for i, h := range f.handles {
		out[i] = h
	}
	return out
}

// Wait keeps the fleet's accounts until ctx ends (its error): an account
// that cannot be served (refused, out of reach, its engine stopped on an
// error) is logged, told by Say, and opened again (see keep) while the
// others are served. An owner that steps down (its lease lost, or the
// database out of reach for longer than its trust in it) gives its
// account up, and the fleet opens it again: it owns it once it can, or
// follows the process that took it over and stands by. A standby takes
// over as soon as the lease it waits on lapses or is released.
func (f *Fleet) Wait(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, h := range f.handles {
		wg.Go(func() { h.keep(ctx) })
	}
	wg.Wait()
	f.takes.wg.Wait()
	return ctx.Err()
}

// Say tells w, a line each, what the fleet holds: the accounts this
// process owns (its term, and where other processes hand it requests)
// and those it stands by for.
func (f *Fleet) Say(ctx context.Context, w io.Writer) {
	for _, h := range f.handles {
		if o := h.Owner(); o != nil {
			l := o.Lease()
			fmt.Fprintf(w, "serving %s (pid %d, term %d); other processes hand their requests to %s\n", l.Account, os.Getpid(), l.Term,
				strings.TrimSpace(l.Endpoint+" "+l.Address))
		} else if err := h.notYet(); err != nil {
			fmt.Fprintf(w, "not serving %s yet (pid %d), trying again: %v\n", h.cfg.Engine.Account, os.Getpid(), err)
		} else if sb := h.yieldedTo(); sb != nil {
			fmt.Fprintf(w, "waiting for %s (pid %d): pid %d on %s lists its key pair first and is to own it\n", h.cfg.Engine.Account, os.Getpid(), sb.PID, sb.Host)
		} else if l := h.watching(); l != nil {
			fmt.Fprintf(w, "standing by for %s (pid %d): %s\n", l.Account, os.Getpid(), l)
		} else if h.follower() == nil {
			fmt.Fprintf(w, "waiting for %s (pid %d): the process owning its key pair's other accounts is to own it\n", h.cfg.Engine.Account, os.Getpid())
		} else if hello, err := h.Followed(ctx); err == nil && hello != nil {
			fmt.Fprintf(w, "standing by for %s (pid %d): %s\n", hello.Account, os.Getpid(), hello.Lease)
		}
	}
}

// ByAccount is Accounts by account id (the answer links').
func (f *Fleet) ByAccount() map[string]account.Account {
	out := make(map[string]account.Account, len(f.handles))
	for _, h := range f.handles {
		out[h.cfg.Engine.Account] = h
	}
	return out
}

// Close gives every account up.
func (f *Fleet) Close() {
	f.stop()
	<-f.done
	for _, h := range f.handles {
		h.Close()
	}
}

// announce records this process as standing by for each of its accounts
// that it does not own (following another daemon that owns it, or not
// yet), with why it cannot serve one it
// tried when waiting will not mend it (a refusal: the broker does not know
// the account under these keys, say; a database that is down or an engine
// that stopped pass by themselves, and a command waits for them, while
// Handle.Status and /metrics say every reason) (one statement per store,
// renewed every announceEvery while the fleet lives, in real time as
// leases are: a record is written again only when it changed, the others
// renewed by one statement per store: each handle's record carries its
// caller's id as its process, so grouped by process they were one
// transaction per account every announceEvery, half an idle desk's CPU),
// and takes the record of one it owns off (announced: those it recorded,
// as recorded; nil: every account, as the fleet closes; one statement per
// store too). A command for such
// an account waits for this process to own it and follows it (see
// Owner.leaveToStandby), rather than own it, or be refused it because this
// process owns another account of its key pair: a daemon of many
// key pairs opens them 16 at a time, and each account's start-up takes a
// while.
func (f *Fleet) announce(ctx context.Context, announced map[*Handle]locator.Standby) {
	f.announcing.Lock()
	defer f.announcing.Unlock()
	host, _ := os.Hostname()
	changed := map[*store.Store][]locator.Standby{}
	kept := map[*store.Store][]locator.Standby{}
	leaving := map[*store.Store][]*Handle{}
	for _, h := range f.handles {
		st, sb := h.cfg.Engine.Store, h.standby(host)
		last, was := announced[h]
		h.mu.Lock()
		was = was || h.steppedDown
		h.mu.Unlock()
		switch {
		case announced == nil || h.Owner() != nil && was:
			leaving[st] = append(leaving[st], h)
		case h.Owner() == nil:
			h.mu.Lock()
			if h.notOpened != nil && account.KindOf(h.notOpened) == account.KindRefused {
				sb.NotServed, sb.NotServedSince, sb.Retry = h.notOpened.Error(), h.notSince, h.retryAt
			}
			h.mu.Unlock()
			if was && last == sb {
				kept[st] = append(kept[st], sb)
				continue
			}
			changed[st] = append(changed[st], sb)
			announced[h] = sb
		}
	}
	for st, sbs := range changed {
		if err := st.StandByAll(ctx, sbs, StandbyTTL); err != nil && ctx.Err() == nil {
			f.handles[0].cfg.Engine.Logger.Warn("cannot announce this process as its accounts' next owner", "err", err)
		}
	}
	for st, sbs := range kept {
		if err := st.RenewStandbys(ctx, sbs, StandbyTTL); err != nil && ctx.Err() == nil {
			f.handles[0].cfg.Engine.Logger.Warn("cannot renew the announcement of this process as its accounts' next owner", "err", err)
		}
	}
	for st, hs := range leaving {
		sbs := make([]locator.Standby, len(hs))
		for i, h := range hs {
			sbs[i] = h.standby(host)
		}
		if err := st.LeaveStandby(ctx, sbs...); err != nil {
			// Tried again at the next round; the records lapse meanwhile.
			hs[0].cfg.Engine.Logger.Warn("the announcement of this process as its accounts' next owner was not taken off", "accounts", len(sbs), "err", err)
			continue
		}
		for _, h := range hs {
			delete(announced, h)
			h.mu.Lock()
			h.steppedDown = false
			h.mu.Unlock()
		}
	}
}

// reopenWait is how long a daemon waits before opening an account again
// when it could neither own nor follow it (the database or the owner is
// out of reach), or after its engine stopped on an error.
const reopenWait = time.Second

// refusedWait is how long a daemon waits before opening an account again
// whose keys the broker rejected, or that was refused as the fleet opened
// (its keys rejected, another daemon owning it or its key pair): such a
// refusal passes only when something outside this process changes.
const refusedWait = 30 * time.Second

// standby is the record of this daemon standing by for the account, on
// host.
func (h *Handle) standby(host string) locator.Standby {
	return locator.Standby{Account: h.cfg.Engine.Account, Process: "daemon:" + h.cfg.Caller.ID, PID: os.Getpid(), Host: host, Rank: h.rank}
}

// yieldTo reports whether any of hs's accounts (of one key pair and
// store) is left, for now, to another daemon that lists its key pair
// before this fleet does (see listedFirst), and records for each which
// one for Say and for calls meanwhile (see Handle.try): of two daemons
// started together, each owns the key pairs it lists first. That daemon
// drops its record once it owns the account, and this one then follows
// it; one that dies lets its record lapse. The records of a key pair's
// accounts are read at once. A database that cannot say leaves the
// accounts to the open that follows (which says why).
func yieldTo(ctx context.Context, hs ...*Handle) bool {
	var sbs []locator.Standby
	if hs[0].rank > 0 { // none lists a key pair before first
		accounts := make([]string, len(hs))
		for i, h := range hs {
			accounts[i] = h.cfg.Engine.Account
		}
		sbs, _ = hs[0].cfg.Engine.Store.Standbys(ctx, accounts...)
	}
	yield := false
	for _, h := range hs {
		first := listedFirst(sbs, h.cfg.Engine.Account, h.standby("").Process, h.rank)
		h.mu.Lock()
		h.yielded = first
		h.mu.Unlock()
		yield = yield || first != nil
	}
	return yield
}

// listedFirst is the live standby record of account, among sbs, of a
// daemon other than process that lists the account's key pair before
// rank and may still own it: nothing on its record against serving it,
// and standing by for less than yieldAtMost (by the database's clock: its
// last renewal against its first), so that one that lives but never comes
// to the account (stuck starting) does not keep it unserved. Nil if none.
func listedFirst(sbs []locator.Standby, account, process string, rank int) *locator.Standby {
	for i, sb := range sbs {
		if sb.Account == account && sb.Process != process && sb.NotServed == "" && sb.Rank >= 0 && sb.Rank < rank &&
			sb.Expires.Sub(sb.Since) < yieldAtMost+StandbyTTL {
			return &sbs[i]
		}
	}
	return nil
}

// keep holds the account for a daemon until ctx ends, opening it again
// whenever it is lost; see Fleet.Wait.
func (h *Handle) keep(ctx context.Context) {
	log := h.cfg.Engine.Logger
	clk := h.cfg.Engine.Clock
	for ctx.Err() == nil {
		freed := false // the lease stood by for may be free: see takePair
		if o := h.Owner(); o != nil {
			err := o.Wait(ctx)
			if err == nil {
				<-ctx.Done() // closed: by the fleet, which ends ctx
				return
			}
			// Recorded as the account's next owner before its lease
			// goes: a command meanwhile waits for this process to own
			// it again rather than being refused it, this process
			// owning other accounts of its key pair (Fleet.announce
			// keeps the record from its next round on).
			host, _ := os.Hostname()
			if err := h.cfg.Engine.Store.StandBy(ctx, h.standby(host), StandbyTTL); err != nil && ctx.Err() == nil {
				log.Warn("cannot record this process as the account's next owner", "account", h.cfg.Engine.Account, "err", err)
			}
			h.mu.Lock()
			h.steppedDown = true
			h.mu.Unlock()
			if errors.Is(err, ErrSteppedDown) {
				log.Warn("stepped down; the account will be owned again or followed", "account", h.cfg.Engine.Account, "err", err)
			} else {
				log.Error("the account's engine stopped; it will be owned again", "account", h.cfg.Engine.Account, "err", err)
				h.drop(nil)
				h.setNotYet(fmt.Errorf("engine stopped: %w", err), reopenWait)
				clock.Sleep(ctx, clk, reopenWait)
			}
		} else if l := h.watching(); l != nil {
			if !h.standBy(ctx, *l, clk) {
				continue // not read: stood by for again (see standBy)
			}
			freed = true
		} else if c := h.follower(); c != nil {
			h.follow(ctx, c, clk)
			freed = true
		} else if h.notYet() != nil {
			clock.Sleep(ctx, clk, h.retryIn()) // refused as the fleet opened: refusedWait
		}
		h.drop(nil)
		said := ""
		for ctx.Err() == nil {
			if yieldTo(ctx, h) { // see OpenFleet
				clock.Sleep(ctx, clk, reopenWait)
				continue
			}
			opened := func() {}
			if freed {
				if opened = h.takePair(ctx); opened == nil {
					break // stood by for the daemon that took it
				}
				freed = false
			}
			err := h.claim(ctx)
			opened()
			if ctx.Err() != nil {
				return
			}
			// A lease another process holds passes when it lapses (seconds):
			// tried again soon; keys the broker rejects pass only when they
			// are changed, so the broker is asked again only now and then.
			wait := reopenWait
			if errors.Is(err, brokerclient.ErrUnauthorized) {
				wait = refusedWait
			}
			h.setNotYet(err, wait)
			if err == nil {
				break
			}
			if err.Error() != said { // once, not every second
				log.Warn("cannot own or follow the account yet; trying again", "account", h.cfg.Engine.Account, "err", err)
				said = err.Error()
			}
			clock.Sleep(ctx, clk, wait)
		}
	}
}

// setNotYet records why the account could not be opened the last time
// (nil: it was), and that it is tried again after wait.
func (h *Handle) setNotYet(err error, wait time.Duration) {
	clk := h.cfg.Engine.Clock
	now := clk.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil && h.notOpened == nil {
		h.notSince = now
	}
	h.notOpened, h.retryAt = err, now.Add(wait)
	if err == nil {
		h.notSince, h.retryAt = time.Time{}, time.Time{}
	}
}

// retryIn is how long until the account not opened is tried again.
func (h *Handle) retryIn() time.Duration {
	clk := h.cfg.Engine.Clock
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.retryAt.Sub(clk.Now())
}

// notYet is why the account could not be opened the last time it was
// tried, or nil.
func (h *Handle) notYet() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.notOpened
}

// yieldedTo is the daemon the account was last left to (see yieldTo), or
// nil.
func (h *Handle) yieldedTo() *locator.Standby {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.yielded
}

// follower is the client of the owner this handle follows, or nil.
func (h *Handle) follower() *wire.Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.client
}

// standBy waits, as a standby listed in the database (Fleet.announce
// records it), until the account whose lease it watches (see claim) may
// be free: the lease lapsed, was released or moved on, or its process's
// database session ended (it died: its lease is then taken over at
// once); see store.WaitLease. It reports whether it may be: false when
// the lease could not be read (after reopenWait) or ctx ended. A standby
// that took a failed read for a free lease tried to take its key pair:
// on a database loaded by a failover, one look at 7,500 leases timed out
// and each of a process's thousands of standbys took its key pair, the
// takes locking the lease rows of live owners, whose renewals skip such
// rows, and leases were lost and moved again.
func (h *Handle) standBy(ctx context.Context, l locator.Lease, clk clock.Clock) bool {
	err := h.cfg.Engine.Store.WaitLease(ctx, l)
	if err != nil && ctx.Err() == nil {
		h.cfg.Engine.Logger.Warn("cannot read the account's lease; trying again", "account", h.cfg.Engine.Account, "err", err)
		clock.Sleep(ctx, clk, reopenWait)
	}
	return err == nil
}

// follow waits, as a daemon following the account's owner (a call
// needed it, or it followed it to own the rest of its key pair), until
// the account may be free: the lease it follows may be free (see
// standBy), or the connection to its owner ended (an owner of this host
// that died: its lease is then taken over at once).
func (h *Handle) follow(ctx context.Context, c *wire.Client, clk clock.Clock) {
	hctx, cancel := context.WithTimeout(ctx, helloWait)
	hello, err := c.Hello(hctx)
	cancel()
	if err != nil {
		// The owner followed is gone, unreachable or stopped (it never
		// answers): keep looks again at once (its lease may have lapsed
		// meanwhile), each look bounded by helloWait.
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	freed := make(chan struct{})
	go func() {
		defer close(freed)
		for !h.standBy(wctx, hello.Lease, clk) && wctx.Err() == nil {
		}
	}()
	// The owner's stream ends with its connection; a stopped owner may
	// never answer the subscription, and the lease's end is waited for
	// meanwhile all the same.
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		updates, err := c.Subscribe(wctx)
		if err != nil {
			clock.Sleep(wctx, clk, reopenWait)
			return
		}
		for range updates {
		}
	}()
	select {
	case <-ctx.Done():
	case <-ended:
	case <-freed:
	}
}
