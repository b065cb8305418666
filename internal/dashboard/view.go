package dashboard

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/market"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// view is everything the page shows, as of one reading of the clock. It is
// built through the account API (and the store, for fees and job runs)
// only: workflows, positions, orders, inventory, fees and job runs, which
// hold no secret. Beside them it holds its forms' token, the one value of
// the page meant for that page alone: it is not the login's cookie, and no
// other origin can read the page to learn it.
type view struct {
	Now time.Time
	// CSRF is the form token of the login the page is shown to ("" for a
	// bearer's request, which needs none): every form carries it.
	CSRF string
	// LogOut shows the log-out button: the page is shown to a token login.
	LogOut bool
	// Offers are the offers waiting on a person, of every account, the
	// nearest deadline first: the banner.
	Offers   []offerView
	State    state
	Accounts []accountView
}

// state is the connection part of the page, sent every second: each
// account's connection to the broker as its owner finds it, and whether
// all are up.
type state struct {
	Now   time.Time
	Up    bool
	Conns []connView
}

// connView is one account's connection: lease and engine, the owner's
// reads of the broker and the P&L stream; Up only when all of them are.
type connView struct {
	Account string
	Up      bool
	Words   []string
}

type accountView struct {
	Account   string
	LeaseHeld bool
	Running   bool
	// Owner says which process owns the account, in which term, and how
	// many stand by to take it over.
	Owner string
	// Budget is what the owner's locate budget leaves of today (nil: the
	// account has none).
	Budget    *workflow.BudgetLeft
	Today     todayView
	Inventory []inventoryView
	Fees      feesView
	Jobs      []locator.JobRun
}

// todayView is the account's trading day (account.Today) as the page shows
// it; Err is set when it could not be read.
type todayView struct {
	Err       string
	PnL       *pnlView
	Positions []positionView
	Symbols   []symbolView
	Orders    []orderView
	Locates   []locateView
	// Spend, Recovery and NetSpend are the day's over all symbols.
	Spend, Recovery, NetSpend string
}

// pnlView is the account's figures in the P&L stream's model.
type pnlView struct {
	DayPnl, DayRealized, DayUnrealized, TotalUnrealized, AccountValue, Exposure money
}

// money is an amount as shown (two decimals) with its exact value, which
// a test compares with the stream's.
type money struct {
	Text, Value string
	Sign        int
}

func newMoney(d decimal.Decimal) money {
	return money{Text: d.StringFixed(2), Value: d.String(), Sign: d.Sign()}
}

type positionView struct {
	ID, Symbol, Side string
	Shares           int64
	PriceAvg         string
	DayPnl           money // realized and floating today
	Unrealized       money // lifetime floating
}

// symbolView is one symbol's locate spend net of its credit-backs and its
// P&L net of that.
type symbolView struct {
	Symbol                            string
	Spend, Recovery, NetSpend, DayPnl money
	NetPnl                            money
}

type orderView struct {
	ClientOrderID, Symbol, Side, Type, State string
	Quantity, Executed                       int64
	Limit                                    string
	Updated                                  time.Time
}

// locateView is one of today's locates or credit-backs.
type locateView struct {
	ID, Kind, Symbol, State string
	Shares                  int64
	// Price and Type are the offer's (workflow.Offered): the one taken,
	// or the one declined or let expire.
	Price, Type string
	Total       string
	Reason      string
	Updated     time.Time
}

type offerView struct {
	Account, ID, Symbol string
	// Side is the leg offered: its locate type, and which side of a Reg
	// SHO pair it is when the broker offered two.
	Side         string
	Leg, Type    string
	Price, Total string // as shown: 4 and 2 decimals
	// Exact is the price per share as the broker sent it (a JSON number
	// is a float: 0.013 may come as 0.013000000000000001), which the
	// answer carries so that the owner knows the offer shown, whatever
	// its representation, from another one.
	Exact              string
	Shares             int64 // shares offered, which may be fewer than asked
	Requested          int64
	ExpiresAt          time.Time
	AnswerBy           time.Time     // ExpiresAt less the engine's accept margin: the last moment an answer is acted on
	Remaining          time.Duration // until AnswerBy
	RemainingFormatted string
	// Also are the pair's other sides the policy allows, each a choice of
	// its own (a Reg SHO pair with SingleUse allowed).
	Also []sideView
}

// sideView is another side of a pair on offer, as its approve button
// shows and answers it.
type sideView struct {
	Leg, Type, Price, Exact, Total string
}

type inventoryView struct {
	Symbol, Type                     string
	Available, Unavailable, ToBeSold int64
	// Unused says the row has shares a credit-back may return (a whole
	// lot available, none queued): its button asks the owner for the
	// unused ones, which working short sales do not need.
	Unused bool
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

// build reads every account for the page, whose forms carry csrf, the
// form token of the login it is shown to.
func (s *Server) build(ctx context.Context, csrf string) view {
	now := s.clk.Now()
	sts := s.statuses(ctx)
	v := view{Now: now, CSRF: csrf, LogOut: csrf != "" && !s.access.NoToken}
	for _, st := range sts {
		for _, w := range st.Open {
			if !waitsOnPerson(&w) {
				continue
			}
			if offer, _, _ := workflow.Choose(&w); offer != nil {
				ov := newOfferView(offer, now)
				ov.Account, ov.ID, ov.Symbol, ov.Requested = st.Account, w.ID, w.Symbol, w.Requested
				if len(w.Legs) > 1 {
					ov.Side = "Reg SHO pair: " + ov.Type + " side"
				}
				for _, o := range workflow.Sides(&w) {
					if o.QuoteReqID != offer.QuoteReqID {
						ov.Also = append(ov.Also, sideView{Leg: o.QuoteReqID, Type: string(brokercode.LocateTypeForCode(o.LocateType)),
							Price: o.Price.StringFixed(4), Exact: o.Price.String(), Total: o.Total.StringFixed(2)})
					}
				}
				if len(ov.Also) > 0 {
					ov.Side = "Reg SHO pair: choose the side"
				}
				v.Offers = append(v.Offers, *ov)
			}
		}
		v.Accounts = append(v.Accounts, s.account(ctx, st, now))
	}
	slices.SortFunc(v.Offers, func(x, y offerView) int { return x.AnswerBy.Compare(y.AnswerBy) })
	// The connection as of after the reads above: the first Today starts
	// the P&L stream's watch, whose state it then shows.
	v.State = s.state(s.statuses(ctx), now)
	return v
}

// idleWait is the longest an idle account's read of the owner's key pair
// last waited for its bucket, when that stretches the spec's idle cadence
// by more than a second (many accounts share the key pair); 0 otherwise.
func idleWait(ps []account.Pacing) time.Duration {
	var w time.Duration
	for _, p := range ps {
		w = max(w, time.Duration(p.Waited["idle"]*float64(time.Second)))
	}
	if w <= time.Second {
		return 0
	}
	return w
}

// state is the connection part of the page from the accounts' statuses.
func (s *Server) state(sts []account.Status, now time.Time) state {
	out := state{Now: now, Up: true}
	for _, st := range sts {
		c := connView{Account: st.Account, Up: true}
		down := func(words string) { c.Up, c.Words = false, append(c.Words, words) }
		if !st.Held {
			down("lease lost")
		}
		if !st.Running {
			down("engine stopped")
		}
		b := st.Broker
		switch {
		case !b.FailingSince.IsZero():
			down("broker unreachable for " + age(now.Sub(b.FailingSince)))
		case st.LastPoll.IsZero():
			down("broker not read yet")
		case now.Sub(st.LastPoll) > s.staleAfter:
			down("broker not read for " + age(now.Sub(st.LastPoll)))
		}
		switch b.Stream {
		case account.StreamDown:
			down("P&L stream down")
		case account.StreamLive:
			c.Words = append(c.Words, "P&L stream live")
		case account.StreamConnecting:
			c.Words = append(c.Words, "P&L stream connecting")
		}
		if !st.LastPoll.IsZero() {
			c.Words = append(c.Words, "last poll "+age(now.Sub(st.LastPoll))+" ago")
		}
		if w := idleWait(b.Pacing); w > 0 {
			c.Words = append(c.Words, "idle reads wait "+age(w)+" for the key pair's budget")
		}
		if c.Up {
			c.Words = append([]string{"broker up"}, c.Words...)
		}
		out.Up = out.Up && c.Up
		out.Conns = append(out.Conns, c)
	}
	return out
}

// age is a duration as the page says it: whole seconds.
func age(d time.Duration) string { return strconv.Itoa(int(max(d, 0)/time.Second)) + " s" }

func (s *Server) account(ctx context.Context, st account.Status, now time.Time) accountView {
	a := accountView{Account: st.Account, LeaseHeld: st.Held, Running: st.Running, Budget: st.Budget,
		Owner: fmt.Sprintf("owner pid %d on %s · term %d · %d standing by", st.Owner.PID, st.Owner.Host, st.Owner.Term, len(st.Standbys))}
	if day, err := s.accounts[st.Account].Today(ctx, account.TodayRequest{}); err != nil {
		s.log.Warn("the trading day not read", "account", st.Account, "err", err)
		a.Today.Err = err.Error()
	} else {
		a.Today = newTodayView(day)
	}
	for _, r := range st.Inventory {
		iv := inventoryView{Symbol: r.Symbol, Type: string(r.Type()), Available: r.Available, Unavailable: r.Unavailable, ToBeSold: r.ToBeSold}
		if r.ToBeSold == 0 {
			iv.Unused = r.Available >= brokercode.LocateLot
		}
		a.Inventory = append(a.Inventory, iv)
	}
	slices.SortFunc(a.Inventory, func(x, y inventoryView) int {
		if x.Symbol != y.Symbol {
			return strings.Compare(x.Symbol, y.Symbol)
		}
		return strings.Compare(x.Type, y.Type)
	})
	if st.NotServed != nil {
		return a // no owner to ask for its records
	}
	a.Fees = s.fees(ctx, a.Account, now)
	r, err := s.accounts[st.Account].Records(ctx, account.RecordsRequest{What: account.RecordsJobRuns, Limit: 10})
	if err != nil {
		s.log.Warn("job runs not read", "account", a.Account, "err", err)
		return a
	}
	a.Jobs = r.JobRuns
	return a
}

// newTodayView is the day as the page shows it.
func newTodayView(day *account.Today) todayView {
	var t todayView
	if p := day.PnL; p != nil {
		t.PnL = &pnlView{DayPnl: newMoney(p.DayPnl), DayRealized: newMoney(p.DayRealized), DayUnrealized: newMoney(p.DayUnrealized),
			TotalUnrealized: newMoney(p.TotalUnrealized), AccountValue: newMoney(p.AccountValue), Exposure: newMoney(p.Exposure)}
	}
	for _, p := range day.Positions {
		t.Positions = append(t.Positions, positionView{ID: p.PositionID, Symbol: p.Symbol, Side: string(p.Side), Shares: p.Shares,
			PriceAvg: p.PriceAvg.StringFixed(2), DayPnl: newMoney(p.PnL.DayRealizedPnl.Add(p.PnL.DayUnrealizedPnL)),
			Unrealized: newMoney(p.PnL.UnrealizedPnL)})
	}
	var spend, recovery decimal.Decimal
	for _, d := range day.Symbols {
		t.Symbols = append(t.Symbols, symbolView{Symbol: d.Symbol, Spend: newMoney(d.Spend), Recovery: newMoney(d.Recovery),
			NetSpend: newMoney(d.NetSpend), DayPnl: newMoney(d.DayPnL), NetPnl: newMoney(d.NetPnL)})
		spend, recovery = spend.Add(d.Spend), recovery.Add(d.Recovery)
	}
	t.Spend, t.Recovery, t.NetSpend = spend.StringFixed(2), recovery.StringFixed(2), spend.Sub(recovery).StringFixed(2)
	for _, o := range day.Orders {
		ov := orderView{ClientOrderID: o.ClientOrderID, Symbol: o.Symbol, Side: o.Side + "/" + o.OpenClose, Type: o.OrderType,
			State: string(o.State), Quantity: o.Quantity, Executed: o.Executed, Updated: o.UpdatedAt}
		if o.LimitPrice.IsPositive() {
			ov.Limit = o.LimitPrice.StringFixed(2)
		}
		t.Orders = append(t.Orders, ov)
	}
	for _, w := range day.Locates {
		lv := locateView{ID: w.ID, Kind: string(w.Kind), Symbol: w.Symbol, State: string(w.State), Shares: w.Quantity,
			Reason: w.Reason, Updated: w.UpdatedAt}
		if w.Quantity == 0 {
			lv.Shares = w.Requested
		}
		if o := workflow.Offered(&w); o != nil {
			lv.Price = o.Price.StringFixed(4)
			if o.LocateType != 0 {
				lv.Type = string(brokercode.LocateTypeForCode(o.LocateType))
			}
		}
		if w.State == states.Filled {
			lv.Total = w.Total().StringFixed(2) // what was paid
		}
		t.Locates = append(t.Locates, lv)
	}
	return t
}

// newOfferView is offer as the page shows it at now: counting down to
// the time a person can still answer, the window's end less the accept
// margin (the engine gives the question up then, engine's ask deadline).
func newOfferView(offer *workflow.Offer, now time.Time) *offerView {
	by := offer.ExpiresAt.Add(-workflow.DefaultRules.AcceptMargin)
	left := max(by.Sub(now), 0)
	typ := string(brokercode.LocateTypeForCode(offer.LocateType))
	return &offerView{Leg: offer.QuoteReqID, Type: typ, Side: typ,
		Price: offer.Price.StringFixed(4), Exact: offer.Price.String(), Total: offer.Total.StringFixed(2), Shares: offer.Shares,
		ExpiresAt: offer.ExpiresAt, AnswerBy: by, Remaining: left, RemainingFormatted: countdown(left)}
}

// countdown is what the page shows of an offer's remaining window; the
// page's script writes the same from each tick.
func countdown(d time.Duration) string { return strconv.Itoa(int(d/time.Second)) + "s" }

// reconcile matches the fills of account id's last days trade dates to
// the ledger its owner synced (Fees, Stored): no broker call, so a page
// view or a scrape costs the broker nothing.
func (s *Server) reconcile(ctx context.Context, id string, days int) (*locator.FeeReport, error) {
	res, err := s.accounts[id].Fees(ctx, account.FeesRequest{Window: locator.FeeWindow{Days: days}, Grace: s.feeGrace, Stored: true})
	if err != nil {
		return nil, err
	}
	return res.Report, nil
}

// fees is today's chart: per symbol, the fees of today's fills against
// the ledger's charges.
func (s *Server) fees(ctx context.Context, id string, now time.Time) feesView {
	f := feesView{Day: market.On(now).Date}
	rep, err := s.reconcile(ctx, id, 1)
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
		if l.Kind != locator.LineFee {
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
