// Credit-back cases: unused located shares handed back, and a single-use
// locate not used twice.

package accounttest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// Spec "Short locates" rule 5: unused shares are credited back.
func creditBack(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 500, Policy: capped("0.05")}, false))
	s, err := a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 200, Type: brokercode.LocateTypeLocate})
	ok(t, err)
	w, _ := follow(t, a, s.Started[0].ID)
	wantOutcome(t, w, states.Credited, "credited — 200 Locate shares credited back", console.ExitOK)
	if _, err := a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 900, Type: brokercode.LocateTypeLocate}); account.KindOf(err) != account.KindInput {
		t.Errorf("credit back more than held: %v, want an input error", err)
	}
}

// Located shares a working short sale needs are never
// credited back by a quantity: with 300 HTBX located and a stop short of
// 100 working, a credit-back of 300 is refused with the numbers, nothing
// sent; 200 (the unused) goes; with Force the held ones go too.
func creditBackKeepsWorkingSells(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false))
	// A stop under the market waits: the sell stays working, its 100
	// located shares held for it.
	sold, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 100, OrderType: "Stop", Stop: decimal.RequireFromString("11.50"),
		Policy: capped("0.05"), Guard: workflow.Guard{RefPrice: decimal.RequireFromString("12.50")}})
	ok(t, err)
	shortSent(t, e, sold)
	before := writes(e)
	_, err = a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 300, Type: brokercode.LocateTypeLocate})
	if account.KindOf(err) != account.KindInput || !strings.Contains(fmt.Sprint(err), "200 of them are unused") || !strings.Contains(fmt.Sprint(err), "--force") {
		t.Errorf("credit back all 300 under a working sell: %v, want refused with the numbers", err)
	}
	if writes(e) != before {
		t.Errorf("the refused credit-back sent %d writes", writes(e)-before)
	}
	s, err := a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 200, Type: brokercode.LocateTypeLocate})
	ok(t, err)
	w, _ := follow(t, a, s.Started[0].ID)
	wantOutcome(t, w, states.Credited, "credited — 200 Locate shares credited back", console.ExitOK)
	s, err = a.CreditBack(ctx(t), account.CreditBackRequest{Symbol: "HTBX", Quantity: 100, Type: brokercode.LocateTypeLocate, Force: true})
	ok(t, err)
	w, _ = follow(t, a, s.Started[0].ID)
	wantOutcome(t, w, states.Credited, "credited — 100 Locate shares credited back", console.ExitOK)
	if _, err := a.CreditBack(ctx(t), account.CreditBackRequest{Unused: true, Force: true}); account.KindOf(err) != account.KindInput {
		t.Errorf("the unused, forced: %v, want an input error", err)
	}
}

// Spec "Short locates" rule 5 and "Locate inventory row": the unused
// shares (ledger.Unused) are the located shares available, less those a
// short took, in whole lots; asked to confirm, the caller sees them first
// and a no sends nothing; one symbol's are credited back alone, then every
// symbol's, and a third time nothing is left. Bad requests send nothing.
func creditBackUnused(t *testing.T, e *Env) {
	k := newAsker(no())
	a := e.Open(caller("test", k))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 500, Policy: capped("0.05")}, false))
	follow(t, a, locateOne(t, a, account.LocateItem{Symbol: "HTBY", Quantity: 300, Policy: capped("0.05")}, false))
	sold, err := a.Short(ctx(t), account.ShortRequest{Symbol: "HTBX", Quantity: 200, Limit: decimal.RequireFromString("12.50"), Policy: capped("0.05"),
		Guard: workflow.Guard{RefPrice: decimal.RequireFromString("12.50")}})
	ok(t, err)
	shortSent(t, e, sold)
	before := writes(e)
	for _, bad := range []account.CreditBackRequest{
		{Unused: true, Symbol: "HTBX", Quantity: 100},
		{Unused: true, ID: "wf-mine"},
		{Unused: true, Symbol: "HT/BX"},
		{Unused: true, Type: "locate"},
		{Symbol: "HTBX", Quantity: 100, Type: brokercode.LocateTypeLocate, Confirm: true},
	} {
		if _, err := a.CreditBack(ctx(t), bad); account.KindOf(err) != account.KindInput {
			t.Errorf("%+v: %v, want an input error", bad, err)
		}
	}
	if _, err := e.Open(caller("nobody", nil)).CreditBack(ctx(t), account.CreditBackRequest{Unused: true, Confirm: true}); account.KindOf(err) != account.KindInput {
		t.Errorf("a confirmation nobody can give: %v, want an input error", err)
	}
	res, err := a.CreditBack(ctx(t), account.CreditBackRequest{Unused: true, Confirm: true})
	ok(t, err)
	want := []locator.Credit{{Symbol: "HTBX", Type: brokercode.LocateTypeLocate, Shares: 300}, {Symbol: "HTBY", Type: brokercode.LocateTypeLocate, Shares: 300}}
	if q := k.question(t); !slices.Equal(q.Credits, want) {
		t.Errorf("question %+v, want the credits %+v", q, want)
	}
	if !res.Declined || len(res.Started) != 0 || writes(e) != before {
		var sent []string
		for _, r := range e.Sim.Sim.Requests() {
			if r.Method != "GET" && !strings.HasPrefix(r.Path, "/_sim/") {
				sent = append(sent, r.Time.Format("15:04:05.000")+" "+r.Method+" "+r.Path+" "+r.Body)
			}
		}
		t.Errorf("declined at the confirmation: %+v, %d writes, want nothing sent; the writes:\n%s", res, writes(e)-before, strings.Join(sent, "\n"))
	}
	credited := func(req account.CreditBackRequest, want ...locator.Credit) {
		t.Helper()
		res, err := a.CreditBack(ctx(t), req)
		ok(t, err)
		var got []locator.Credit
		for _, s := range res.Started {
			w, _ := follow(t, a, s.ID)
			wantOutcome(t, w, states.Credited, "credited", console.ExitOK)
			got = append(got, s.Credit)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v started %+v (skipped %+v), want %+v", req, got, res.Skipped, want)
		}
	}
	credited(account.CreditBackRequest{Unused: true, Symbol: "HTBX"}, want[0])
	credited(account.CreditBackRequest{Unused: true}, want[1])
	credited(account.CreditBackRequest{Unused: true})
	if n := count(e, "POST", "/locates/sell"); n != 2 {
		t.Errorf("%d sells, want 2", n)
	}
}

// Spec "Short locates" rule 5: a SingleUse lot no short
// used is credited back as unused, and so is a second one located the same
// day after the first was credited back (shares credited back are not
// shares used): twice `locate RSHO 1000 --allow-single-use --max-price
// 0.05` then `credit-back --all`, the second locate held the spec's 30
// seconds by the engine. Both lots are sold back, and the broker ends with
// no RSHO SingleUse share available.
func creditBackSingleUseAgain(t *testing.T, e *Env) {
	a := e.Open(caller("test", nil))
	item := account.LocateItem{Symbol: "RSHO", Quantity: 1000, Policy: capped("0.05")}
	item.Policy.AllowSingleUse = true
	lot := locator.Credit{Symbol: "RSHO", Type: brokercode.LocateTypeSingleUse, Shares: 1000}
	for round := range 2 {
		w, _ := follow(t, a, locateOne(t, a, item, false))
		wantOutcome(t, w, states.Filled, "filled", console.ExitOK)
		if w.LocateType != string(lot.Type) {
			t.Fatalf("round %d: located %s shares, want the SingleUse side", round, w.LocateType)
		}
		res, err := a.CreditBack(ctx(t), account.CreditBackRequest{Unused: true})
		ok(t, err)
		if len(res.Started) != 1 || res.Started[0].Credit != lot || len(res.Skipped) != 0 {
			t.Fatalf("round %d: credit-back of the unused shares started %+v, skipped %+v; want %+v", round, res.Started, res.Skipped, lot)
		}
		w, _ = follow(t, a, res.Started[0].ID)
		wantOutcome(t, w, states.Credited, "credited", console.ExitOK)
	}
	if n := count(e, "POST", "/locates/sell"); n != 2 {
		t.Errorf("%d sells, want 2", n)
	}
	rows, _, err := e.Sim.Client(t, e.Sim.Live).Locates.Inventory(ctx(t), "LV100001")
	ok(t, err)
	for _, r := range rows {
		if r.Symbol == "RSHO" && r.Available != 0 {
			t.Errorf("the broker still holds %d RSHO %s shares available", r.Available, r.Type())
		}
	}
}
