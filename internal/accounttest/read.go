package accounttest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/locatorhq/locator/account"
)

// readAsTheBrokerSays: Read hands out the broker's records as a client of
// the account's own keys reads them (after a fill: the located inventory,
// the locate history, the routes), read from the broker then; a request
// of no known kind, or a dated kind without its date (or an undated one
// with one), is refused as input and sends nothing (of the owner's own
// polls aside).
func readAsTheBrokerSays(t *testing.T, e *Env) {
	a := e.Open(caller("test read", nil))
	id := locateOne(t, a, account.LocateItem{Symbol: "HTBX", Quantity: 300, Policy: capped("0.05")}, false)
	follow(t, a, id)
	rd := e.reader(a)
	direct := e.Sim.Client(t, e.Sim.Live)
	same := func(what string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("Read %s:\n%s\nwant, as the broker says:\n%s", what, g, w)
		}
	}

	before := count(e, "GET", "/locates/inventory")
	r, err := rd.Read(ctx(t), account.ReadRequest{What: account.ReadInventory})
	ok(t, err)
	if count(e, "GET", "/locates/inventory") == before {
		t.Error("Read inventory sent no GET of the inventory")
	}
	rows, _, err := direct.Locates.Inventory(ctx(t), "LV100001")
	ok(t, err)
	if len(rows) == 0 {
		t.Fatal("no inventory after a fill")
	}
	same("inventory", r.Inventory, rows)

	r, err = rd.Read(ctx(t), account.ReadRequest{What: account.ReadLocateHistory})
	ok(t, err)
	hist, _, err := direct.Locates.History(ctx(t), "LV100001")
	ok(t, err)
	same("locate history", r.History, hist)

	r, err = rd.Read(ctx(t), account.ReadRequest{What: account.ReadRoutes})
	ok(t, err)
	routes, _, err := direct.Orders.Routes(ctx(t), "LV100001")
	ok(t, err)
	same("routes", r.Routes, routes)
	if r.Inventory != nil || r.PnL != nil {
		t.Errorf("Read routes set other kinds' fields: %+v", r)
	}

	sent := len(e.Sim.Sim.Requests())
	for _, req := range []account.ReadRequest{
		{What: "everything"},
		{What: account.ReadHistoricalPositions},
		{What: account.ReadFills},
		{What: account.ReadRoutes, Date: e.Sim.Clock.Now()},
	} {
		if _, err := rd.Read(ctx(t), req); account.KindOf(err) != account.KindInput {
			t.Errorf("Read %+v: %v, want a KindInput refusal", req, err)
		}
	}
	for _, r := range e.Sim.Sim.Requests()[sent:] {
		// The owner's poller reads history and inventory on its own.
		if !strings.HasSuffix(r.Path, "/locates/history") && !strings.HasSuffix(r.Path, "/locates/inventory") {
			t.Errorf("%s %s sent for refused reads", r.Method, r.Path)
		}
	}
}
