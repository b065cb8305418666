package ledger

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// FeeCashType is the ledger label of locate charges and credits (spec: Cash
// ledger row). Matching ignores case and surrounding spaces.
const FeeCashType = brokerclient.CashTypeLocateFees

// tolerance is how far a ledger amount may be from the expected one and
// still match: a cent, for rounding (spec: exact penny reconciliation is not
// guaranteed).
var tolerance = decimal.New(1, -2)

// item is a workflow waiting for its ledger row.
type item struct {
	w        *workflow.Workflow
	kind     locator.FeeLineKind
	at       time.Time
	date     time.Time
	last     time.Time // the last ledger date that may still carry its row
	expected decimal.Decimal
	known    bool
	report   bool // on or after since; earlier ones only absorb rows
	row      *cashRow
}

// cashRow is a `Locate Fees` ledger row.
type cashRow struct {
	e      store.CashEntry
	kind   locator.FeeLineKind
	amount decimal.Decimal
	used   bool
}

// FeeGrace is how long after a fill or a credit-back its ledger row may
// still be missing before it counts as missing rather than pending: four
// days, so a Friday fill posted after a weekend and a holiday is only
// pending. `locator fees`, the reconcile job and the dashboard all use it.
const FeeGrace = 96 * time.Hour

// Check is the fee check: the one function behind `locator fees` and the
// reconcile job, so the two agree. It reads the account first (today's
// totalLocateCosts, and an answer whose Date header tells the broker's
// clock), takes today on the broker's calendar (now, this machine's time,
// moved by c.ClockSkew()), syncs the window's cash ledger into the store
// and reconciles it as Reconcile does, with the workflows' times moved onto
// the broker's clock too: a replayed day or a skewed host matches fees to
// the dates the broker stamps. Bad input is refused before anything is
// sent; a since after the broker's today is refused after that first read.
func Check(ctx context.Context, c *brokerclient.Client, st *store.Store, account string, now time.Time, w locator.FeeWindow, grace time.Duration) (*locator.FeeReport, locator.SyncResult, error) {
	if c == nil {
		return nil, locator.SyncResult{}, brokercode.Invalid("client", "is required")
	}
	if err := checkWindow(w); err != nil {
		return nil, locator.SyncResult{}, err
	}
	// The window is checked against the broker's today below; here only
	// the rest (today's date, as a trade date: now's own date may be
	// tomorrow's in UTC after 8 PM Eastern).
	if err := checkReconcile(st, account, TradeDate(now), now, grace); err != nil {
		return nil, locator.SyncResult{}, err
	}
	account = strings.ToUpper(strings.TrimSpace(account))
	acct, _, err := c.Accounts.Get(ctx, account)
	if err != nil {
		return nil, locator.SyncResult{}, err
	}
	skew := c.ClockSkew()
	brokerNow := now.Add(skew)
	since, today, err := window(w, brokerNow)
	if err != nil {
		return nil, locator.SyncResult{}, err
	}
	synced, err := Sync(ctx, c, st, account, since, today.AddDate(0, 0, 1))
	if err != nil {
		return nil, synced, err
	}
	total := acct.TotalLocateCosts
	r, err := reconcile(ctx, st, account, since, brokerNow, skew, grace, &total)
	return r, synced, err
}

// CheckStored is Check from the store alone: the ledger as the last syncs
// left it, reconciled over window w on the broker's calendar (skew, the
// broker's clock offset as last estimated, moves now, this machine's time,
// onto it), with no read of the broker and so no totalLocateCosts: what
// a page view or a scrape asks, which costs the broker nothing (a daemon
// owner syncs on its own, service.LedgerSyncEvery).
func CheckStored(ctx context.Context, st *store.Store, account string, now time.Time, skew time.Duration, w locator.FeeWindow, grace time.Duration) (*locator.FeeReport, error) {
	if err := checkWindow(w); err != nil {
		return nil, err
	}
	brokerNow := now.Add(skew)
	since, _, err := window(w, brokerNow)
	if err != nil {
		return nil, err
	}
	return ReconcileStored(ctx, st, account, since, brokerNow, skew, grace)
}

// checkWindow refuses a window with neither a first date nor a number of
// days.
func checkWindow(w locator.FeeWindow) error {
	if w.Since.IsZero() && w.Days <= 0 {
		return brokercode.Invalid("window", "want a first date or a number of days")
	}
	return nil
}

// window is the first trade date of w and the broker's today at
// brokerNow; a first date after today is refused.
func window(w locator.FeeWindow, brokerNow time.Time) (since, today time.Time, err error) {
	today = TradeDate(brokerNow)
	since = civilDate(w.Since)
	if w.Since.IsZero() {
		since = today.AddDate(0, 0, -(w.Days - 1))
	}
	if since.After(today) {
		return since, today, brokercode.Invalid("since", "%s is after the broker's today %s", since.Format(time.DateOnly), today.Format(time.DateOnly))
	}
	return since, today, nil
}

// Reconcile matches every filled locate workflow of the account in the store
// to its `Locate Fees` charge in the synced ledger (run Sync first), and
// every credited credit-back to its `Locate Fees` credit:
//
//   - the expected fee is the workflow's Price × Quantity; the expected
//     credit is the credit-back row's price × Quantity (unknown when the store
//     holds no price, in which case any amount matches);
//   - a row whose note names the workflow's quoteReqID is its row, whatever
//     the amount; otherwise a row matches when it is dated on the workflow's
//     trade date (Eastern) or later, no later than the trade date of At +
//     grace, and within a cent of the expected amount; each row matches one
//     workflow at most;
//   - a matched row more than a cent off is a wrong amount; a workflow still
//     without a row is paired, as a wrong amount, with a row of its window
//     that names no other workflow only when the row's note names its symbol
//     (notes are free-form, so an arbitrary pairing could hide an
//     unexplained charge);
//   - without a row a workflow is pending until At + grace, then missing;
//   - a `Locate Fees` row dated on or after since that nothing explains
//     (a second row naming the same quoteReqID included) is unexplained.
//
// Locates filled up to grace before since take part in the matching (their
// fees may land on or after since) but are reported only when they explain a
// row. now is the broker's time, and so are the workflows' times once moved
// by c.ClockSkew() (they are this machine's); without c they are taken as
// they are. When c is not nil, today's totals are compared with the account's
// totalLocateCosts (a today-only counter): it agrees when it equals the
// day's charges, gross or net of credits, within a cent per row; it is
// "pending" when it does once the fees still pending are added.
func Reconcile(ctx context.Context, c *brokerclient.Client, st *store.Store, account string, since time.Time, now time.Time, grace time.Duration) (*locator.FeeReport, error) {
	if err := checkReconcile(st, account, since, now, grace); err != nil {
		return nil, err
	}
	account = strings.ToUpper(strings.TrimSpace(account))
	var broker *decimal.Decimal
	var skew time.Duration
	if c != nil {
		acct, _, err := c.Accounts.Get(ctx, account)
		if err != nil {
			return nil, err
		}
		total := acct.TotalLocateCosts
		broker, skew = &total, c.ClockSkew()
	}
	return reconcile(ctx, st, account, civilDate(since), now, skew, grace, broker)
}

// ReconcileStored is Reconcile from the store alone (no totalLocateCosts),
// with skew, the broker's clock offset, moving the workflows' times onto
// the broker's clock as Check does: for reports over a range whose ledger
// is already synced.
func ReconcileStored(ctx context.Context, st *store.Store, account string, since, now time.Time, skew, grace time.Duration) (*locator.FeeReport, error) {
	if err := checkReconcile(st, account, since, now, grace); err != nil {
		return nil, err
	}
	return reconcile(ctx, st, strings.ToUpper(strings.TrimSpace(account)), civilDate(since), now, skew, grace, nil)
}

// checkReconcile refuses bad input before anything is read or sent.
func checkReconcile(st *store.Store, account string, since, now time.Time, grace time.Duration) error {
	switch {
	case st == nil:
		return brokercode.Invalid("store", "is required")
	case strings.TrimSpace(account) == "":
		return brokercode.Invalid("account", "is empty")
	case since.IsZero() || now.IsZero():
		return brokercode.Invalid("since/now", "both times are required")
	case grace < 0:
		return brokercode.Invalid("grace", "%s is negative", grace)
	case civilDate(since).After(TradeDate(now)):
		return brokercode.Invalid("since", "%s is after today %s", civilDate(since).Format(time.DateOnly), TradeDate(now).Format(time.DateOnly))
	}
	return nil
}

// reconcile is Reconcile with the account's totalLocateCosts already read
// (nil: none) and skew the broker's clock offset, added to the workflows'
// times.
func reconcile(ctx context.Context, st *store.Store, account string, since, now time.Time, skew, grace time.Duration, broker *decimal.Decimal) (*locator.FeeReport, error) {
	r := &locator.FeeReport{Account: account, Since: since, Today: TradeDate(now), Now: now, Grace: grace}

	items, err := loadItems(ctx, st, account, r.Since, skew, grace)
	if err != nil {
		return nil, err
	}
	entries, err := st.CashEntries(ctx, account, r.Since, time.Time{})
	if err != nil {
		return nil, err
	}
	var rows []*cashRow
	for _, e := range entries {
		if !strings.EqualFold(strings.TrimSpace(e.CashType), string(FeeCashType)) {
			continue
		}
		cr := &cashRow{e: e, kind: locator.LineFee, amount: e.Withdraw}
		if e.Deposit.IsPositive() {
			cr.kind, cr.amount = locator.LineCredit, e.Deposit
		}
		rows = append(rows, cr)
	}

	match(items, rows)

	for _, it := range items {
		if !it.report && it.row == nil {
			continue
		}
		l := locator.FeeLine{
			Kind: it.kind, Date: it.date, Symbol: it.w.Symbol, Shares: it.w.Quantity, Expected: it.expected,
			ExpectedKnown: it.known, WorkflowID: it.w.ID, QuoteReqID: it.w.QuoteReqID, At: it.at, Due: it.at.Add(grace),
		}
		switch {
		case it.row != nil:
			l.Charged, l.LedgerDate, l.Note = it.row.amount, it.row.e.EntryDate, it.row.e.Note
			l.Status = locator.FeeMatched
			if it.known && !fits(it.kind, it.row.amount, it.expected) {
				l.Status = locator.FeeWrongAmount
			}
		case now.Before(l.Due):
			l.Status = locator.FeePending
		default:
			l.Status = locator.FeeMissing
		}
		r.Lines = append(r.Lines, l)
	}
	for _, cr := range rows {
		if cr.used {
			continue
		}
		r.Lines = append(r.Lines, locator.FeeLine{
			Kind: cr.kind, Date: cr.e.EntryDate, Symbol: symbolInNote(cr.e.Note), Charged: cr.amount,
			Status: locator.FeeUnexplained, LedgerDate: cr.e.EntryDate, Note: cr.e.Note,
		})
	}
	sort.SliceStable(r.Lines, func(i, j int) bool {
		a, b := r.Lines[i], r.Lines[j]
		if !a.Date.Equal(b.Date) {
			return a.Date.Before(b.Date)
		}
		if (a.WorkflowID == "") != (b.WorkflowID == "") {
			return b.WorkflowID == "" // a day's unexplained rows after its workflows
		}
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.Symbol < b.Symbol
	})
	r.Days = days(r, rows, broker)
	return r, nil
}

// loadItems reads the filled locates and credited credit-backs that may own
// a ledger row dated on or after since; their times, this machine's, are
// moved by skew onto the broker's clock.
func loadItems(ctx context.Context, st *store.Store, account string, since time.Time, skew, grace time.Duration) ([]*item, error) {
	// Workflows are listed by creation, on this machine's clock; a fill
	// comes seconds after it, so a day of margin is plenty.
	from := since.Add(-grace).Add(-skew).AddDate(0, 0, -2)
	var items []*item
	for _, k := range []struct {
		kind  states.Kind
		state states.State
		line  locator.FeeLineKind
	}{{states.Locate, states.Filled, locator.LineFee}, {states.CreditBack, states.Credited, locator.LineCredit}} {
		ws, err := st.List(ctx, store.Filter{Account: account, AnyCase: true, Kind: k.kind, Since: from})
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if w.State != k.state {
				continue
			}
			at, err := ReachedAt(ctx, st, w)
			if err != nil {
				return nil, err
			}
			at = at.Add(skew)
			it := &item{w: w, kind: k.line, at: at, date: TradeDate(at), last: TradeDate(at.Add(grace))}
			it.report = !it.date.Before(since)
			if it.last.Before(since) {
				continue // its row, if any, is dated before the report
			}
			it.expected, it.known = expectedAmount(w)
			items = append(items, it)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].at.Before(items[j].at) })
	return items, nil
}

// ReachedAt is when the workflow reached its current state, on this
// machine's clock: the transition log's entry, or the last update when the
// log has none.
func ReachedAt(ctx context.Context, st *store.Store, w *workflow.Workflow) (time.Time, error) {
	ts, err := st.Transitions(ctx, w.ID)
	if err != nil {
		return time.Time{}, err
	}
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].To == w.State && ts[i].From != w.State {
			return ts[i].At, nil
		}
	}
	return w.UpdatedAt, nil
}

// expectedAmount is what the ledger should show for w: price × quantity,
// with the price of the offer taken or, for a credit-back, its history
// row's price (workflow.Workflow.OfferPrice).
func expectedAmount(w *workflow.Workflow) (decimal.Decimal, bool) {
	price := w.OfferPrice()
	if !price.IsPositive() {
		return decimal.Zero, false
	}
	return price.Mul(decimal.NewFromInt(w.Quantity)), true
}

// match pairs workflows with ledger rows, most certain pairings first:
//
//  1. a row whose note names a workflow's quoteReqID belongs to it, whatever
//     the amount (a second such row is a double charge, left unexplained);
//  2. a row that names no workflow, within a cent of the expected amount;
//  3. a row that names no workflow but names the symbol (a wrong amount).
func match(items []*item, rows []*cashRow) {
	owner := map[*cashRow]*item{}
	for _, cr := range rows {
		for _, it := range items {
			if it.kind == cr.kind && namesID(it, cr) {
				owner[cr] = it
				break
			}
		}
	}
	inWindow := func(it *item, cr *cashRow) bool {
		return cr.kind == it.kind && !cr.e.EntryDate.Before(it.date) && !cr.e.EntryDate.After(it.last)
	}
	for _, cr := range rows {
		if it := owner[cr]; it != nil && it.row == nil && !cr.e.EntryDate.Before(it.date) {
			it.row, cr.used = cr, true
		}
	}
	symbolRE := map[string]*regexp.Regexp{}
	namesSymbol := func(it *item, cr *cashRow) bool {
		re := symbolRE[it.w.Symbol]
		if re == nil {
			re = symbolPattern(it.w.Symbol)
			symbolRE[it.w.Symbol] = re
		}
		return re.MatchString(cr.e.Note)
	}
	for _, ok := range []func(it *item, cr *cashRow) bool{amountOK, namesSymbol} {
		for _, it := range items {
			if it.row != nil {
				continue
			}
			for _, cr := range rows {
				if cr.used || owner[cr] != nil || !inWindow(it, cr) || !ok(it, cr) {
					continue
				}
				it.row, cr.used = cr, true
				break
			}
		}
	}
}

func amountOK(it *item, cr *cashRow) bool {
	return !it.known || within(cr.amount, it.expected, tolerance)
}

// namesID reports whether the row's note carries the workflow's quoteReqID
// (which the accepted leg's id.SU contains too).
func namesID(it *item, cr *cashRow) bool {
	return it.w.QuoteReqID != "" && strings.Contains(cr.e.Note, it.w.QuoteReqID)
}

// symbolPattern matches a note that mentions symbol as a whole word.
func symbolPattern(symbol string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9.])` + regexp.QuoteMeta(symbol) + `($|[^A-Za-z0-9])`)
}

// symbolWord finds an uppercase ticker-like word after "fee" or "credit-back"
// in a note, for showing an unexplained row; "" when there is none.
var symbolWord = regexp.MustCompile(`(?i:fee|credit-back|credit)\s+([A-Z][A-Z0-9.]{0,9})\b`)

func symbolInNote(note string) string {
	if m := symbolWord.FindStringSubmatch(note); m != nil {
		return m[1]
	}
	return ""
}

func within(a, b, tol decimal.Decimal) bool { return a.Sub(b).Abs().LessThanOrEqual(tol) }

// fits reports whether a ledger row's amount is right for a line of kind
// expecting expected: a fee within a cent of price × shares; a credit-back's
// refund at most the fee of its shares and a cent. The spec leaves the
// refund's amount to the broker (`Locate Fees`, "charge or credit"): it may
// pay back less than the fee, never more.
func fits(kind locator.FeeLineKind, amount, expected decimal.Decimal) bool {
	if kind == locator.LineCredit {
		return amount.LessThanOrEqual(expected.Add(tolerance))
	}
	return within(amount, expected, tolerance)
}

// days totals the report per trade date and compares today's charges with
// the broker's totalLocateCosts.
func days(r *locator.FeeReport, rows []*cashRow, broker *decimal.Decimal) []locator.FeeDay {
	byDate := map[time.Time]*locator.FeeDay{}
	get := func(d time.Time) *locator.FeeDay {
		if byDate[d] == nil {
			byDate[d] = &locator.FeeDay{Date: d}
		}
		return byDate[d]
	}
	for _, l := range r.Lines {
		if l.WorkflowID == "" || l.Date.Before(r.Since) {
			continue
		}
		d := get(l.Date)
		switch l.Kind {
		case locator.LineFee:
			d.ExpectedFees = d.ExpectedFees.Add(l.Expected)
			if l.Status == locator.FeePending {
				d.PendingFees = d.PendingFees.Add(l.Expected)
			}
		case locator.LineCredit:
			d.ExpectedCredits = d.ExpectedCredits.Add(l.Expected)
		}
	}
	rowsOn := map[time.Time]int{}
	for _, cr := range rows {
		d := get(cr.e.EntryDate)
		rowsOn[cr.e.EntryDate]++
		if cr.kind == locator.LineFee {
			d.Charged = d.Charged.Add(cr.amount)
		} else {
			d.Credited = d.Credited.Add(cr.amount)
		}
	}
	if broker != nil {
		d := get(r.Today)
		d.BrokerTotal = broker
		tol := tolerance.Mul(decimal.NewFromInt(int64(max(1, rowsOn[r.Today]))))
		net := d.Charged.Sub(d.Credited)
		switch {
		case within(*broker, d.Charged, tol) || within(*broker, net, tol):
			d.Status = locator.DayAgrees
		case d.PendingFees.IsPositive() && (within(*broker, d.Charged.Add(d.PendingFees), tol) || within(*broker, net.Add(d.PendingFees), tol)):
			d.Status = locator.DayPending
		default:
			d.Status = locator.DayDiffers
		}
	}
	out := make([]locator.FeeDay, 0, len(byDate))
	for _, d := range byDate {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Date.Before(out[j].Date) })
	return out
}
