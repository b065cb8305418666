package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/uuid"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// StoreFigures are the store's durable state changes per second: each a
// workflow moving Requested → Quoting with its transition logged, committed
// one per transaction (as a lone step is) and grouped GroupSize to a
// transaction (as the engine's loop commits a batch of events).
type StoreFigures struct {
	Changes          int     `json:"changes"`
	SinglePerSecond  float64 `json:"singleCommitPerSecond"`
	GroupSize        int     `json:"groupSize"`
	GroupedPerSecond float64 `json:"groupedCommitPerSecond"`
}

// Seed records n open locate workflows of distinct symbols in st, in state
// (Requested, or Quoting as if their quotes had left), MACed with key as
// the owner that made them would have (an engine refuses rows that are
// not).
func Seed(ctx context.Context, st *store.Store, key workflow.RowKey, n int, state states.State, now time.Time) ([]*workflow.Workflow, error) {
	out := make([]*workflow.Workflow, n)
	for i := range out {
		w := &workflow.Workflow{ID: "wf-" + uuid.NewString()[:13], Kind: states.Locate, Account: Account,
			Symbol: fmt.Sprintf("ZS%05d", i), Requested: Quantity, QuoteReqID: uuid.NewString(), State: state,
			Policy: workflow.Policy{MaxPrice: maxPrice, AutoAccept: true}}
		if state != states.Requested {
			w.Quantity, w.SentAt = Quantity, now
		}
		w.MAC = key.Workflow(w)
		if err := st.Create(ctx, w); err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

// StoreThroughput measures durable state changes per second on a fresh
// store in dir: changes steps, half one per transaction, half in groups.
func StoreThroughput(ctx context.Context, dir string, changes, group int) (StoreFigures, error) {
	clk := clock.Real{}
	st, err := store.Open(ctx, filepath.Join(dir, "throughput.db"), clk)
	if err != nil {
		return StoreFigures{}, err
	}
	defer st.Close()
	ws, err := Seed(ctx, st, nil, changes, states.Requested, clk.Now()) // no engine reads them: no key
	if err != nil {
		return StoreFigures{}, err
	}
	steps := make([]store.Step, len(ws))
	for i, w := range ws {
		s := workflow.StepWorkflow(w, workflow.QuoteTurn{}, workflow.Env{Now: clk.Now()})
		if s.Err != nil || s.Next == nil {
			return StoreFigures{}, fmt.Errorf("seeded workflow does not step: %v", s.Err)
		}
		steps[i] = store.Step{Prev: w, Next: s.Next, Transition: s.Transition}
	}
	half := len(steps) / 2
	f := StoreFigures{Changes: len(steps), GroupSize: group}
	start := time.Now()
	for _, s := range steps[:half] {
		if _, err := st.Commit(ctx, s.Prev, s.Next, s.Transition); err != nil {
			return f, err
		}
	}
	f.SinglePerSecond = round(float64(half)/time.Since(start).Seconds(), 0)
	start = time.Now()
	rest := steps[half:]
	for i := 0; i < len(rest); i += group {
		if _, err := st.CommitAll(ctx, rest[i:min(i+group, len(rest))]); err != nil {
			return f, err
		}
	}
	f.GroupedPerSecond = round(float64(len(rest))/time.Since(start).Seconds(), 0)
	return f, nil
}

// Memory is the heap one engine holds for n live (quoted, unanswered)
// workflows, in MB per 1,000, measured after Start and the first history
// read against t.
func Memory(ctx context.Context, t *Target, dir string, n int) (float64, error) {
	st, err := store.Open(ctx, filepath.Join(dir, "memory.db"), t.Clock)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	key, err := t.RowKey()
	if err != nil {
		return 0, err
	}
	if _, err := Seed(ctx, st, key, n, states.Quoting, t.Clock.Now()); err != nil {
		return 0, err
	}
	before := heap()
	e, _, err := startEngine(ctx, t, st)
	if err != nil {
		return 0, err
	}
	defer e.Close()
	after := heap()
	runtime.KeepAlive(e)
	return round(float64(after-before)/float64(n)*1000/(1<<20), 2), nil
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// startEngine starts an engine on st and waits for its first history read;
// it returns how long Start took.
func startEngine(ctx context.Context, t *Target, st *store.Store) (*engine.Engine, time.Duration, error) {
	client, err := t.Client()
	if err != nil {
		return nil, 0, err
	}
	e, err := engine.New(engine.Config{Client: client, Store: st, Clock: t.Clock, Account: Account, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := e.Start(ctx); err != nil {
		return nil, 0, err
	}
	took := time.Since(start)
	deadline := time.Now().Add(30 * time.Second)
	for e.Polls() == 0 {
		if time.Now().After(deadline) {
			e.Close()
			return nil, 0, errors.New("no history read 30 s after Start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return e, took, nil
}

// RecoveryFigures: an engine's Start on the store a SIGKILLed process left
// with Open workflows, and the first history read after it.
type RecoveryFigures struct {
	Open         int     `json:"openWorkflows"`
	StartSeconds float64 `json:"startSeconds"`
	// FirstReadSeconds runs from Start returning to the first history read
	// done (the poller's, which reconciles every workflow).
	FirstReadSeconds float64 `json:"firstHistoryReadSeconds"`
}

// Victim is the process Recovery kills: it seeds n quoted workflows in the
// store at db, says "ready" on stdout and waits to be killed. It is an
// owner of the default scenario's first key pair, as Recovery's target is
// (Scenario), so it MACs its rows with that pair's key.
func Victim(ctx context.Context, db string, n int) error {
	key, err := Remote("http://127.0.0.1").RowKey() // no request is sent: the key pair alone
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, db, clock.Real{})
	if err != nil {
		return err
	}
	if _, err := Seed(ctx, st, key, n, states.Quoting, time.Now()); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	return ctx.Err()
}

// Recovery runs the victim process victim(db, n) builds (one that runs
// Victim, as `locator bench --victim` does) to leave n open workflows in db,
// kills it with SIGKILL, and times an engine's Start on what it left,
// against t.
func Recovery(ctx context.Context, t *Target, victim func(db string, n int) *exec.Cmd, dir string, n int) (RecoveryFigures, error) {
	db := filepath.Join(dir, "recovery.db")
	cmd := victim(db, n)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return RecoveryFigures{}, err
	}
	if err := cmd.Start(); err != nil {
		return RecoveryFigures{}, err
	}
	sc := bufio.NewScanner(out)
	ready := sc.Scan() && sc.Text() == "ready"
	cmd.Process.Kill() // SIGKILL: no deferred close, no checkpoint
	cmd.Wait()
	if !ready {
		return RecoveryFigures{}, fmt.Errorf("victim ended before it was ready: %v", sc.Err())
	}
	st, err := store.Open(ctx, db, t.Clock)
	if err != nil {
		return RecoveryFigures{}, err
	}
	defer st.Close()
	start := time.Now()
	e, took, err := startEngine(ctx, t, st)
	if err != nil {
		return RecoveryFigures{}, err
	}
	read := time.Since(start) - took
	open := len(e.Active())
	e.Close()
	return RecoveryFigures{Open: open, StartSeconds: round(took.Seconds(), 3), FirstReadSeconds: round(read.Seconds(), 3)}, nil
}
