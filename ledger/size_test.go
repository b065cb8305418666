package ledger_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/ledger"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// short places a Sell/Open stock order through the broker and lets the
// simulator decide it: a Market order on a located symbol fills, a Limit
// above the last price works.
func (b *testBundle) short(t *testing.T, symbol string, qty int64, limit string) *brokerclient.Order {
	t.Helper()
	return b.order(t, brokerclient.SideSell, brokerclient.OpenCloseOpen, symbol, qty, limit)
}

// cover buys qty shares of symbol back at the market (Buy/Close): the short
// is covered.
func (b *testBundle) cover(t *testing.T, symbol string, qty int64) *brokerclient.Order {
	t.Helper()
	return b.order(t, brokerclient.SideBuy, brokerclient.OpenCloseClose, symbol, qty, "")
}

// order places a stock order on SMART through the broker and lets the
// simulator decide it: a Market order fills, a Limit away from the last
// price works.
func (b *testBundle) order(t *testing.T, side brokerclient.Side, oc brokerclient.OpenClose, symbol string, qty int64, limit string) *brokerclient.Order {
	t.Helper()
	req := brokerclient.OrderRequest{
		Symbol: symbol, Side: side, OpenClose: oc, OrderType: brokerclient.OrderTypeMarket,
		SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay, OrderQuantity: qty, Route: "SMART",
	}
	if limit != "" {
		p := dec(limit)
		req.OrderType, req.LimitPrice = brokerclient.OrderTypeLimit, &p
	}
	o, _, err := b.client.Orders.Place(t.Context(), account, req)
	if err != nil {
		t.Fatal(err)
	}
	b.sim.Advance(time.Second)
	o, _, err = b.client.Orders.Get(t.Context(), account, o.ClientOrderID)
	if err != nil {
		t.Fatal(err)
	}
	want := brokercode.OrderStatusFilled
	if limit != "" {
		want = brokercode.OrderStatusAccepted
	}
	if o.OrderStatus != want {
		t.Fatalf("%s/%s %s %d: %s (%v), want %s", side, oc, symbol, qty, o.OrderStatus, o.Rejection(), want)
	}
	return o
}

func (b *testBundle) bp(t *testing.T) decimal.Decimal {
	t.Helper()
	a, _, err := b.client.Accounts.Get(t.Context(), account)
	if err != nil {
		t.Fatal(err)
	}
	return a.BuyingPower
}

// sizing is what a case expects.
type sizing struct {
	shortable    int64
	binding      locator.LimitName
	located      int64
	openShort    int64
	workingSells int64
	lots         int64
	cost         string // "" when nothing is to be located or the last offer price is unknown
}

func sizingOf(s *locator.Sizing) sizing {
	got := sizing{shortable: s.Shortable, binding: s.Binding, located: s.Located, openShort: s.OpenShort, workingSells: s.WorkingSells, lots: s.LotsToLocate}
	if s.LastOfferKnown && s.LotsToLocate > 0 {
		got.cost = s.EstimatedCost.StringFixed(2)
	}
	return got
}

// floorDiv is floor(bp / price), the buying-power limit.
func floorDiv(bp decimal.Decimal, price string) int64 { return bp.Div(dec(price)).Floor().IntPart() }

// Spec "Locate inventory row" (size shorts from available only), "Account"
// (buying power, Active) and "Orders": the shares shortable now are the least
// of the located inventory (none for an easy-to-borrow symbol), buying power
// at the price, and the account status; open shorts are already out of
// `available` and buying power, working sells are not, so only they are
// subtracted. Shorts are real orders through the simulator.
func TestSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		acct   string
		symbol string
		price  string
		target int64
		act    func(t *testing.T, b *testBundle)
		want   func(t *testing.T, b *testBundle) sizing
	}{
		{
			name: "easy to borrow: buying power binds", symbol: "AAPL", price: "190", target: 1000,
			want: func(t *testing.T, b *testBundle) sizing {
				return sizing{shortable: floorDiv(b.bp(t), "190"), binding: locator.LimitBuyingPower}
			},
		},
		{
			name: "inventory-limited", symbol: "HTBX", price: "12.50", target: 1000,
			act: func(t *testing.T, b *testBundle) { b.fill(t, "HTBX", 300) },
			// 700 more: 7 lots at the last offered 0.015.
			want: func(*testing.T, *testBundle) sizing {
				return sizing{shortable: 300, binding: locator.LimitInventory, located: 300, lots: 7, cost: "10.50"}
			},
		},
		{
			name: "buying-power-limited", symbol: "HTBX", price: "5000",
			act: func(t *testing.T, b *testBundle) { b.fill(t, "HTBX", 300) },
			want: func(t *testing.T, b *testBundle) sizing {
				return sizing{shortable: floorDiv(b.bp(t), "5000"), binding: locator.LimitBuyingPower, located: 300}
			},
		},
		{
			name: "account not Active", acct: "LV100002", symbol: "HTBX", price: "12.50",
			want: func(*testing.T, *testBundle) sizing { return sizing{binding: locator.LimitAccount} },
		},
		{
			name: "open short is not counted twice", symbol: "HTBX", price: "12.50", target: 500,
			act: func(t *testing.T, b *testBundle) {
				b.fill(t, "HTBX", 500)
				b.short(t, "HTBX", 200, "")
			},
			// The short took 200 of the 500 located: 300 left, no lot needed
			// beyond 500 − 300 = 200, i.e. 2 lots.
			want: func(*testing.T, *testBundle) sizing {
				return sizing{shortable: 300, binding: locator.LimitInventory, located: 300, openShort: 200, lots: 2, cost: "3.00"}
			},
		},
		{
			name: "working sell is subtracted", symbol: "HTBX", price: "12.50",
			act: func(t *testing.T, b *testBundle) {
				b.fill(t, "HTBX", 500)
				b.short(t, "HTBX", 200, "20.00")
			},
			want: func(*testing.T, *testBundle) sizing {
				return sizing{shortable: 300, binding: locator.LimitInventory, located: 500, workingSells: 200}
			},
		},
		{
			name: "open short and working sell", symbol: "HTBX", price: "12.50", target: 1000,
			act: func(t *testing.T, b *testBundle) {
				b.fill(t, "HTBX", 1000)
				b.short(t, "HTBX", 200, "")
				b.short(t, "HTBX", 300, "20.00")
			},
			want: func(*testing.T, *testBundle) sizing {
				return sizing{shortable: 500, binding: locator.LimitInventory, located: 800, openShort: 200, workingSells: 300, lots: 5, cost: "7.50"}
			},
		},
		{
			name: "a price check's offer prices the shortfall", symbol: "HTBY", price: "8.40", target: 250,
			act: func(t *testing.T, b *testBundle) {
				w := &workflow.Workflow{ID: "wf-pc", Kind: states.PriceCheck, Account: account, Symbol: "HTBY", Requested: 100, Quantity: 100,
					QuoteReqID: "pc1", State: states.Priced, Legs: map[string]workflow.Leg{"pc1": {Status: 52, Price: dec("0.03"), Type: 2, Shares: 100}}}
				if err := b.store.Create(t.Context(), w); err != nil {
					t.Fatal(err)
				}
			},
			want: func(*testing.T, *testBundle) sizing {
				return sizing{shortable: 0, binding: locator.LimitInventory, lots: 3, cost: "9.00"}
			},
		},
		{
			name: "no offer seen: cost unknown", symbol: "HTBY", price: "8.40", target: 250,
			want: func(*testing.T, *testBundle) sizing {
				return sizing{shortable: 0, binding: locator.LimitInventory, lots: 3}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tc.act != nil {
				tc.act(t, b)
			}
			acct := account
			if tc.acct != "" {
				acct = tc.acct
			}
			before := len(b.sim.Sim.Requests())
			s, err := ledger.Size(t.Context(), b.client, b.store, acct, tc.symbol, dec(tc.price), tc.target)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range b.sim.Sim.Requests()[before:] {
				if r.Method != "GET" {
					t.Errorf("Size sent %s %s", r.Method, r.Path)
				}
			}
			if got, want := sizingOf(s), tc.want(t, b); got != want {
				t.Errorf("sizing %+v\nwant %+v\n%s", got, want, s.Explanation)
			}
			if len(s.Limits) != 3 || s.Explanation == "" || !strings.Contains(s.Explanation, string(s.Binding)) {
				t.Errorf("limits %+v, explanation %q", s.Limits, s.Explanation)
			}
		})
	}
}

// The working sell's buying power is reserved at its limit price.
func TestSizeWorkingSellUsesBuyingPower(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fill(t, "HTBX", 1000)
	b.short(t, "HTBX", 300, "20.00")
	s, err := ledger.Size(t.Context(), b.client, b.store, account, "HTBX", dec("4000"), 0)
	if err != nil {
		t.Fatal(err)
	}
	bp := b.bp(t)
	want := bp.Sub(dec("6000")).Div(dec("4000")).Floor().IntPart() // 300 × 20.00 reserved
	if !s.WorkingNotional.Equal(dec("6000")) || s.Shortable != want || s.Binding != locator.LimitBuyingPower {
		t.Errorf("shortable %d (%s) working notional %s; want %d bound by buying power", s.Shortable, s.Binding, s.WorkingNotional, want)
	}
}

// Bad input is refused before anything is sent (docs/design.md rule 8).
func TestSizeBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		name, symbol, price string
		target              int64
	}{
		{"zero price", "HTBX", "0", 0},
		{"negative price", "HTBX", "-1", 0},
		{"lowercase symbol", "htbx", "1", 0},
		{"empty symbol", "", "1", 0},
		{"negative target", "HTBX", "1", -100},
	} {
		if _, err := ledger.Size(t.Context(), b.client, b.store, account, tc.symbol, dec(tc.price), tc.target); !errors.Is(err, brokercode.ErrInput) {
			t.Errorf("%s: %v, want an input error", tc.name, err)
		}
	}
	if n := len(b.sim.Sim.Requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}
