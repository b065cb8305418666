package tradingday

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The checker reads only the simulator: its locate history of every day
// (Sim.Locates), its inventory (Sim.Inventory) and its request log
// (Sim.Requests), and judges them by the spec's rules as this file models
// them; what locator says is compared with that, never read back from its
// database.

// Locate statuses and types of the spec ("Locate statuses", "Locate types").
const (
	statusNew      = 48
	statusFilled   = 50
	statusOffered  = 65
	statusPending  = 54
	statusQuoting  = 81
	typeSingleUse  = 4
	singleUseLeg   = ".SU"
	quotePath      = "/v1/api/accounts/locates/quote"
	creditBackPath = "/v1/api/accounts/locates/sell"
)

func open(status int) bool {
	return status == statusQuoting || status == statusOffered || status == statusPending
}

// rowsOf returns the broker's rows of a quote: its id and its SingleUse leg.
func rowsOf(all []brokersim.LocateRecord, quoteReqID string) []brokersim.LocateRecord {
	var out []brokersim.LocateRecord
	for _, l := range all {
		if quoteReqID != "" && (l.QuoteReqID == quoteReqID || l.QuoteReqID == quoteReqID+singleUseLeg) {
			out = append(out, l)
		}
	}
	return out
}

// checkWorkflow checks a workflow locator calls final against the broker:
//   - final-at-broker: none of its rows is still open (every offer ended
//     accepted, declined or cancelled);
//   - outcome-agrees: it is filled (exit 0, "filled") exactly when one of
//     its rows is Filled, with the shares and the exact price the broker
//     filled; a credit-back is credited exactly when its row is Filled;
//   - price-as-charged: a filled locate's price is the broker's to ten
//     decimals (a float's text the broker wrote may carry an artefact
//     further down, which locator may keep or drop).
func (r *runner) checkWorkflow(w *workflow.Workflow, o account.Outcome) *Violation {
	if !w.Terminal() {
		return &Violation{Invariant: "follower-ends", Detail: fmt.Sprintf("%s: Follow returned %s, not final", w.ID, w.State)}
	}
	rows := rowsOf(r.sim.Locates(), w.QuoteReqID)
	var filled []brokersim.LocateRecord
	for _, l := range rows {
		if open(l.Status) {
			return &Violation{Invariant: "final-at-broker",
				Detail: fmt.Sprintf("%s (%s) is %s (exit %d) but the broker's row %s is still %d", w.ID, w.Symbol, w.State, console.Exit(o.End), l.QuoteReqID, l.Status)}
		}
		if l.Status == statusFilled {
			filled = append(filled, l)
		}
	}
	success := w.State == states.Filled || w.State == states.Credited
	switch {
	case success && len(filled) != 1:
		return &Violation{Invariant: "outcome-agrees", Detail: fmt.Sprintf("%s (%s) is %s (exit %d) but the broker filled %d rows of %s", w.ID, w.Symbol, w.State, console.Exit(o.End), len(filled), w.QuoteReqID)}
	case !success && len(filled) > 0:
		return &Violation{Invariant: "outcome-agrees", Detail: fmt.Sprintf("%s (%s) ends %s (%q, exit %d) but the broker filled %s", w.ID, w.Symbol, w.State, o.Words, console.Exit(o.End), filled[0].QuoteReqID)}
	case success && (o.End != account.EndDone || abs(filled[0].Shares) != w.Quantity):
		return &Violation{Invariant: "outcome-agrees", Detail: fmt.Sprintf("%s (%s) is %s (exit %d, %d shares) but the broker's row %s holds %d", w.ID, w.Symbol, w.State, console.Exit(o.End), w.Quantity, filled[0].QuoteReqID, filled[0].Shares)}
	case w.State == states.Filled && !w.Price.Round(10).Equal(filled[0].Price.Round(10)):
		return &Violation{Invariant: "price-as-charged", Detail: fmt.Sprintf("%s (%s) filled at %s; the broker charged %s (wrote %s)", w.ID, w.Symbol, w.Price, filled[0].Price, filled[0].Wire)}
	}
	return nil
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// creditedBack lets the credit-backs sent clear, then checks
// credited-back-all: no inventory row of symbol (every symbol when empty)
// keeps a share the spec lets be credited back: available shares of a row
// not tied to a short, and, of a SingleUse row, only while it has not
// opened a short ("Locate types"; "Short locates" rule 5: a Locate or
// PreBorrow share is creditable again once the short it was tied to is
// covered). Shares tied to open shorts are not available; those working
// short sales will need are kept for them (ledger.Unused), first on the
// available shares of a SingleUse row that opened a short, which may not
// be credited back anyway and which the broker fills a short from once
// the reusable rows are gone (seed 289), then on the other rows.
func (r *runner) creditedBack(ctx context.Context, symbol, by string) error {
	if err := r.sleep(ctx, time.Duration(r.day.Scenario.Timing.CreditClear)+time.Second); err != nil {
		return err
	}
	working := r.workingShorts()
	rows := r.sim.Inventory()
	// The broker fills a short from reusable rows before SingleUse ones.
	last := func(r brokersim.InventoryRecord) int {
		if r.Type == typeSingleUse {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(rows, func(a, b brokersim.InventoryRecord) int { return cmp.Compare(last(a), last(b)) })
	for _, inv := range rows {
		if inv.Account == Account && inv.Type == typeSingleUse && inv.UsedForShort {
			working[inv.Symbol] -= min(inv.Available, working[inv.Symbol])
		}
	}
	for _, inv := range rows {
		if inv.Account != Account || (symbol != "" && inv.Symbol != symbol) || (inv.Type == typeSingleUse && inv.UsedForShort) {
			continue
		}
		// Shares a working short sale of the symbol will need when it
		// fills are kept for it: crediting them back would leave it
		// without its cover. What is left over is kept in whole lots.
		keep := min(inv.Available, working[inv.Symbol])
		working[inv.Symbol] -= keep
		if inv.Available-keep >= 100 || (keep == 0 && inv.Available > 0) {
			return &Violation{Invariant: "credited-back-all",
				Detail: fmt.Sprintf("after %s the broker still shows %d %s shares of type %d available (sold %d today; %d kept for working short sales)", by, inv.Available, inv.Symbol, inv.Type, inv.Sold, keep)}
		}
	}
	return nil
}

// workingShorts sums, per symbol, the shares the account's working short
// sales at the broker have still to fill.
func (r *runner) workingShorts() map[string]int64 {
	out := map[string]int64{}
	for _, o := range r.sim.Orders() {
		switch o.Status {
		case "PendingNew", "New", "Accepted", "PartiallyFilled":
			if o.Account == Account && o.Side == "Sell" && o.OpenClose == "Open" {
				out[o.Symbol] += o.Quantity - o.Executed - o.Canceled
			}
		}
	}
	return out
}

// checkDay checks the day as a whole once every operation ran:
//   - no-offer-left-open: no row of the broker is Quoting, Offered or
//     Pending;
//   - spacing-kept: no quote was rejected for coming sooner than the
//     spec's same-symbol spacing after the one before;
//   - quote-once: no quoteReqID was quoted twice (a quote the broker
//     answered 200), nor credited back twice;
//   - inventory-model: today's inventory per (symbol, type) is what the
//     day's fills and credit-backs at the broker make it: available plus
//     what a pending credit-back froze equals the shares filled less the
//     shares credited back (less, on a SingleUse row that opened a short,
//     the shares its covers consumed), and toBeSold the shares of pending
//     ones;
//   - no-fill-outside-session: see fillsInSession.
func (r *runner) checkDay() *Violation {
	if v := r.fillsInSession(); v != nil {
		return v
	}
	all := r.sim.Locates()
	for _, l := range all {
		if l.Account == Account && open(l.Status) {
			return &Violation{Invariant: "no-offer-left-open", Detail: fmt.Sprintf("%s %s is still %d at the end of the day", l.QuoteReqID, l.Symbol, l.Status)}
		}
	}
	for _, l := range all {
		if l.Account == Account && l.Text != nil && strings.Contains(*l.Text, "apart") {
			return &Violation{Invariant: "spacing-kept", Detail: fmt.Sprintf("%s %s (sent %s) was rejected by the broker: %s", l.QuoteReqID, l.Symbol, market.DateTime(l.Created), *l.Text)}
		}
	}
	seen := map[string]bool{}
	for _, q := range r.sim.Requests() {
		if q.Method != "POST" || (q.Path != quotePath && q.Path != creditBackPath) || q.Status != 200 {
			continue
		}
		var body struct {
			QuoteReqID string `json:"quoteReqID"`
		}
		if json.Unmarshal([]byte(q.Body), &body) != nil || body.QuoteReqID == "" {
			continue
		}
		if seen[body.QuoteReqID] {
			return &Violation{Invariant: "quote-once", Detail: fmt.Sprintf("quoteReqID %s sent twice to %s", body.QuoteReqID, q.Path)}
		}
		seen[body.QuoteReqID] = true
	}
	type key struct {
		symbol string
		typ    int
	}
	held, pending := map[key]int64{}, map[key]int64{}
	today := market.SessionDay(r.clk.Now()).Date
	for _, l := range all {
		if l.Account != Account || !market.SessionDay(l.Created).Date.Equal(today) {
			continue
		}
		k := key{l.Symbol, l.Type}
		switch {
		case l.Status == statusFilled:
			held[k] += l.Shares // a credit-back's shares are negative
		case l.Status == statusNew && l.Shares < 0:
			pending[k] -= l.Shares
		}
	}
	got := map[key]bool{}
	for _, inv := range r.sim.Inventory() {
		if inv.Account != Account {
			continue
		}
		k := key{inv.Symbol, inv.Type}
		got[k] = true
		// A SingleUse row's shares tied by a short are consumed when it
		// is covered (spec "Locate types": not reusable): they leave it.
		on := inv.Available + inv.Locked + inv.Tied
		if (on != held[k] && !(inv.UsedForShort && on < held[k])) || inv.ToBeSold != pending[k] {
			return &Violation{Invariant: "inventory-model", Detail: fmt.Sprintf("%s type %d: the broker holds %+v; its fills and credit-backs make %d held, %d pending", inv.Symbol, inv.Type, inv, held[k], pending[k])}
		}
	}
	covered := map[string]bool{} // symbols a cover filled today: it may have consumed a SingleUse row whole
	for _, o := range r.sim.Orders() {
		if o.Account == Account && o.Side == "Buy" && o.OpenClose == "Close" && o.Executed > 0 && ledger.TradeDate(o.Updated).Equal(ledger.TradeDate(r.sim.Now())) {
			covered[o.Symbol] = true
		}
	}
	for k, n := range held {
		if n != 0 && !got[k] && !(k.typ == typeSingleUse && covered[k.symbol]) {
			return &Violation{Invariant: "inventory-model", Detail: fmt.Sprintf("%s type %d: no inventory row; fills and credit-backs make %d", k.symbol, k.typ, n)}
		}
	}
	return nil
}

// Describe is a failed day in words: the seed and the command that runs
// it again, the first invariant broken and the operations that led to it.
func Describe(res *Result, ops int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: ", res.Seed)
	if res.Violation == nil {
		fmt.Fprintf(&b, "%d operations, no invariant broken\n", res.Ran)
		return b.String()
	}
	at := "at the end of the day"
	if res.Violation.Op >= 0 {
		at = fmt.Sprintf("after operation %d", res.Violation.Op)
	}
	fmt.Fprintf(&b, "%v (%s)\nrerun: go test ./internal/tradingday -run TestGeneratedDays -seed %d -ops %d   or   locator bench --mode days --days 1 --seed %d --ops %d\n",
		res.Violation, at, res.Seed, ops, res.Seed, ops)
	for _, t := range res.Trace {
		b.WriteString("  " + t + "\n")
	}
	return b.String()
}
