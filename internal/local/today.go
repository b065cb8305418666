package local

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// positionsEvery is how long an open-positions read serves Today: a screen
// asks every few seconds, and the positions change only with fills (the
// P&L of each lot comes from the stream, live).
const positionsEvery = 5 * time.Second

// firstSnapshotWait bounds how long the first Today waits for the
// stream's snapshot (in real time: the stream answers at once when the
// broker does), so a screen's first view has the P&L.
const firstSnapshotWait = 5 * time.Second

// todayLocates bounds the day's workflows Today returns.
const todayLocates = 200

// dayWatch is what Today keeps between calls: the P&L stream's watch,
// started by the first call and ended with the engine, and the last read
// of the open positions.
type dayWatch struct {
	once sync.Once
	// pnl is the watch, nil before the first Today or when it could not
	// start (failed set).
	pnl    atomic.Pointer[brokerclient.PnLWatcher]
	failed atomic.Bool
	err    error       // why it could not start (written once, in once)
	wasUp  atomic.Bool // the stream was live at some point

	mu          sync.Mutex
	positions   []brokerclient.Position
	positionsAt time.Time
}

// watchPnL starts the P&L stream's watch of the account once (nil, with
// the error logged and returned, when it cannot start), waiting at most
// firstSnapshotWait or until ctx ends for its first snapshot; the watch
// ends when the engine does. Today reads it, and Watch relays it.
func (l *Account) watchPnL(ctx context.Context) (*brokerclient.PnLWatcher, error) {
	d := &l.day
	d.once.Do(func() {
		// The watch outlives the call that starts it.
		watch, cancel := context.WithCancel(context.Background())
		pw, err := l.client.Streams.WatchPnL(watch, []string{l.account})
		if err != nil {
			cancel()
			d.failed.Store(true)
			d.err = err
			l.log.Warn("P&L stream not watched", "account", l.account, "err", err)
			return
		}
		d.pnl.Store(pw)
		go func() {
			defer cancel()
			for {
				changed := pw.Changed()
				if pw.Connected() {
					d.wasUp.Store(true)
				}
				select {
				case <-l.eng.Done():
					pw.Close()
					return
				case <-changed:
				}
			}
		}()
		wait, stop := context.WithTimeout(ctx, firstSnapshotWait)
		defer stop()
		if err := pw.Wait(wait); err != nil && wait.Err() == nil {
			l.log.Warn("P&L stream stopped", "account", l.account, "err", err)
		}
	})
	return d.pnl.Load(), d.err
}

// streamState is the P&L stream's state as Status reports it.
func (l *Account) streamState() account.StreamState {
	d := &l.day
	pw := d.pnl.Load()
	switch {
	case pw == nil && !d.failed.Load():
		return account.StreamOff
	case pw == nil, pw.Err() != nil:
		return account.StreamDown
	case pw.Connected():
		return account.StreamLive
	case d.wasUp.Load():
		return account.StreamDown
	}
	return account.StreamConnecting
}

// broker is the owner's connection to the broker now, for Status.
func (l *Account) broker() account.Broker {
	b := account.Broker{Stream: l.streamState(), Pacing: pacing(l.client.Load())}
	if since, err := l.eng.PollFailing(); !since.IsZero() {
		b.FailingSince = since
		if err != nil {
			b.Failure = err.Error()
		}
	}
	return b
}

// pacing is the key pair's buckets as Status says them.
func pacing(load []brokerclient.RouteLoad) []account.Pacing {
	var out []account.Pacing
	for _, r := range load {
		p := account.Pacing{Route: r.Route, Waiting: map[string]int{}, Waited: map[string]float64{}}
		for prio := range brokerclient.Priority(len(r.Waiting)) {
			if r.Waiting[prio] > 0 {
				p.Waiting[prio.String()] = r.Waiting[prio]
			}
			if r.Waited[prio] > 0 {
				p.Waited[prio.String()] = r.Waited[prio].Seconds()
			}
		}
		out = append(out, p)
	}
	return out
}

// openPositions reads the open positions, at most once per positionsEvery;
// when a read fails after one succeeded, the last read stands (Status says
// the broker is failing).
func (l *Account) openPositions(ctx context.Context, now time.Time) ([]brokerclient.Position, error) {
	d := &l.day
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.positionsAt.IsZero() && now.Sub(d.positionsAt) < positionsEvery {
		return d.positions, nil
	}
	ps, _, err := l.client.Positions.Open(ctx, l.account)
	switch {
	case err != nil && d.positionsAt.IsZero():
		return nil, err
	case err != nil:
		l.log.Warn("open positions not read; the last read stands", "account", l.account, "err", err)
		d.positionsAt = now // tried again after positionsEvery
		return d.positions, nil
	}
	d.positions, d.positionsAt = ps, now
	return ps, nil
}

// today is Account.Today: the stream's model joined to the open positions
// on the lot id (spec "Profit and loss response" rule 5), the store's
// working orders and today's workflows, and the report's spend per symbol,
// all on the broker's calendar.
func (l *Account) today(ctx context.Context) (*account.Today, error) {
	pw, _ := l.watchPnL(ctx) // one that cannot start is logged; Today has no P&L then
	now := l.clk.Now()
	skew := l.client.ClockSkew()
	date := ledger.TradeDate(now.Add(skew))
	t := &account.Today{Date: date, Positions: []account.Position{}, Orders: []workflow.Order{}, Locates: []workflow.Workflow{},
		Symbols: []account.SymbolDay{}}
	var snap brokerclient.PnLSnapshot
	if pw != nil {
		var synced bool
		if snap, synced = pw.Snapshot(l.account); synced {
			t.PnL = &snap.PnLTotals
		} else {
			snap = brokerclient.PnLSnapshot{}
		}
	}
	positions, err := l.openPositions(ctx, now)
	if err != nil {
		return nil, kinded(fmt.Errorf("open positions: %w", err))
	}
	for _, p := range positions {
		pos := account.Position{PositionID: string(p.PositionID), Symbol: p.Symbol, Side: p.Side, Shares: p.Shares, PriceAvg: p.PriceAvg}
		if i := slices.IndexFunc(snap.Positions, func(s brokerclient.PnLPosition) bool { return s.PositionID == p.PositionID }); i >= 0 {
			pos.PnL = snap.Positions[i].PnLCalc
		}
		t.Positions = append(t.Positions, pos)
	}
	orders, err := l.st.Orders(ctx, store.OrderFilter{Account: l.account, Open: true})
	if err != nil {
		return nil, kinded(err)
	}
	for _, o := range orders {
		t.Orders = append(t.Orders, *o)
	}
	// The day starts at midnight in New York on the broker's calendar; the
	// store's times are this machine's.
	start := time.Date(date.Year(), date.Month(), date.Day(), 0, 0, 0, 0, market.NewYork).Add(-skew)
	ws, err := l.st.List(ctx, store.Filter{Account: l.account, Since: start, Limit: todayLocates})
	if err != nil {
		return nil, kinded(err)
	}
	for _, w := range ws { // newest first
		if w.Kind == states.Locate || w.Kind == states.CreditBack {
			t.Locates = append(t.Locates, *w)
		}
	}
	rep, err := report.Build(ctx, l.st, report.Options{Account: l.account, Range: locator.DateRange{From: date, To: date},
		Now: now.Add(skew), Skew: skew})
	if err != nil {
		return nil, kinded(err)
	}
	bySymbol := map[string]*account.SymbolDay{}
	day := func(symbol string) *account.SymbolDay {
		if bySymbol[symbol] == nil {
			bySymbol[symbol] = &account.SymbolDay{Symbol: symbol}
		}
		return bySymbol[symbol]
	}
	for _, r := range rep.Symbols {
		d := day(r.Symbol)
		d.Spend, d.Recovery, d.NetSpend = r.Spend, r.Recovery, r.NetSpend
	}
	for _, p := range snap.Positions {
		d := day(p.Symbol)
		d.DayPnL = d.DayPnL.Add(p.PnLCalc.DayRealizedPnl).Add(p.PnLCalc.DayUnrealizedPnL)
	}
	for _, p := range t.Positions {
		day(p.Symbol) // an open position shows even before the stream has it
	}
	for _, d := range bySymbol {
		d.NetPnL = d.DayPnL.Sub(d.NetSpend)
		t.Symbols = append(t.Symbols, *d)
	}
	slices.SortFunc(t.Symbols, func(x, y account.SymbolDay) int { return strings.Compare(x.Symbol, y.Symbol) })
	return t, nil
}
