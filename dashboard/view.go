package dashboard

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/store"
	"github.com/locatorhq/locator/workflow"
)

// view is everything the page shows, as of one reading of the clock. It is
// built from the engines and the store only: workflows, inventory, fees and
// job runs, which hold no secret.
type view struct {
	Now      time.Time
	Accounts []accountView
}

type accountView struct {
	Account   string
	LeaseHeld bool
	Running   bool
	Workflows []workflowView
	Inventory []inventoryView
	Fees      feesView
	Jobs      []store.JobRun
}

// workflowView is one unfinished workflow; Offer is set while an offer
// waits on a person.
type workflowView struct {
	ID, Kind, Symbol, State string
	Requested, Quantity     int64
	Reason                  string
	Offer                   *offerView
}

type offerView struct {
	Leg, Type          string
	Price, Total       string
	Shares             int64
	ExpiresAt          time.Time
	AnswerBy           time.Time     // ExpiresAt less the engine's accept margin: the last moment an answer is acted on
	Remaining          time.Duration // until AnswerBy
	RemainingFormatted string
}

type inventoryView struct {
	Symbol, Type                     string
	Available, Unavailable, ToBeSold int64
}

// feesView compares, per symbol, the fees today's fills should cost with
// what the synced ledger charged; the bars are widths in the chart's
// units.
type feesView struct {
	Day               time.Time
	Rows              []feeRow
	Expected, Charged string
	Problems          int
	Err               string
}

type feeRow struct {
	Symbol                    string
	X                         int // where the bars start
	Expected, Charged         string
	ExpectedBar, ChargedBar   float64
	ExpectedText, ChargedText float64 // x of each bar's label
	Y                         int
}

// Chart geometry, in the SVG's user units.
const (
	chartLabel = 70  // room for the symbol
	chartWidth = 260 // the longest bar
	chartValue = 70  // room for a bar's amount
	chartRow   = 34  // height of one symbol's pair of bars
)

// Width and Height are the chart's viewBox.
func (f feesView) Width() int  { return chartLabel + chartWidth + chartValue }
func (f feesView) Height() int { return max(1, len(f.Rows))*chartRow + 8 }

// waitsOnPerson reports whether w's offer is one a person answers: an
// offer the policy decides is accepted or declined in the step that
// records it, so one still in Offered waits on the process that asked,
// or on anyone (this page, `locator approve`) when that process is gone.
func waitsOnPerson(w *workflow.Workflow) bool {
	return w.Kind == states.Locate && w.State == states.Offered
}

// build reads every owner's state for the page.
func (s *Server) build(ctx context.Context) view {
	now := s.clk.Now()
	v := view{Now: now}
	for _, st := range s.statuses(ctx) {
		v.Accounts = append(v.Accounts, s.account(ctx, st, now))
	}
	return v
}

func (s *Server) account(ctx context.Context, st account.Status, now time.Time) accountView {
	a := accountView{Account: st.Account, LeaseHeld: st.Held, Running: st.Running}
	for _, w := range st.Open {
		wv := workflowView{ID: w.ID, Kind: string(w.Kind), Symbol: w.Symbol, State: string(w.State),
			Requested: w.Requested, Quantity: w.Quantity, Reason: w.Reason}
		if waitsOnPerson(&w) {
			if offer, _, _ := workflow.Choose(&w); offer != nil {
				wv.Offer = newOfferView(offer, now)
			}
		}
		a.Workflows = append(a.Workflows, wv)
	}
	for _, r := range st.Inventory {
		a.Inventory = append(a.Inventory, inventoryView{Symbol: r.Symbol, Type: string(r.Type()),
			Available: r.Available, Unavailable: r.Unavailable, ToBeSold: r.ToBeSold})
	}
	slices.SortFunc(a.Inventory, func(x, y inventoryView) int {
		if x.Symbol != y.Symbol {
			return strings.Compare(x.Symbol, y.Symbol)
		}
		return strings.Compare(x.Type, y.Type)
	})
	a.Fees = s.fees(ctx, a.Account, now)
	jobs, err := s.st.JobRuns(ctx, store.JobRunFilter{Account: a.Account, Limit: 10})
	if err != nil {
		s.log.Warn("job runs not read", "account", a.Account, "err", err)
	}
	a.Jobs = jobs
	return a
}

// newOfferView is offer as the page shows it at now: counting down to
// the time a person can still answer, the window's end less the accept
// margin (the engine gives the question up then, engine's ask deadline).
func newOfferView(offer *workflow.Offer, now time.Time) *offerView {
	by := offer.ExpiresAt.Add(-workflow.DefaultRules.AcceptMargin)
	left := max(by.Sub(now), 0)
	return &offerView{Leg: offer.QuoteReqID, Type: string(brokercode.LocateTypeForCode(offer.LocateType)),
		Price: offer.Price.StringFixed(4), Total: offer.Total.StringFixed(2), Shares: offer.Shares,
		ExpiresAt: offer.ExpiresAt, AnswerBy: by, Remaining: left, RemainingFormatted: countdown(left)}
}

// countdown is what the page shows of an offer's remaining window; the
// page's script writes the same from each tick.
func countdown(d time.Duration) string { return strconv.Itoa(int(d/time.Second)) + "s" }

// reconcile matches the account's fills of the last days trade dates to
// the synced ledger; the store alone answers (no broker call), so a page
// view or a scrape costs the broker nothing.
func (s *Server) reconcile(ctx context.Context, account string, now time.Time, days int) (*ledger.Report, error) {
	since := ledger.TradeDate(now).AddDate(0, 0, -(days - 1))
	return ledger.Reconcile(ctx, nil, s.st, account, since, now, s.feeGrace)
}

// fees is today's chart: per symbol, the fees of today's fills against
// the ledger's charges.
func (s *Server) fees(ctx context.Context, account string, now time.Time) feesView {
	f := feesView{Day: ledger.TradeDate(now)}
	rep, err := s.reconcile(ctx, account, now, 1)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	f.Problems = rep.Problems()
	type sums struct{ expected, charged decimal.Decimal }
	bySymbol := map[string]*sums{}
	var symbols []string
	var expected, charged decimal.Decimal
	for _, l := range rep.Lines {
		if l.Kind != ledger.KindFee {
			continue
		}
		sm := bySymbol[l.Symbol]
		if sm == nil {
			sm = &sums{}
			bySymbol[l.Symbol] = sm
			symbols = append(symbols, l.Symbol)
		}
		sm.expected = sm.expected.Add(l.Expected)
		sm.charged = sm.charged.Add(l.Charged)
		expected, charged = expected.Add(l.Expected), charged.Add(l.Charged)
	}
	slices.Sort(symbols)
	top := decimal.Zero
	for _, sm := range bySymbol {
		top = decimal.Max(top, sm.expected, sm.charged)
	}
	bar := func(d decimal.Decimal) float64 {
		if !top.IsPositive() {
			return 0
		}
		w, _ := d.Div(top).Mul(decimal.NewFromInt(chartWidth)).Float64()
		return w
	}
	for i, sym := range symbols {
		sm := bySymbol[sym]
		r := feeRow{Symbol: sym, X: chartLabel, Expected: sm.expected.StringFixed(2), Charged: sm.charged.StringFixed(2),
			ExpectedBar: bar(sm.expected), ChargedBar: bar(sm.charged), Y: i * chartRow}
		r.ExpectedText, r.ChargedText = chartLabel+r.ExpectedBar+4, chartLabel+r.ChargedBar+4
		f.Rows = append(f.Rows, r)
	}
	f.Expected, f.Charged = expected.StringFixed(2), charged.StringFixed(2)
	return f
}
