package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/locatorhq/locator/clock"
	"github.com/locatorhq/locator/internal/store"
)

// FailoverTrial is one failover of a fleet run: a process signalled, the
// accounts it owned, the seconds from the signal until every one of them
// had its lease held by another process (LeaseSeconds) and until each of
// those owners answered on its socket (Seconds: see awaitServed), and how
// many of the locates then made on them (one each, through their new
// owner) filled.
type FailoverTrial struct {
	Signal       string  `json:"signal"` // kill (SIGKILL) or stop (SIGSTOP)
	PID          int     `json:"pid"`
	Moved        int     `json:"moved"`
	LeaseSeconds float64 `json:"leaseSeconds"`
	Seconds      float64 `json:"seconds"`
	Filled       int     `json:"filled"`
}

// signals are the failover signals o's trials send, in order: kill,
// stop, or both taken in turn (kill first).
func (o FleetOptions) signals() []string {
	out := make([]string, max(o.Trials, 1))
	for t := range out {
		switch {
		case o.FailoverSignal == "both" && t%2 == 1, o.FailoverSignal == "stop":
			out[t] = "stop"
		default:
			out[t] = "kill"
		}
	}
	return out
}

// failover runs o's trials: in each, one process (each in turn) is killed
// (SIGKILL, and a new serve process started in its place, standing by)
// or stopped (SIGSTOP, until the others own its accounts; then it runs
// again, finds its leases gone, and stands by); the others are to own
// its accounts, and a locate is made on each through its new owner. It
// fills run's trials and their p50 and max, and the first trial's figures
// as Moved, FailoverSeconds and MovedFilled. live are the serve processes
// running, one killed replaced there by the one started in its place.
func (o FleetOptions) failover(ctx context.Context, run *FleetRun, live []*FleetProcess, st *store.Store, dir string, env []string, baseURL string) error {
	for t, signal := range o.signals() {
		p := t % len(live)
		victim := live[p]
		trial, err := o.failOne(ctx, live, st, victim, signal)
		if err != nil {
			return err
		}
		o.Logf("failover %d (%s of pid %d): its %d accounts' leases held by the others after %.2f s, each served after %.2f s; locating on them",
			t+1, signal, victim.PID, trial.Moved, trial.LeaseSeconds, trial.Seconds)
		if trial.Filled, err = o.locateAll(ctx, st, baseURL, trial.moved, 1+t); err != nil {
			return err
		}
		switch signal {
		case "kill":
			o.Logf("starting a serve process in place of pid %d", victim.PID)
			next, err := o.startServe(dir, env, p, t+1)
			if err != nil {
				return err
			}
			live[p] = next
			// Standing by for every account before the next trial: it
			// said what it serves, and has had standbyFollows to follow
			// the owners (a standby that is still saying hello to an
			// owner when it stops waits for the hello first).
			if err := awaitServing(ctx, []*FleetProcess{next}, time.Now().Add(5*time.Minute)); err != nil {
				return err
			}
			if err := clock.Sleep(ctx, clock.Real{}, standbyFollows); err != nil {
				return err
			}
		case "stop":
			victim.cmd.Process.Signal(syscall.SIGCONT)
			// Standing by again before the next trial, as a process
			// started in place of a killed one is: run on at once, the
			// next trial timed its own recovery too (its 1,000 owners
			// stepping down as the other process died).
			if err := awaitStoodBy(ctx, st, victim, trial.moved, time.Now().Add(5*time.Minute)); err != nil {
				return err
			}
			if err := clock.Sleep(ctx, clock.Real{}, standbyFollows); err != nil {
				return err
			}
		}
		run.Trials = append(run.Trials, trial.FailoverTrial)
	}
	var took []time.Duration
	for _, t := range run.Trials {
		took = append(took, time.Duration(t.Seconds*float64(time.Second)))
	}
	run.FailoverP50, run.FailoverMax = percentile(took, 0.5), percentile(took, 1)
	first := run.Trials[0]
	run.Moved, run.FailoverSeconds, run.MovedFilled = first.Moved, first.Seconds, first.Filled
	for _, p := range live {
		if p.alive() {
			rss, _, err := p.memory()
			if err != nil {
				return err
			}
			run.AfterRSSMB += rss
		}
	}
	return nil
}

// awaitStoodBy waits until p, continued after a stop, stands by again for
// each account of moved: its owners found their leases taken and stepped
// down, each recording p as the account's next owner (its standby record).
func awaitStoodBy(ctx context.Context, st *store.Store, p *FleetProcess, moved []int, deadline time.Time) error {
	for {
		sbs, err := st.Standbys(ctx)
		if err != nil {
			return err
		}
		stood := map[string]bool{}
		for _, sb := range sbs {
			if sb.PID == p.PID {
				stood[sb.Account] = true
			}
		}
		left := len(moved)
		for _, i := range moved {
			if stood[FleetAccount(i)] {
				left--
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("serve process %d, continued, stands by for %d of its %d accounts after 5 minutes", p.PID, len(moved)-left, len(moved))
		}
		if err := clock.Sleep(ctx, clock.Real{}, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// standbyFollows is how long a serve process started in place of a killed
// one is given, once it said what it serves, before the next trial.
const standbyFollows = 3 * time.Second

// trial is a FailoverTrial and the accounts that moved, by index.
type trial struct {
	FailoverTrial
	moved []int
}

// failOne signals victim and waits until every account it owned has a
// live owner among the other processes of live.
func (o FleetOptions) failOne(ctx context.Context, live []*FleetProcess, st *store.Store, victim *FleetProcess, signal string) (trial, error) {
	owned, err := ownedBy(ctx, st)
	if err != nil {
		return trial{}, err
	}
	tr := trial{FailoverTrial: FailoverTrial{Signal: signal, PID: victim.PID}}
	moved := map[string]bool{}
	for _, l := range owned[victim.PID] {
		moved[l.Account] = true
		i, err := strconv.Atoi(strings.TrimPrefix(l.Account, "FL"))
		if err != nil {
			return trial{}, fmt.Errorf("lease of %s: not an account of the run", l.Account)
		}
		tr.moved = append(tr.moved, i)
	}
	tr.Moved = len(tr.moved)
	if tr.Moved == 0 {
		return trial{}, fmt.Errorf("failover: pid %d owns no account", victim.PID)
	}
	o.Logf("failover: SIG%s of pid %d, which owns %d accounts", strings.ToUpper(signal), victim.PID, tr.Moved)
	others := slices.DeleteFunc(slices.Clone(live), func(p *FleetProcess) bool { return p == victim })
	signalled := time.Now()
	if signal == "kill" {
		victim.cmd.Process.Kill()
		victim.cmd.Wait()
	} else {
		victim.cmd.Process.Signal(syscall.SIGSTOP)
	}
	deadline := signalled.Add(2 * time.Minute)
	if err := awaitLeased(ctx, st, others, o.Accounts, deadline, 50*time.Millisecond); err != nil {
		return trial{}, err
	}
	tr.LeaseSeconds = time.Since(signalled).Seconds()
	if err := awaitServed(ctx, st, others, moved, deadline, 50*time.Millisecond); err != nil {
		return trial{}, err
	}
	tr.Seconds = time.Since(signalled).Seconds()
	return tr, nil
}
