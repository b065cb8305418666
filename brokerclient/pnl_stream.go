package brokerclient

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/locatorhq/locator/brokercode"
)

// PnLWatcher keeps a P&L model of each account in sync with the P&L stream
// (spec: "P&L stream"): the init snapshot replaces the model, partial
// aggCalcs and position updates merge into it, updates received before the
// snapshot are discarded (rule 3), and after a reconnection every account
// is subscribed again and its model replaced by the fresh snapshot.
type PnLWatcher struct {
	sess   session
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	accounts []string
	models   map[string]*pnlModel
	up       bool
	err      error
	sig      stateSignal
}

type pnlModel struct {
	ready bool // a snapshot arrived on the current connection
	snap  PnLSnapshot
}

// WatchPnL subscribes the accounts on one P&L stream connection and keeps
// their models until Close or ctx ends. It returns at once; Wait blocks
// until every snapshot has arrived or the watch failed for good.
func (s *StreamsService) WatchPnL(ctx context.Context, accountIDs []string, opts ...StreamOption) (*PnLWatcher, error) {
	if len(accountIDs) == 0 {
		return nil, brokercode.Invalid("accounts", "at least one account is required")
	}
	w := &PnLWatcher{models: map[string]*pnlModel{}, done: make(chan struct{})}
	for _, id := range accountIDs {
		id = strings.ToUpper(strings.TrimSpace(id))
		if id == "" {
			return nil, brokercode.Invalid("accounts", "an account id is empty")
		}
		w.accounts = append(w.accounts, id)
		w.models[id] = &pnlModel{}
	}
	w.sess = session{svc: s, kind: StreamPnL, cfg: newStreamConfig(opts), h: w}
	ctx, w.cancel = context.WithCancel(ctx)
	go func() {
		defer close(w.done)
		w.sess.run(ctx)
	}()
	return w, nil
}

func (w *PnLWatcher) connected(ctx context.Context, conn *StreamConn) error {
	w.mu.Lock()
	for _, m := range w.models {
		m.ready = false
	}
	w.mu.Unlock()
	for _, id := range w.accounts {
		if err := conn.Subscribe(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// model finds the account a message is about: its own account field, or
// the only account watched when the service leaves it out.
func (w *PnLWatcher) model(account string) *pnlModel {
	if account == "" && len(w.accounts) == 1 {
		account = w.accounts[0]
	}
	return w.models[strings.ToUpper(account)]
}

func (w *PnLWatcher) message(msg StreamMessage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch m := msg.(type) {
	case *PnLSnapshotMessage:
		md := w.model(m.Account)
		if md == nil {
			return nil
		}
		md.ready, md.snap = true, m.Snapshot
		w.up = !slices.ContainsFunc(w.accounts, func(id string) bool { return !w.models[id].ready })
	case *PnLAggregatesMessage:
		md := w.model(m.Account)
		if md == nil || !md.ready {
			return nil // rule 3: before the snapshot, discarded
		}
		merge(m.Changes, &md.snap)
	case *PnLPositionMessage:
		md := w.model(m.Account)
		if md == nil || !md.ready {
			return nil
		}
		i := slices.IndexFunc(md.snap.Positions, func(p PnLPosition) bool { return p.PositionID == m.PositionID })
		if i < 0 {
			md.snap.Positions = append(md.snap.Positions, PnLPosition{PositionID: m.PositionID, Symbol: m.Symbol})
			i = len(md.snap.Positions) - 1
		}
		merge(m.Changes, &md.snap.Positions[i].PnLCalc)
	case *SubscriptionError:
		return &StreamSubscribeError{Kind: StreamPnL, Account: m.Account, Status: "error", Message: m.Message}
	case *SystemMessage:
		if m.Status == StatusTerminated || m.Status == StatusInvalidData {
			return &StreamSubscribeError{Kind: StreamPnL, Status: string(m.Status), Message: m.Message}
		}
		return nil
	default:
		return nil
	}
	w.sig.notify()
	return nil
}

// merge writes the fields present in a partial update over dst: the update
// types leave absent fields out when encoded, and decoding onto an existing
// value leaves what is absent untouched.
func merge(partial, dst any) {
	b, err := json.Marshal(partial)
	if err != nil {
		panic(err) // decimals always encode
	}
	if err := json.Unmarshal(b, dst); err != nil {
		panic(err) // the update and snapshot types share their field names and types
	}
}

func (w *PnLWatcher) disconnected(error) {
	w.mu.Lock()
	w.up = false
	for _, m := range w.models {
		m.ready = false // updates may be lost until the next snapshot
	}
	w.mu.Unlock()
	w.sig.notify()
}

func (w *PnLWatcher) failed(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	w.disconnected(err)
}

// Snapshot returns a copy of the account's model and whether it is in sync
// (its snapshot arrived on the current connection).
func (w *PnLWatcher) Snapshot(accountID string) (PnLSnapshot, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	md := w.models[strings.ToUpper(accountID)]
	if md == nil {
		return PnLSnapshot{}, false
	}
	s := md.snap
	s.Positions = slices.Clone(s.Positions)
	return s, md.ready
}

// Changed returns a channel closed at the next change of any model or of
// the connection state.
func (w *PnLWatcher) Changed() <-chan struct{} { return w.sig.changed() }

// Connected reports whether every account's snapshot arrived on a live
// connection.
func (w *PnLWatcher) Connected() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.up
}

// Err returns the error that stopped the watch for good (authentication,
// a refused subscribe, or the context's once it ended or Close was
// called), or nil.
func (w *PnLWatcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Wait blocks until every account's snapshot has arrived, the watch has
// failed for good (its error), or ctx ends.
func (w *PnLWatcher) Wait(ctx context.Context) error {
	for {
		ch := w.Changed()
		w.mu.Lock()
		up, err := w.up, w.err
		w.mu.Unlock()
		switch {
		case err != nil:
			return err
		case up:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Close ends the watch and waits for its goroutines.
func (w *PnLWatcher) Close() {
	w.cancel()
	<-w.done
}
