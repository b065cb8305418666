package brokerclient_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/simtest"
)

// acctBundle is a running simulator with a live and a paper client on its
// virtual clock.
type acctBundle struct {
	*simtest.Bundle
	live, paper *brokerclient.Client
}

// acctSetup starts the simulator and, unless manualClock, drives its clock
// as virtual time so pacing and retry waits complete at once.
func acctSetup(t *testing.T, manualClock bool, opts ...simtest.Option) *acctBundle {
	t.Helper()
	b := simtest.New(t, opts...)
	if !manualClock {
		b.RunClock(t)
	}
	return &acctBundle{Bundle: b, live: b.Client(t, b.Live), paper: b.Client(t, b.Paper)}
}

// sent returns the logged requests whose method matches and whose path
// contains substr.
func (b *acctBundle) sent(method, substr string) []brokersim.RequestRecord {
	var out []brokersim.RequestRecord
	for _, r := range b.Sim.Requests() {
		if r.Method == method && strings.Contains(r.Path, substr) {
			out = append(out, r)
		}
	}
	return out
}

// order reads an order by id, moving the clock 50 ms (the simulator's
// registration delay) while it answers 404.
func (b *acctBundle) order(t *testing.T, c *brokerclient.Client, account, id string) *brokerclient.Order {
	t.Helper()
	for i := 0; ; i++ {
		o, _, err := c.Orders.Get(t.Context(), account, id)
		if err == nil {
			return o
		}
		if !errors.Is(err, brokerclient.ErrNotFound) || i == 10 {
			t.Fatalf("get order %s: %v", id, err)
		}
		b.Advance(50 * time.Millisecond)
	}
}

// TestAccountsList: spec "Accounts and profit and loss", GET /v1/api/accounts
// (list rows carry buyingPower; the call doubles as a credential check).
func TestAccountsList(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	tests := []struct {
		name      string
		key       simtest.Key
		wantIDs   []string
		wantPaper bool
	}{
		{"live key", b.Live, []string{"LV100001", "LV100002"}, false},
		{"paper key", b.Paper, []string{"PP200001"}, true},
		{"second live key", b.Live2, []string{"LV300001"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := b.Client(t, tt.key)
			got, resp, err := c.Accounts.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
			var ids []string
			for _, a := range got {
				ids = append(ids, a.Account)
				if a.IsPaper() != tt.wantPaper {
					t.Errorf("%s: IsPaper %v", a.Account, a.IsPaper())
				}
				if !a.BuyingPower.IsPositive() {
					t.Errorf("%s: buyingPower %s not decoded", a.Account, a.BuyingPower)
				}
				if a.AvailableCashEMS != nil || a.IsFutureAccount != nil || a.MarginRequirement != nil {
					t.Errorf("%s: list row has detail-only fields", a.Account)
				}
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("accounts (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("invalid credentials answer 404", func(t *testing.T) {
		t.Parallel()
		c := b.Client(t, simtest.Key{ID: "SIMLIVEKEY01", Secret: "wrong"})
		_, resp, err := c.Accounts.List(t.Context())
		var er *brokerclient.ErrorResponse
		if !errors.Is(err, brokerclient.ErrNotFound) || !errors.As(err, &er) || er.Text != "Not found" {
			t.Fatalf("err %v, want 404 Not found", err)
		}
		if resp == nil || resp.StatusCode != 404 {
			t.Errorf("resp %v", resp)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("the secret leaked into the error: %v", err)
		}
	})
}

// TestAccountsGet: spec "Account (list row and detail)": the detail object
// carries bp, the detail-only fields and undocumented keys kept opaque.
func TestAccountsGet(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	list, _, err := b.live.Accounts.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	listBP := map[string]decimal.Decimal{}
	for _, a := range list {
		listBP[a.Account] = a.BuyingPower
	}

	tests := []struct {
		name       string
		id         string
		wantID     string
		wantStatus string
		wantActive bool
	}{
		{"active margin account", "LV100001", "LV100001", "Active", true},
		{"path id is case-insensitive", "lv100001", "LV100001", "Active", true},
		{"not active account", "LV100002", "LV100002", "Restricted", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, _, err := b.live.Accounts.Get(t.Context(), tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if a.Account != tt.wantID || a.AccountStatus != tt.wantStatus || a.IsActive() != tt.wantActive || a.IsPaper() {
				t.Errorf("got %s %s active=%v paper=%v", a.Account, a.AccountStatus, a.IsActive(), a.IsPaper())
			}
			if !a.BuyingPower.Equal(listBP[tt.wantID]) {
				t.Errorf("bp %s, list buyingPower %s: the spec says same value, two names", a.BuyingPower, listBP[tt.wantID])
			}
			if a.IsFutureAccount == nil || *a.IsFutureAccount || a.AvailableCashEMS == nil || a.MarginRequirement == nil {
				t.Errorf("detail-only fields missing: %+v", a)
			}
			for _, k := range []string{"marginType", "fractional", "unrealized"} {
				if _, ok := a.Extra[k]; !ok {
					t.Errorf("undocumented key %q not kept in Extra %v", k, a.Extra)
				}
			}
			for _, k := range []string{"bp", "optionTradingLevel", "buyingPower", "account"} {
				if _, ok := a.Extra[k]; ok {
					t.Errorf("documented key %q leaked into Extra", k)
				}
			}
		})
	}

	t.Run("option level from either name", func(t *testing.T) {
		t.Parallel()
		a, _, err := b.paper.Accounts.Get(t.Context(), "PP200001")
		if err != nil {
			t.Fatal(err)
		}
		if a.OptLevel != 4 || !a.IsPaper() {
			t.Errorf("optLevel %d paper %v", a.OptLevel, a.IsPaper())
		}
	})

	t.Run("account of another key answers 404", func(t *testing.T) {
		t.Parallel()
		_, _, err := b.live.Accounts.Get(t.Context(), "PP200001")
		if !errors.Is(err, brokerclient.ErrNotFound) {
			t.Fatalf("err %v, want ErrNotFound", err)
		}
	})

	t.Run("malformed ids are refused before the wire", func(t *testing.T) {
		t.Parallel()
		c := simtest.New(t)
		cl := c.Client(t, c.Live)
		for _, id := range []string{"", ".", "..", "LV1/0001", "LV 100001", "LV100001\n"} {
			_, _, err := cl.Accounts.Get(t.Context(), id)
			var ie *brokercode.InputError
			if !errors.Is(err, brokercode.ErrInput) || !errors.As(err, &ie) || ie.Field != "accountId" {
				t.Errorf("id %q: err %v, want an accountId InputError", id, err)
			}
			if _, _, err := cl.Accounts.PnL(t.Context(), id); !errors.Is(err, brokercode.ErrInput) {
				t.Errorf("pnl id %q: err %v", id, err)
			}
		}
		if n := len(c.Sim.Requests()); n != 0 {
			t.Errorf("%d requests sent, want none", n)
		}
	})
}

// TestAccountsPnL: spec "Profit and loss response": exact key spellings,
// the sum rules, day versus lifetime fields, and a closed lot staying with
// exposure 0 (rule 3).
func TestAccountsPnL(t *testing.T) {
	t.Parallel()
	b := acctSetup(t, false)
	ctx := t.Context()

	p, _, err := b.live.Accounts.PnL(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Lots) != 1 {
		t.Fatalf("lots %+v, want the carried MSFT lot", p.Lots)
	}
	msft := p.Lots[0]
	// Carried lot: 100 MSFT bought at 400, prior close 415, last 420.
	want := brokerclient.PnLRow{
		PositionID: msft.PositionID, Symbol: "MSFT", PnLCalc: brokerclient.PnLCalc{
			Exposure: dec("42000"), UnrealizedPnL: dec("2000"), DayUnrealizedPnL: dec("500"),
			PctPnLMove: dec("5"), DayPctPnLMove: dec("1.2"),
		},
	}
	if diff := cmp.Diff(want, msft, decEqual); diff != "" {
		t.Errorf("MSFT lot (-want +got):\n%s", diff)
	}
	if msft.Closed() {
		t.Error("an open lot reports Closed")
	}
	if msft.DayUnrealizedPnL.Equal(msft.UnrealizedPnL) {
		t.Error("a carried lot should differ in day and lifetime fields (rule 4)")
	}

	// A round trip today: buy 10 AAPL and sell them again.
	for _, side := range []brokerclient.Side{brokerclient.SideBuy, brokerclient.SideSell} {
		oc := brokerclient.OpenCloseOpen
		if side == brokerclient.SideSell {
			oc = brokerclient.OpenCloseClose
		}
		o, _, err := b.live.Orders.Place(ctx, "LV100001", brokerclient.OrderRequest{
			Symbol: "AAPL", Side: side, OpenClose: oc, OrderType: brokerclient.OrderTypeMarket,
			SecurityType: brokerclient.SecurityTypeStock, TimeInForce: brokerclient.TimeInForceDay,
			OrderQuantity: 10, Route: "SMART",
		})
		if err != nil {
			t.Fatal(err)
		}
		b.Advance(50 * time.Millisecond)
		if got := b.order(t, b.live, "LV100001", o.ClientOrderID); got.OrderStatus != brokercode.OrderStatusFilled {
			t.Fatalf("%s: status %s text %v", side, got.OrderStatus, got.Text)
		}
	}
	p, _, err = b.live.Accounts.PnL(ctx, "LV100001")
	if err != nil {
		t.Fatal(err)
	}
	var closed []brokerclient.PnLRow
	var dayU, dayR, total decimal.Decimal
	for _, r := range p.Lots {
		if r.Closed() {
			closed = append(closed, r)
		}
		dayU, dayR, total = dayU.Add(r.DayUnrealizedPnL), dayR.Add(r.DayRealizedPnl), total.Add(r.UnrealizedPnL)
	}
	if len(closed) != 1 || closed[0].Symbol != "AAPL" || !closed[0].UnrealizedPnL.IsZero() || !closed[0].DayUnrealizedPnL.IsZero() {
		t.Errorf("closed lots %+v, want the AAPL lot with exposure 0", closed)
	}
	if !dayU.Equal(p.DayUnrealized) || !dayR.Equal(p.DayRealized) || !total.Equal(p.TotalUnrealized) {
		t.Errorf("sum rule broken: rows %s/%s/%s aggregates %s/%s/%s", dayU, dayR, total, p.DayUnrealized, p.DayRealized, p.TotalUnrealized)
	}
	if !p.DayPnl.Equal(p.DayRealized.Add(p.DayUnrealized)) {
		t.Errorf("dayPnl %s != %s + %s", p.DayPnl, p.DayRealized, p.DayUnrealized)
	}
	if p.SharesTraded != 20 {
		t.Errorf("sharesTraded %d, want 20", p.SharesTraded)
	}
}

// Spec "Profit and loss response" rule 5: a lot carries no side or shares;
// its open position is found by positionId, then tradedSymbol, then symbol,
// a symbol standing only when one position has it.
func TestPnLRowOpenPosition(t *testing.T) {
	const option = "AAPL  261218C00200000"
	msft1 := brokerclient.Position{PositionID: "1", Symbol: "MSFT", Side: brokerclient.PositionLong, Shares: 100}
	msft2 := brokerclient.Position{PositionID: "2", Symbol: "MSFT", Side: brokerclient.PositionShort, Shares: -50}
	call := brokerclient.Position{PositionID: "3", Symbol: "AAPL", TradedSymbol: option, Shares: 2}
	aapl := brokerclient.Position{PositionID: "4", Symbol: "AAPL", Shares: 10}
	noID := brokerclient.Position{Symbol: "QQQ", Shares: 5}
	for _, tc := range []struct {
		name   string
		lot    brokerclient.PnLRow
		open   []brokerclient.Position
		want   brokerclient.ID
		wantOK bool
	}{
		{"positionId, though the symbol is shared", brokerclient.PnLRow{PositionID: "2", Symbol: "MSFT"}, []brokerclient.Position{msft1, msft2}, "2", true},
		{"positionId before the symbol", brokerclient.PnLRow{PositionID: "4", Symbol: "MSFT"}, []brokerclient.Position{msft1, aapl}, "4", true},
		{"tradedSymbol", brokerclient.PnLRow{PositionID: "9", Symbol: option}, []brokerclient.Position{aapl, call}, "3", true},
		{"tradedSymbol before a shared symbol", brokerclient.PnLRow{Symbol: "AAPL"}, []brokerclient.Position{aapl, {PositionID: "5", Symbol: "AAPL", TradedSymbol: "AAPL"}}, "5", true},
		{"one position with the symbol", brokerclient.PnLRow{PositionID: "9", Symbol: "MSFT"}, []brokerclient.Position{msft1, aapl}, "1", true},
		{"two positions with the symbol", brokerclient.PnLRow{PositionID: "9", Symbol: "MSFT"}, []brokerclient.Position{msft1, msft2}, "", false},
		{"no positionId matches no positionId", brokerclient.PnLRow{Symbol: "SPY"}, []brokerclient.Position{noID}, "", false},
		{"closed: no open position", brokerclient.PnLRow{PositionID: "7", Symbol: "SPY"}, []brokerclient.Position{msft1, call}, "", false},
		{"no open positions", brokerclient.PnLRow{PositionID: "1", Symbol: "MSFT"}, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.lot.OpenPosition(tc.open)
			if ok != tc.wantOK || got.PositionID != tc.want {
				t.Errorf("OpenPosition = %q, %v; want %q, %v", got.PositionID, ok, tc.want, tc.wantOK)
			}
			if !ok && !cmp.Equal(got, brokerclient.Position{}) {
				t.Errorf("no match returned %+v", got)
			}
		})
	}
}
