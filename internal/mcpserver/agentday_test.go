package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locatorhq/locator/internal/mcpserver"
)

// An agent's trading day through the tools, judged against the
// simulator: the account and its buying power, a locate fee quote, a
// locate with progress, shortable, a short under the fat-finger guard
// (one refused by it, nothing sent; one the person confirms, filled), a
// working short seen in the orders and cancelled, a cover the person
// declines (nothing sent), the positions, today's spend and a credit-back
// with progress. Spec sections "Accounts and profit and loss", "Orders",
// "Positions", "Short locates".
func TestAgentDay(t *testing.T) {
	t.Parallel()
	a := serve(t, agentCaller, mcpserver.Options{}).client(t, []bool{true, false})

	var acct mcpserver.AccountOutput
	if r := a.call(t, "account", nil, &acct); r.isError || acct.Account != "LV100001" || acct.Env != "live" || !acct.Active || acct.BuyingPower == "0.00" {
		t.Fatalf("account: %+v (%s), want LV100001, live, active, with buying power", acct, r.text)
	}
	var q mcpserver.QuoteOutput
	if r := a.call(t, "quote", map[string]any{"symbols": []string{"HTBX"}, "quantity": 300}, &q); r.isError || len(q.Quotes) != 1 || q.Quotes[0].PricePerShare != "0.0150" {
		t.Fatalf("quote: %+v (%s), want HTBX's fee, 0.0150", q.Quotes, r.text)
	}
	var loc mcpserver.LocateOutput
	if r := a.callTracked(t, "locate", map[string]any{"symbol": "HTBX", "quantity": 300, "max_price": "0.02"}, &loc, "day-locate"); r.isError || loc.Locate == nil || loc.Locate.State != "filled" {
		t.Fatalf("locate: %+v (%s), want filled", loc.Locate, r.text)
	}
	a.progressed(t, "day-locate", "→ filled")
	var sh mcpserver.ShortableOutput
	if r := a.call(t, "shortable", map[string]any{"symbols": []string{"HTBX"}}, &sh); r.isError || len(sh.Symbols) != 1 ||
		sh.Symbols[0].EasyToBorrow || sh.Symbols[0].OfferState != "filled" {
		t.Fatalf("shortable: %+v (%s), want HTBX hard to borrow, its last offer filled", sh.Symbols, r.text)
	}
	var inv mcpserver.InventoryOutput
	if r := a.call(t, "inventory", nil, &inv); r.isError || !slices.ContainsFunc(inv.Inventory, func(row mcpserver.InventoryRow) bool {
		return row.Symbol == "HTBX" && row.Type == "Locate" && row.Available == 300
	}) {
		t.Fatalf("inventory: %+v (%s), want 300 Locate shares of HTBX available", inv.Inventory, r.text)
	}
	a.shortUnderTheGuard(t)
	a.workingShortCancelled(t)

	// The person says no to the cover: nothing is sent.
	before := a.writes()
	var cov mcpserver.CoverOutput
	r := a.call(t, "cover", map[string]any{"symbol": "HTBX", "quantity": 100, "limit_price": "12.60"}, &cov)
	if !r.isError || r.kind != "not_confirmed" || !strings.Contains(r.text, "Buy to cover 100 HTBX at 12.60") || cov.Order != nil {
		t.Errorf("cover the person declined: error %v, kind %q, %q, order %+v; want not_confirmed, no order", r.isError, r.kind, r.text, cov.Order)
	}
	if n := a.writes() - before; n != 0 {
		t.Errorf("the declined cover sent %d writes, want 0", n)
	}
	if q := a.questions(); len(q) != 2 || !strings.Contains(q[1], "Buy to cover 100 HTBX at 12.60") {
		t.Errorf("questions %q, want the short's, then the cover's", q)
	}

	var pos mcpserver.PositionsOutput
	if r := a.call(t, "positions", nil, &pos); r.isError || !slices.ContainsFunc(pos.Positions, func(p mcpserver.Position) bool {
		return p.Symbol == "HTBX" && p.Side == "Short" && p.Shares == 100
	}) {
		t.Errorf("positions: %+v (%s), want HTBX short 100", pos.Positions, r.text)
	}
	var spend mcpserver.SpendOutput
	if r := a.call(t, "spend", nil, &spend); r.isError || spend.Spend != "4.50" || !slices.ContainsFunc(spend.Symbols, func(s mcpserver.SymbolSpend) bool {
		return s.Symbol == "HTBX" && s.Spend == "4.50" && s.NetPnl != ""
	}) {
		t.Errorf("spend: %+v (%s), want 4.50 in all, HTBX's locate", spend, r.text)
	}
	var cb mcpserver.CreditBackOutput
	if r := a.callTracked(t, "credit_back", map[string]any{"symbol": "HTBX", "quantity": 100}, &cb, "day-credit"); r.isError ||
		len(cb.CreditBacks) != 1 || cb.CreditBacks[0].State != "credited" {
		t.Fatalf("credit_back: %+v (%s), want one credited", cb.CreditBacks, r.text)
	}
	a.progressed(t, "day-credit", "→ credited")
	if q, acc, sells := a.count("POST", quotes), a.count("POST", accepts), a.count("POST", "/locates/sell"); q != 2 || acc != 1 || sells != 1 {
		t.Errorf("%d quotes, %d accepts, %d sells; want the quote's and the locate's 2, 1, 1", q, acc, sells)
	}
}

// shortUnderTheGuard sells HTBX short: a limit far from the reference
// price is refused by the fat-finger guard, nothing sent; a limit under
// the market, confirmed by the person when asked, fills from the located
// shares (nothing more quoted).
func (a *agent) shortUnderTheGuard(t *testing.T) {
	t.Helper()
	before := a.writes()
	r := a.call(t, "short", map[string]any{"symbol": "HTBX", "quantity": 100, "limit_price": "20.00", "ref_price": "12.50", "max_price": "0.02", "confirmed": true}, nil)
	if !r.isError || r.kind != "input" || !strings.Contains(r.text, "fat-finger guard") {
		t.Errorf("short far from the reference: error %v, kind %q, %q; want refused by the fat-finger guard", r.isError, r.kind, r.text)
	}
	if n := a.writes() - before; n != 0 {
		t.Errorf("the refused short sent %d writes, want 0", n)
	}
	var out mcpserver.ShortOutput
	r = a.callTracked(t, "short", map[string]any{"symbol": "HTBX", "quantity": 100, "limit_price": "12.40", "ref_price": "12.50", "max_price": "0.02"}, &out, "day-short")
	if r.isError || out.Order == nil || out.Order.State != "filled" || out.Locate == nil || out.Locate.State != "covered" {
		t.Fatalf("short: error %v %q, %+v; want its order filled, its locate covered by inventory", r.isError, r.text, out)
	}
	a.progressed(t, "day-short", "→ filled")
	if q := a.questions(); len(q) != 1 || !strings.Contains(q[0], "Sell short 100 HTBX at 12.40") || !strings.Contains(q[0], "at most 0.0200 a share") {
		t.Errorf("questions %q, want the short's order and its locate cap", q)
	}
	if n := a.count("POST", orders); n != 1 {
		t.Errorf("%d orders sent, want 1", n)
	}
}

// workingShortCancelled sells HTBX short above the market (confirmed
// already): the order works, the broker's book shows it, and cancel
// cancels it at the broker.
func (a *agent) workingShortCancelled(t *testing.T) {
	t.Helper()
	var out mcpserver.ShortOutput
	if r := a.call(t, "short", map[string]any{"symbol": "HTBX", "quantity": 100, "limit_price": "13.00", "max_price": "0.02", "confirmed": true}, &out); r.isError ||
		out.Order == nil || out.Order.State != "working" {
		t.Fatalf("short above the market: %+v (%s), want its order working", out.Order, r.text)
	}
	id := out.Order.ClientOrderID
	var book mcpserver.OrdersOutput
	if r := a.call(t, "orders", nil, &book); r.isError || !slices.ContainsFunc(book.Orders, func(o mcpserver.BookOrder) bool {
		return o.ClientOrderID == id && o.LimitPrice == "13.00" && o.Leaves == 100
	}) {
		t.Fatalf("orders: %+v (%s), want %s working at 13.00", book.Orders, r.text, id)
	}
	var c mcpserver.CancelOutput
	if r := a.call(t, "cancel", map[string]any{"client_order_id": id}, &c); r.isError || c.Order == nil || c.Order.State != "canceled" {
		t.Fatalf("cancel %s: %+v (%s), want canceled", id, c.Order, r.text)
	}
	if n := a.count("DELETE", "/orders/"+id); n != 1 {
		t.Errorf("%d cancels of %s sent, want 1", n, id)
	}
}

// A client without the elicitation capability cannot ask its person: a
// short, a cover and an approval are refused (kind refused, saying to
// pass confirmed once the person said yes), nothing sent; the offer the
// approval was for is withdrawn by cancel, and with confirmed the short
// goes.
func TestNoElicitationRefused(t *testing.T) {
	t.Parallel()
	a := connect(t, agentCaller)
	waiting := a.personLocates(t, "HTBY", 200)
	for tool, args := range map[string]map[string]any{
		"short":   {"symbol": "HTBX", "quantity": 100, "limit_price": "12.40", "ref_price": "12.50", "max_price": "0.02"},
		"cover":   {"symbol": "HTBX", "quantity": 100, "limit_price": "12.60", "ref_price": "12.50"},
		"approve": {"id": waiting},
	} {
		if r := a.call(t, tool, args, nil); !r.isError || r.kind != "refused" || !strings.Contains(r.text, "confirmed: true") || !strings.Contains(r.text, "nothing was sent") {
			t.Errorf("%s without elicitation: error %v, kind %q, %q; want refused, saying to pass confirmed", tool, r.isError, r.kind, r.text)
		}
	}
	if n := a.count("POST", orders) + a.count("POST", accepts); n != 0 {
		t.Errorf("%d orders and accepts sent, want 0", n)
	}
	var c mcpserver.CancelOutput
	if r := a.call(t, "cancel", map[string]any{"id": waiting}, &c); r.isError || c.Workflow == nil || c.Workflow.State != "canceled" {
		t.Fatalf("cancel %s: %+v (%s), want canceled", waiting, c.Workflow, r.text)
	}
	var out mcpserver.ShortOutput
	if r := a.call(t, "short", map[string]any{"symbol": "HTBX", "quantity": 100, "limit_price": "12.40", "ref_price": "12.50", "max_price": "0.02", "confirmed": true}, &out); r.isError ||
		out.Order == nil || out.Order.State != "filled" {
		t.Errorf("short confirmed: %+v (%s), want filled", out, r.text)
	}
}

// Offers waiting on a person (a locate asked at a terminal, no cap): the
// agent sees one with its fee and the seconds left and approves it (the
// person confirms the very offer: its fee and workflow), which fills with
// one accept; it declines the next, which is cancelled at the broker with
// no accept. (One at a time: virtual time stands still while an offer
// waits on a person.)
func TestOffersApprovedAndDeclined(t *testing.T) {
	t.Parallel()
	a := serve(t, agentCaller, mcpserver.Options{}).client(t, []bool{true})
	id := a.personLocates(t, "HTBX", 200)
	var offers mcpserver.OffersOutput
	if r := a.call(t, "offers", nil, &offers); r.isError || len(offers.Offers) != 1 {
		t.Fatalf("offers: %+v (%s), want the one waiting", offers, r.text)
	}
	if o := offers.Offers[0]; o.ID != id || len(o.Legs) != 1 || o.Legs[0].PricePerShare != "0.0150" || o.SecondsLeft <= 0 {
		t.Errorf("offer %+v, want %s's, one side at 0.0150, with seconds left", o, id)
	}
	var ans mcpserver.AnswerOutput
	if r := a.call(t, "approve", map[string]any{"id": id}, &ans); r.isError || ans.Workflow == nil || ans.Workflow.State != "filled" {
		t.Fatalf("approve %s: %+v (%s), want filled", id, ans.Workflow, r.text)
	}
	if q := a.questions(); len(q) != 1 || !strings.Contains(q[0], "a fee of 0.0150 a share") || !strings.Contains(q[0], id) {
		t.Errorf("questions %q, want the offer's fee and workflow", q)
	}
	id = a.personLocates(t, "HTBY", 200)
	if r := a.call(t, "decline", map[string]any{"id": id}, &ans); r.isError || ans.Workflow == nil || ans.Workflow.State != "declined" || !strings.Contains(ans.Workflow.Outcome, "locator mcp") {
		t.Fatalf("decline %s: %+v (%s), want declined by the agent's call", id, ans.Workflow, r.text)
	}
	if acc, c := a.count("POST", accepts), a.count("DELETE", cancels); acc != 1 || c != 1 {
		t.Errorf("%d accepts, %d cancels; want the approval's 1, the decline's 1", acc, c)
	}
}

// A short whose locate is declined by its cap (HTBY's fee 0.03 above
// max_price 0.01) sends no order: a tool error of kind declined, with the
// locate's record.
func TestShortNotLocatedSendsNoOrder(t *testing.T) {
	t.Parallel()
	a := connect(t, agentCaller)
	var out mcpserver.ShortOutput
	r := a.call(t, "short", map[string]any{"symbol": "HTBY", "quantity": 100, "limit_price": "8.40", "ref_price": "8.40", "max_price": "0.01", "confirmed": true}, &out)
	if !r.isError || r.kind != "declined" || out.Order != nil || out.Locate == nil || out.Locate.State != "declined" || !strings.Contains(r.text, "cost policy") {
		t.Errorf("short above its locate cap: error %v, kind %q, %q, %+v; want declined by the cost policy, no order", r.isError, r.kind, r.text, out)
	}
	if n := a.count("POST", orders); n != 0 {
		t.Errorf("%d orders sent, want 0", n)
	}
}
