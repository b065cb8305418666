package report

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// DefaultPlanDays is how many trading days of history a plan reads.
const DefaultPlanDays = 10

// PlanOptions are what Plan needs besides the store.
type PlanOptions struct {
	Account string
	Symbols []string
	// Days is how many trading days, ending with Today, are read.
	Days  int
	Today time.Time
	// Skew is the broker's clock offset, added to the store's times.
	Skew time.Duration
}

// Plan suggests, for each symbol, how many shares to locate before the
// open from the shares shorted through locator on the last Days trading
// days, and shows the price range of the offers seen over them (every
// locate workflow the broker priced, taken or not).
func Plan(ctx context.Context, st *store.Store, o PlanOptions) ([]locator.Suggestion, error) {
	if o.Days <= 0 {
		return nil, fmt.Errorf("plan: days %d: want 1 or more", o.Days)
	}
	rng := LastTradingDays(o.Today, o.Days)
	daily := map[cellKey]int64{}
	orders, err := st.Orders(ctx, store.OrderFilter{})
	if err != nil {
		return nil, err
	}
	for _, x := range orders {
		d := ledger.TradeDate(x.UpdatedAt.Add(o.Skew))
		if strings.EqualFold(x.Account, o.Account) && x.Executed > 0 && rng.Contains(d) &&
			x.Side == string(brokerclient.SideSell) && x.OpenClose == string(brokerclient.OpenCloseOpen) {
			daily[cellKey{x.Symbol, d}] += x.Executed
		}
	}
	ws, err := st.List(ctx, store.Filter{Kind: states.Locate, Since: rng.From.Add(-o.Skew).AddDate(0, 0, -1)})
	if err != nil {
		return nil, err
	}
	var out []locator.Suggestion
	for _, sym := range o.Symbols {
		s := locator.Suggestion{Symbol: sym, Days: o.Days}
		for k, n := range daily {
			if k.symbol == sym {
				s.DaysShorted++
				s.Shorted += n
				s.MaxDay = max(s.MaxDay, n)
			}
		}
		if s.MaxDay > 0 {
			s.Suggested = workflow.RoundUpLot(s.MaxDay)
		}
		for _, w := range ws {
			p := w.OfferPrice()
			if w.Symbol != sym || !strings.EqualFold(w.Account, o.Account) || !p.IsPositive() ||
				!rng.Contains(ledger.TradeDate(w.CreatedAt.Add(o.Skew))) {
				continue
			}
			s.Offers++
			if s.MinPrice == nil || p.LessThan(*s.MinPrice) {
				s.MinPrice = &p
			}
			if s.MaxPrice == nil || p.GreaterThan(*s.MaxPrice) {
				s.MaxPrice = &p
			}
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(x, y locator.Suggestion) int { return strings.Compare(x.Symbol, y.Symbol) })
	return out, nil
}
