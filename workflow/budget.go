package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/states"
)

// Budget is an account's locate budget for a trading day, kept by its
// owner so that every caller (a terminal, a job, the dashboard, a link)
// spends from one: an offer whose total would take the day's spend past
// Total, or its symbol's past PerSymbol, is declined (CauseBudget).
type Budget struct {
	// Total bounds the day's locate spend in dollars; zero: no bound.
	Total decimal.Decimal `json:"total,omitzero"`
	// PerSymbol bounds one symbol's; a symbol not named has no bound of
	// its own.
	PerSymbol map[string]decimal.Decimal `json:"perSymbol,omitempty"`
}

// Set reports whether b bounds anything.
func (b Budget) Set() bool { return b.Total.IsPositive() || len(b.PerSymbol) > 0 }

// Spent is what the day's locates spent (filled, or accepted and not yet
// settled): in all, and of one symbol.
type Spent struct {
	Total, Symbol decimal.Decimal
}

// Refuses says why an offer of total dollars for symbol, on top of spent,
// is past the budget, or "" when it fits.
func (b Budget) Refuses(symbol string, total decimal.Decimal, spent Spent) string {
	if b.Total.IsPositive() && spent.Total.Add(total).GreaterThan(b.Total) {
		return fmt.Sprintf("the offer's %s with %s spent today would pass the day's locate budget of %s (%s left)",
			total.StringFixed(2), spent.Total.StringFixed(2), b.Total.StringFixed(2), decimal.Max(decimal.Zero, b.Total.Sub(spent.Total)).StringFixed(2))
	}
	if cap, ok := b.PerSymbol[symbol]; ok && spent.Symbol.Add(total).GreaterThan(cap) {
		return fmt.Sprintf("the offer's %s with %s spent on %s today would pass its locate budget of %s (%s left)",
			total.StringFixed(2), spent.Symbol.StringFixed(2), symbol, cap.StringFixed(2), decimal.Max(decimal.Zero, cap.Sub(spent.Symbol)).StringFixed(2))
	}
	return ""
}

// ParseBudget reads a budget as LOCATOR_LOCATE_BUDGET gives it: a total in
// dollars and/or SYMBOL=dollars, comma-separated ("20", "20,HTBX=10",
// "HTBX=10").
func ParseBudget(s string) (Budget, error) {
	var b Budget
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		sym, amount, named := strings.Cut(part, "=")
		if !named {
			amount = sym
		}
		d, err := ParseCost("locate budget", strings.TrimSpace(amount))
		if err != nil || !d.IsPositive() {
			return b, brokercode.Invalid("locate budget", "%q: want dollars above zero, a total and/or SYMBOL=dollars, comma-separated", part)
		}
		if !named {
			b.Total = d
			continue
		}
		sym, err = brokercode.Symbol(strings.TrimSpace(sym))
		if err != nil {
			return b, err
		}
		if b.PerSymbol == nil {
			b.PerSymbol = map[string]decimal.Decimal{}
		}
		b.PerSymbol[sym] = d
	}
	return b, nil
}

// String is b as ParseBudget reads it.
func (b Budget) String() string {
	var parts []string
	if b.Total.IsPositive() {
		parts = append(parts, b.Total.StringFixed(2))
	}
	syms := make([]string, 0, len(b.PerSymbol))
	for s := range b.PerSymbol {
		syms = append(syms, s)
	}
	slices.Sort(syms)
	for _, s := range syms {
		parts = append(parts, s+"="+b.PerSymbol[s].StringFixed(2))
	}
	return strings.Join(parts, ",")
}

// SpentBy is what the day's locate workflows ws spent (filled, or
// accepted and not settled yet): in all, and of symbol.
func SpentBy(ws []*Workflow, symbol string) Spent {
	var s Spent
	for _, w := range ws {
		if w.Kind != states.Locate || (w.State != states.Filled && w.State != states.Accepting) {
			continue
		}
		s.Total = s.Total.Add(w.Total())
		if w.Symbol == symbol {
			s.Symbol = s.Symbol.Add(w.Total())
		}
	}
	return s
}

// BudgetLeft is what a budget leaves of a trading day once its locates
// spent, in dollars ("20.00"), as `status` and the dashboard show it.
type BudgetLeft struct {
	// Total is the day's budget ("" when it bounds only symbols); Left
	// what it leaves ("" then too).
	Total string `json:"total,omitempty"`
	Spent string `json:"spent"`
	Left  string `json:"left,omitempty"`
	// Symbols are the symbols with a budget of their own, by name.
	Symbols []SymbolLeft `json:"symbols,omitempty"`
}

// SymbolLeft is one symbol's budget, its day's spend and what it leaves.
type SymbolLeft struct {
	Symbol string `json:"symbol"`
	Budget string `json:"budget"`
	Spent  string `json:"spent"`
	Left   string `json:"left"`
}

// Left is what b leaves once the day's workflows ws spent.
func (b Budget) Left(ws []*Workflow) BudgetLeft {
	spent := SpentBy(ws, "")
	l := BudgetLeft{Spent: spent.Total.StringFixed(2)}
	if b.Total.IsPositive() {
		l.Total, l.Left = b.Total.StringFixed(2), decimal.Max(decimal.Zero, b.Total.Sub(spent.Total)).StringFixed(2)
	}
	syms := make([]string, 0, len(b.PerSymbol))
	for s := range b.PerSymbol {
		syms = append(syms, s)
	}
	slices.Sort(syms)
	for _, sym := range syms {
		cap, spent := b.PerSymbol[sym], SpentBy(ws, sym).Symbol
		l.Symbols = append(l.Symbols, SymbolLeft{Symbol: sym, Budget: cap.StringFixed(2), Spent: spent.StringFixed(2),
			Left: decimal.Max(decimal.Zero, cap.Sub(spent)).StringFixed(2)})
	}
	return l
}

// String is l in words: "locate budget today: 20.00, 15.00 spent, 5.00
// left; HTBX 10.00, 0.00 left".
func (l BudgetLeft) String() string {
	w := "locate budget today:"
	if l.Total != "" {
		w += fmt.Sprintf(" %s, %s spent, %s left", l.Total, l.Spent, l.Left)
	} else {
		w += fmt.Sprintf(" %s spent", l.Spent)
	}
	for _, s := range l.Symbols {
		w += fmt.Sprintf("; %s %s, %s left", s.Symbol, s.Budget, s.Left)
	}
	return w
}
