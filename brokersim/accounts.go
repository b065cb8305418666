package brokersim

import (
	"net/http"

	"github.com/shopspring/decimal"
)

// pnlRowJSON is one lot of the P&L response. The key spellings are the
// spec's, mixed case included ("Profit and loss response", rule 1).
type pnlRowJSON struct {
	PositionID       string  `json:"positionId"`
	Symbol           string  `json:"symbol"`
	Exposure         Decimal `json:"exposure"`
	DayRealizedPnl   Decimal `json:"dayRealizedPnl"`
	DayUnrealizedPnL Decimal `json:"dayUnrealizedPnL"`
	DayPctPnLMove    Decimal `json:"dayPctPnLMove"`
	RealizedPnl      Decimal `json:"realizedPnl"`
	UnrealizedPnL    Decimal `json:"unrealizedPnL"`
	PctPnLMove       Decimal `json:"pctPnLMove"`
}

// pnlJSON is the P&L response (spec: "Profit and loss response").
type pnlJSON struct {
	AccountValue    Decimal      `json:"accountValue"`
	AllowedLeverage Decimal      `json:"allowedLeverage"`
	AvailableCash   Decimal      `json:"availableCash"`
	DayPnl          Decimal      `json:"dayPnl"`
	DayRealized     Decimal      `json:"dayRealized"`
	DayUnrealized   Decimal      `json:"dayUnrealized"`
	EquityRatio     Decimal      `json:"equityRatio"`
	Exposure        Decimal      `json:"exposure"`
	OptionCashUsed  Decimal      `json:"optionCashUsed"`
	Pnl             []pnlRowJSON `json:"pnl"`
	SharesTraded    int64        `json:"sharesTraded"`
	TotalUnrealized Decimal      `json:"totalUnrealized"`
	UsedLeverage    Decimal      `json:"usedLeverage"`
}

// accountMetrics is an account's valuation at the current prices. Every
// money figure is rounded to cents per lot first and the aggregates are sums
// of the rounded rows, so the spec's sum rules hold exactly.
type accountMetrics struct {
	rows            []pnlRowJSON
	cash            decimal.Decimal // rounded to cents
	value           decimal.Decimal // cash + every open lot's signed exposure
	equityExposure  decimal.Decimal // signed, options excluded
	optionCash      decimal.Decimal // Σ exposure of open option lots
	gross           decimal.Decimal // Σ |exposure|
	dayRealized     decimal.Decimal
	dayUnrealized   decimal.Decimal
	totalUnrealized decimal.Decimal
	leverage        decimal.Decimal
}

var (
	hundred = decimal.NewFromInt(100)
	quarter = decimal.RequireFromString("0.25")
)

// metrics values the account's lots: open lots and lots closed today (a
// closed lot stays in pnl[] for the rest of the day with exposure 0).
func (b *orderBook) metrics(s *Sim, a *account) accountMetrics {
	m := accountMetrics{rows: []pnlRowJSON{}, cash: a.cash.Round(2), leverage: a.leverage}
	today := tradeDate(s.now)
	for _, l := range b.lots {
		if l.account != a.id || (!l.open() && !tradeDate(l.closed).Equal(today)) {
			continue
		}
		r := pnlRowJSON{
			PositionID: l.id, Symbol: l.symbol,
			RealizedPnl: Dec(l.realized.Round(2)), DayRealizedPnl: Dec(l.dayRealized.Round(2)),
		}
		if l.open() {
			p := s.mark(l)
			sign := decimal.NewFromInt(l.sign)
			qty := decimal.NewFromInt(l.shares).Mul(multiplier(l.secType))
			r.Exposure = Dec(p.Mul(qty).Mul(sign).Round(2))
			r.UnrealizedPnL = Dec(p.Sub(l.avg()).Mul(qty).Mul(sign).Round(2))
			r.DayUnrealizedPnL = Dec(p.Sub(l.dayBasis()).Mul(qty).Mul(sign).Round(2))
			r.PctPnLMove = Dec(pctMove(l.avg(), p, sign))
			r.DayPctPnLMove = Dec(pctMove(l.dayBasis(), p, sign))
			if l.secType == "Option" {
				m.optionCash = m.optionCash.Add(r.Exposure.Decimal)
			} else {
				m.equityExposure = m.equityExposure.Add(r.Exposure.Decimal)
			}
			m.gross = m.gross.Add(r.Exposure.Abs())
		}
		m.dayRealized = m.dayRealized.Add(r.DayRealizedPnl.Decimal)
		m.dayUnrealized = m.dayUnrealized.Add(r.DayUnrealizedPnL.Decimal)
		m.totalUnrealized = m.totalUnrealized.Add(r.UnrealizedPnL.Decimal)
		m.rows = append(m.rows, r)
	}
	m.value = m.cash.Add(m.equityExposure).Add(m.optionCash)
	return m
}

// pctMove is the signed percentage move from basis to p, two decimals.
func pctMove(basis, p, sign decimal.Decimal) decimal.Decimal {
	if basis.IsZero() {
		return decimal.Zero
	}
	return p.Sub(basis).Div(basis).Mul(hundred).Mul(sign).Round(2)
}

func nonNegative(d decimal.Decimal) decimal.Decimal {
	if d.IsNegative() {
		return decimal.Zero
	}
	return d
}

// bp is the buying power: account value times leverage, less what is used.
func (m accountMetrics) bp(a *account) decimal.Decimal {
	return nonNegative(m.value.Mul(m.leverage).Sub(m.gross)).Round(2)
}

// overnightBp caps leverage at 2 for positions held overnight, so it is
// smaller than bp on margin accounts levered above 2 (spec: "overnightBp").
func (m accountMetrics) overnightBp() decimal.Decimal {
	return nonNegative(m.value.Mul(decimal.Min(m.leverage, decimal.NewFromInt(2))).Sub(m.gross)).Round(2)
}

func (m accountMetrics) usedLeverage() decimal.Decimal {
	den := m.value.Mul(m.leverage)
	if !den.IsPositive() {
		return decimal.Zero
	}
	return m.gross.Div(den).Round(4)
}

func (m accountMetrics) equityRatio() decimal.Decimal {
	if m.gross.LessThanOrEqual(m.value) || m.gross.IsZero() {
		return decimal.NewFromInt(1)
	}
	return nonNegative(m.value).Div(m.gross).Round(4)
}

// marginRequirement is the maintenance requirement, 25% of gross exposure.
func (m accountMetrics) marginRequirement() decimal.Decimal { return m.gross.Mul(quarter).Round(2) }

func (m accountMetrics) marginRatio() decimal.Decimal {
	if m.gross.IsZero() {
		return hundred
	}
	return decimal.Min(hundred, nonNegative(m.value).Div(m.gross).Mul(hundred)).Round(2)
}

// pnlSnapshot is the P&L response of an account at the current prices; the
// P&L stream can reuse it for its init message.
func (s *Sim) pnlSnapshot(a *account) pnlJSON {
	m := s.ord.metrics(s, a)
	return pnlJSON{
		AccountValue: Dec(m.value), AllowedLeverage: Dec(a.leverage), AvailableCash: Dec(m.cash),
		DayPnl: Dec(m.dayRealized.Add(m.dayUnrealized)), DayRealized: Dec(m.dayRealized),
		DayUnrealized: Dec(m.dayUnrealized), EquityRatio: Dec(m.equityRatio()),
		Exposure: Dec(m.equityExposure), OptionCashUsed: Dec(m.optionCash), Pnl: m.rows,
		SharesTraded: a.sharesTraded, TotalUnrealized: Dec(m.totalUnrealized), UsedLeverage: Dec(m.usedLeverage()),
	}
}

// handlePnL serves GET .../pnl.
func (s *Sim) handlePnL(c *call) reply { return jsonReply(http.StatusOK, s.pnlSnapshot(c.acct)) }

// accountFields are the fields the list row and the detail object share
// (spec: "Account (list row and detail)").
type accountFields struct {
	Account                string  `json:"account"`
	AccountStatus          string  `json:"accountStatus"`
	AccountType            string  `json:"accountType"`
	AvailableCash          Decimal `json:"availableCash"`
	Equity                 Decimal `json:"equity"`
	Leverage               Decimal `json:"leverage"`
	MaintenanceDeficit     Decimal `json:"maintenanceDeficit"`
	MarginDeficit          Decimal `json:"marginDeficit"`
	MarginRatio            Decimal `json:"marginRatio"`
	OptContractsTraded     int64   `json:"optContractsTraded"`
	OptLevel               int     `json:"optLevel"`
	OptionTradingLevel     int     `json:"optionTradingLevel"`
	OptionCashTotalBalance Decimal `json:"optionCashTotalBalance"`
	OvernightBp            Decimal `json:"overnightBp"`
	Realized               Decimal `json:"realized"`
	SharesTraded           int64   `json:"sharesTraded"`
	SodEquity              Decimal `json:"sodEquity"`
	TotalCommissions       Decimal `json:"totalCommissions"`
	TotalLocateCosts       Decimal `json:"totalLocateCosts"`
	UsedLeverage           Decimal `json:"usedLeverage"`
}

// accountListRow is a row of GET /v1/api/accounts: buying power is
// `buyingPower` here.
type accountListRow struct {
	accountFields
	BuyingPower Decimal `json:"buyingPower"`
}

// accountDetail is GET /v1/api/account/{accountId}: buying power is `bp`,
// plus the detail-only fields and a few undocumented keys clients must
// treat as opaque.
type accountDetail struct {
	accountFields
	BP                Decimal `json:"bp"`
	AvailableCashEMS  Decimal `json:"availableCashEMS"`
	IsFutureAccount   bool    `json:"isFutureAccount"`
	MarginRequirement Decimal `json:"marginRequirement"`
	MarginType        string  `json:"marginType"`
	Fractional        bool    `json:"fractional"`
	Unrealized        Decimal `json:"unrealized"`
}

// accountFieldsOf builds the shared fields with live today-counters.
func (s *Sim) accountFieldsOf(a *account, m accountMetrics) accountFields {
	ab := s.ord.book(a.id)
	locate := a.locateCosts
	if a.paper {
		locate = decimal.Zero // spec: totalLocateCosts is always 0 on paper
	}
	return accountFields{
		Account: a.id, AccountStatus: a.status, AccountType: a.typ, AvailableCash: Dec(m.cash),
		Equity: Dec(ab.equity), Leverage: Dec(a.leverage),
		MaintenanceDeficit: Dec(nonNegative(m.marginRequirement().Sub(m.value))),
		MarginDeficit:      Dec(nonNegative(m.gross.Sub(m.value.Mul(a.leverage))).Round(2)),
		MarginRatio:        Dec(m.marginRatio()), OptContractsTraded: ab.optContracts,
		OptLevel: a.optLevel, OptionTradingLevel: a.optLevel, OptionCashTotalBalance: Dec(m.optionCash),
		OvernightBp: Dec(m.overnightBp()), Realized: Dec(m.dayRealized), SharesTraded: a.sharesTraded,
		SodEquity: Dec(a.sodEquity), TotalCommissions: Dec(a.commissions.Round(2)),
		TotalLocateCosts: Dec(locate.Round(2)), UsedLeverage: Dec(m.usedLeverage()),
	}
}

// handleAccounts serves GET /v1/api/accounts: the key's accounts only.
func (s *Sim) handleAccounts(c *call) reply {
	out := struct {
		Accounts []accountListRow `json:"accounts"`
	}{Accounts: []accountListRow{}}
	for _, a := range c.key.accounts {
		m := s.ord.metrics(s, a)
		out.Accounts = append(out.Accounts, accountListRow{s.accountFieldsOf(a, m), Dec(m.bp(a))})
	}
	return jsonReply(http.StatusOK, out)
}

// handleAccountDetail serves GET /v1/api/account/{accountId}. Its
// today-counters are the session-open values (spec: "the /pnl endpoint is
// the live source").
func (s *Sim) handleAccountDetail(c *call) reply {
	a := c.acct
	m := s.ord.metrics(s, a)
	ab := s.ord.book(a.id)
	f := s.accountFieldsOf(a, m)
	f.Realized = Dec(decimal.Zero)
	f.SharesTraded = ab.sodShares
	f.TotalCommissions = Dec(ab.sodCommissions.Round(2))
	f.OptContractsTraded = ab.sodOptContracts
	f.OptionCashTotalBalance = Dec(ab.sodOptionCash)
	marginType := "Margin"
	if a.typ == "Cash" || a.leverage.LessThanOrEqual(decimal.NewFromInt(1)) {
		marginType = "Cash"
	}
	return jsonReply(http.StatusOK, accountDetail{
		accountFields: f, BP: Dec(m.bp(a)), MarginRequirement: Dec(m.marginRequirement()),
		MarginType: marginType, Unrealized: Dec(m.totalUnrealized),
	})
}
