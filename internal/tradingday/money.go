package tradingday

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/report"
	"github.com/locatorhq/locator/ledger"
)

// The money side of a desk's day: the fee check (ledger sync and
// reconcile), `report` and `audit`, each checked against a model the
// checker computes from the simulator's state (cash ledger, locate
// history, order book).
const (
	OpFees   Kind = "fees"   // the account API's Fees: sync the cash ledger, reconcile
	OpReport Kind = "report" // the fee check, then today's report
	OpAudit  Kind = "audit"  // today's Reg SHO audit trail
)

// settleFees waits until every locate fee row the broker owes has posted
// (the spec lets one come later than its fill: Timing.FeeDelay).
func (r *runner) settleFees(ctx context.Context) error {
	return r.sleep(ctx, time.Duration(r.day.Scenario.Timing.FeeDelay)+time.Second)
}

// today is the broker's trade date now, as the ledger and the report
// write one (midnight UTC of the Eastern date).
func (r *runner) today() time.Time { return ledger.TradeDate(r.sim.Now()) }

// fees runs the fee check over today and checks fees-reconciled: once
// every fee row has posted, every fee and credit of today's locates and
// credit-backs is matched by its ledger row, none is missing, wrong or
// unexplained, and there is one line per fill and credit at the broker.
func (r *runner) fees(ctx context.Context, _ Op) (string, error) {
	if err := r.settleFees(ctx); err != nil {
		return "", err
	}
	res, err := r.as("fees", nil).Fees(ctx, account.FeesRequest{Window: locator.FeeWindow{Since: r.today(), Days: 1}, Grace: ledger.FeeGrace})
	if err != nil {
		return "", err
	}
	words := fmt.Sprintf("%d lines %v", len(res.Report.Lines), res.Report.Counts())
	m := r.moneyModel()
	var fills, credits int
	for _, l := range res.Report.Lines {
		if !l.Date.Equal(r.today()) {
			continue
		}
		if l.Status != locator.FeeMatched {
			return words, &Violation{Invariant: "fees-reconciled", Detail: fmt.Sprintf("%s %s %s %d shares (%s): %s; expected %s, charged %s, note %q",
				l.Date.Format(time.DateOnly), l.Kind, l.Symbol, l.Shares, l.QuoteReqID, l.Status, l.Expected, l.Charged, l.Note)}
		}
		switch l.Kind {
		case locator.LineFee:
			fills++
		case locator.LineCredit:
			credits++
		}
	}
	if fills != m.fills || credits != m.credits {
		return words, &Violation{Invariant: "fees-reconciled", Detail: fmt.Sprintf("the fee check has %d fee and %d credit lines today; the broker filled %d locates and %d credit-backs with a fee or refund",
			fills, credits, m.fills, m.credits)}
	}
	return words, nil
}

// money is the checker's model of today's figures, from the broker alone.
type money struct {
	located, credited, shorted int64
	spend, recovery, pnl       decimal.Decimal
	fills, credits             int // locates and credit-backs filled with a fee or a refund
}

// moneyModel computes today's figures as the spec's rules make them from
// the simulator's state: located and credited shares from the locate
// history's Filled rows; spend and recovery from the cash ledger's
// `Locate Fees` rows (all posted: see settleFees); shares shorted and the
// realized P&L from the order book's orders locator sent (first in, first
// out per symbol, on the cover's fill; report's definition, the desk's
// other orders left out).
func (r *runner) moneyModel() money {
	today := r.today()
	var m money
	for _, l := range r.sim.Locates() {
		if l.Account != Account || l.Status != statusFilled || !ledger.TradeDate(l.Updated).Equal(today) {
			continue
		}
		if l.Shares > 0 {
			m.located += l.Shares
		} else {
			m.credited -= l.Shares
		}
	}
	for _, c := range r.sim.Cash() {
		if c.Account != Account || c.CashType != "Locate Fees" || !c.Date.Equal(today) {
			continue
		}
		if c.Withdraw.IsPositive() {
			m.spend = m.spend.Add(c.Withdraw.Decimal)
			m.fills++
		}
		if c.Deposit.IsPositive() {
			m.recovery = m.recovery.Add(c.Deposit.Decimal)
			m.credits++
		}
	}
	type lot struct {
		shares int64
		price  decimal.Decimal
	}
	open := map[string][]lot{}
	orders := slices.Clone(r.sim.Orders())
	slices.SortStableFunc(orders, func(x, y brokersim.OrderRecord) int { return x.Updated.Compare(y.Updated) })
	for _, o := range orders {
		if o.Account != Account || !r.desk().mine[o.ClientOrderID] || o.Executed == 0 {
			continue
		}
		day := ledger.TradeDate(o.Updated).Equal(today)
		switch {
		case o.Side == "Sell" && o.OpenClose == "Open":
			open[o.Symbol] = append(open[o.Symbol], lot{o.Executed, o.PriceAvg.Decimal})
			if day {
				m.shorted += o.Executed
			}
		case o.Side == "Buy" && o.OpenClose == "Close":
			left, q := o.Executed, open[o.Symbol]
			for left > 0 && len(q) > 0 {
				n := min(left, q[0].shares)
				if day {
					m.pnl = m.pnl.Add(q[0].price.Sub(o.PriceAvg.Decimal).Mul(decimal.NewFromInt(n)))
				}
				left -= n
				if q[0].shares -= n; q[0].shares == 0 {
					q = q[1:]
				}
			}
			open[o.Symbol] = q
		}
	}
	return m
}

// report runs what `locator report` does for today (the fee check over
// its window, the owner's working orders brought up to the broker's book
// first, then report.Run on the owner's database) and checks
// report-figures: today's total spend, recovery, net spend, located,
// credited and shorted shares, utilisation and short P&L (and the net P&L
// they make) equal the model's.
func (r *runner) report(ctx context.Context, _ Op) (string, error) {
	if err := r.settleFees(ctx); err != nil {
		return "", err
	}
	today := r.today()
	rng := locator.DateRange{From: today, To: today}
	fees, err := r.as("report", nil).Fees(ctx, account.FeesRequest{Window: report.FeeWindow(rng), Grace: ledger.FeeGrace, Orders: true})
	if err != nil {
		return "", err
	}
	rep, err := report.Run(ctx, r.st, Account, fees.Report, r.clk.Now(), rng)
	if err != nil {
		return "", err
	}
	t := rep.Total.Figures
	m := r.moneyModel()
	words := fmt.Sprintf("spend %s recovery %s located %d credited %d shorted %d pnl %s", t.Spend, t.Recovery, t.Located, t.Credited, t.Shorted, t.ShortPnL)
	var util *decimal.Decimal
	if m.located > 0 {
		u := decimal.NewFromInt(m.shorted).DivRound(decimal.NewFromInt(m.located), 4)
		util = &u
	}
	net := m.spend.Sub(m.recovery)
	bad := []string{}
	check := func(name string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			bad = append(bad, fmt.Sprintf("%s %v, the broker's %v", name, got, want))
		}
	}
	check("spend", t.Spend.StringFixed(2), m.spend.StringFixed(2))
	check("recovery", t.Recovery.StringFixed(2), m.recovery.StringFixed(2))
	check("net spend", t.NetSpend.StringFixed(2), net.StringFixed(2))
	check("located", t.Located, m.located)
	check("credited", t.Credited, m.credited)
	check("shorted", t.Shorted, m.shorted)
	check("utilisation", decString(t.Utilisation), decString(util))
	check("short P&L", t.ShortPnL.StringFixed(4), m.pnl.StringFixed(4))
	check("net P&L", t.NetPnL.StringFixed(4), m.pnl.Sub(net).StringFixed(4))
	if len(bad) > 0 {
		return words, &Violation{Invariant: "report-figures", Detail: "today's report: " + strings.Join(bad, "; ")}
	}
	return words, nil
}

func decString(d *decimal.Decimal) string {
	if d == nil {
		return "none"
	}
	return d.StringFixed(4)
}

// audit runs what `locator audit` does for today and checks
// audit-flags-uncovered: the short sales it flags are exactly those the
// account sent (through locator or straight at the broker) while it held
// fewer located shares of the symbol than the order's quantity (desk.covered,
// read from the broker when each was sent). It lists every short sale of
// today locator sent and every one the broker's book holds: one sent
// straight at the broker leaves the book when the broker's trading day
// rolls over at 8 PM, and from then on nothing tells of it.
func (r *runner) audit(ctx context.Context, _ Op) (string, error) {
	today := r.today()
	book, _, err := r.client.Orders.Book(ctx, Account)
	if err != nil {
		return "", err
	}
	trail, err := report.AuditBook(ctx, r.st, Account, book, r.client.ClockSkew(), r.clk.Now(), locator.DateRange{From: today, To: today}, 0)
	if err != nil {
		return "", err
	}
	words := fmt.Sprintf("%d short sales, %d flagged", len(trail.Rows), trail.Flagged())
	seen := map[string]bool{}
	for _, row := range trail.Rows {
		seen[row.ClientOrderID] = true
		covered, known := r.desk().covered[row.ClientOrderID]
		if !known {
			return words, &Violation{Invariant: "audit-flags-uncovered", Detail: fmt.Sprintf("audit lists short sale %s (%s %d) the desk never sent", row.ClientOrderID, row.Symbol, row.Quantity)}
		}
		if row.Covered != covered {
			return words, &Violation{Invariant: "audit-flags-uncovered",
				Detail: fmt.Sprintf("audit says short sale %s (%s %d, %s, %s) covered=%t (%d shares of cover found: %s); the broker held its cover when sent: %t",
					row.ClientOrderID, row.Symbol, row.Quantity, row.Source, row.OrderStatus, row.Covered, row.CoveredShares(), row.Flag, covered)}
		}
	}
	inBook := map[string]bool{}
	for _, o := range book {
		inBook[o.ClientOrderID] = true
	}
	for _, o := range r.sim.Orders() {
		known := r.desk().mine[o.ClientOrderID] || inBook[o.ClientOrderID]
		if o.Account == Account && o.Side == "Sell" && o.OpenClose == "Open" && ledger.TradeDate(o.Start).Equal(today) && known && !seen[o.ClientOrderID] {
			return words, &Violation{Invariant: "audit-flags-uncovered", Detail: fmt.Sprintf("audit leaves out short sale %s (%s %d, %s) sent today", o.ClientOrderID, o.Symbol, o.Quantity, o.Status)}
		}
	}
	return words, nil
}
