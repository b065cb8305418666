package bench

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/locatorhq/locator/internal/console"
)

// Print shows the report as `locator bench` does: a table of the runs,
// then each target met or missed.
func (r *Report) Print(w io.Writer) {
	var rows [][]string
	var objs []any
	for _, m := range r.Modes {
		for _, x := range m.Runs {
			rows = append(rows, []string{m.Name, x.Runner, fmt.Sprint(x.N), fmt.Sprintf("%.2f", x.Wall), fmt.Sprintf("%.2f", x.Floor),
				fmt.Sprintf("%.3f", x.Ratio), fmt.Sprintf("%.3f", x.QuoteGapP50), fmt.Sprintf("%.3f/%.3f", x.OfferToAcceptP50, x.OfferToAcceptP99),
				CallsPerFill(x.CallsPerFill), fmt.Sprint(x.Status429), fmt.Sprint(x.Expired)})
			objs = append(objs, x)
		}
	}
	console.Printer{W: w}.Table([]string{"MODE", "RUNNER", "N", "WALL s", "FLOOR s", "×FLOOR", "QUOTE GAP p50", "OFFER→ACCEPT p50/p99", "CALLS/FILL", "429", "EXPIRED"}, rows, objs)
	fmt.Fprintln(w)
	for _, t := range r.Targets {
		mark := "MISSED"
		if t.Met {
			mark = "met"
		}
		fmt.Fprintf(w, "%-6s %s: %s\n", mark, t.Target, t.Got)
	}
}

// Register adds the fleet run's flags to fs, with their defaults: issue
// 18's 200 accounts over 100 key pairs on two processes.
func (o *FleetOptions) Register(fs *pflag.FlagSet) {
	fs.IntVar(&o.Accounts, "accounts", 200, "--mode fleet: accounts, spread over --key-pairs")
	fs.IntVar(&o.KeyPairs, "key-pairs", 100, "--mode fleet: key pairs")
	fs.IntVar(&o.Processes, "processes", 2, "--mode fleet: serve processes on the one database (LOCATOR_DB, a postgres:// URL; unset: one process on a SQLite file)")
	fs.DurationVar(&o.Idle, "idle", time.Minute, "--mode fleet: how long the owned accounts are watched doing nothing")
	fs.IntVar(&o.Parallel, "parallel", 20, "--mode fleet: locates at once (calls on the owners' account API; with --locate-at-start, locate commands)")
	fs.IntVar(&o.Locating, "locating", 0, "--mode fleet: how many accounts locate (the first ones), the others idle meanwhile (0: all)")
	fs.StringVar(&o.LogDir, "log-dir", "", "--mode fleet: keep each serve process's log (serve-P.log) and the simulator's request log (requests.json) in this folder")
	fs.BoolVar(&o.Failover, "failover", true, "--mode fleet: then signal a process (--failover-signal), --trials times, each process in turn, and locate on the accounts it owned through the others")
	fs.StringVar(&o.FailoverSignal, "failover-signal", "kill", "--mode fleet: kill (SIGKILL, a new serve process started in its place), stop (SIGSTOP, continued once the others own its accounts), or both in turn")
	fs.IntVar(&o.Trials, "trials", 1, "--mode fleet: failovers, each timed from the signal until every account the process owned is owned by another")
	fs.BoolVar(&o.AtStart, "locate-at-start", false, "--mode fleet: start the locates with the serve processes, before they own their accounts (each follows the process that is to own it; no idle phase, no failover)")
}

// Print shows the fleet run: a line per serve process, then the totals
// and the figures per account; with out, it writes them as fleet.json
// there too.
func (r *FleetRun) Print(w io.Writer, out string) error {
	var rows [][]string
	var objs []any
	for _, p := range r.Processes {
		rows = append(rows, []string{fmt.Sprint(p.PID), fmt.Sprint(p.Owned), fmt.Sprintf("%.1f", p.RSSMB), fmt.Sprintf("%.1f", p.PeakRSSMB),
			fmt.Sprintf("%.2f", p.StartCPU), fmt.Sprintf("%.2f", p.IdleCPU), fmt.Sprintf("%.2f", p.LocateCPU)})
		objs = append(objs, p)
	}
	console.Printer{W: w}.Table([]string{"PID", "OWNED", "RSS MB", "PEAK MB", "START CPU s", "IDLE CPU s", "LOCATE CPU s"}, rows, objs)
	fmt.Fprintf(w, "\n%d accounts over %d key pairs, %d processes on %s: every account owned and served in %.1f s; key pairs owned by two processes: %d; serve processes that ended by themselves: %d\n",
		r.Accounts, r.KeyPairs, len(r.Processes), r.Database, r.StartSeconds, r.SplitKeyPairs, r.Exited)
	fmt.Fprintf(w, "locates: %d of %d filled in %.1f s; over the run the simulator saw %d requests, %d responses 429, %d quotes, %d quoted twice\n",
		r.Filled, r.Locates, r.LocateSeconds, r.Requests, r.Status429, r.Quotes, r.Duplicates)
	fmt.Fprintf(w, "quote → accept p50 %.2f s, p99 %.2f s; offer seen → accept sent p50 %.2f s, p99 %.2f s\n",
		r.QuoteToAcceptP50, r.QuoteToAcceptP99, r.OfferSeenToAcceptP50, r.OfferSeenToAcceptP99)
	fmt.Fprintf(w, "of which quote → offer (the broker settling) p50 %.2f s, p99 %.2f s; offer → the account's first history read after it p50 %.2f s, p99 %.2f s\n",
		r.QuoteToOfferP50, r.QuoteToOfferP99, r.OfferToReadP50, r.OfferToReadP99)
	for i, t := range r.Trials {
		fmt.Fprintf(w, "failover %d: SIG%s of pid %d; its %d accounts' leases held by the others in %.2f s, every one served in %.2f s; locates on them after: %d of %d filled\n",
			i+1, strings.ToUpper(t.Signal), t.PID, t.Moved, t.LeaseSeconds, t.Seconds, t.Filled, t.Moved)
	}
	if len(r.Trials) > 0 {
		fmt.Fprintf(w, "failover over %d trials, until served: p50 %.2f s, max %.2f s; the processes at the end, owning all %d accounts: %.1f MB resident\n",
			len(r.Trials), r.FailoverP50, r.FailoverMax, r.Accounts, r.AfterRSSMB)
	}
	fmt.Fprintf(w, "per account: %.2f MB resident, %.1f ms CPU and %.1f broker requests a minute idle (over %.0f s), %.1f goroutines idle, %.1f ms CPU per locate\n",
		r.RSSMBPerAccount, r.IdleCPUmsPerAccountMinute, r.IdleRequestsPerAccountMinute, r.IdleSeconds, r.IdleGoroutinesPerAccount, r.CPUmsPerLocate)
	if out == "" {
		return nil
	}
	return writeJSON(out, "fleet.json", r)
}
