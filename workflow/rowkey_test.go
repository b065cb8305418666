package workflow_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// A row's MAC covers every field of its request: changing any one of them
// (a writer raising maxPrice, say) makes it fail, as does another key or
// no MAC at all; what a later step writes (state, shares quoted, the
// quoteReqID sent again) does not; a price verifies at any scale it is
// stored at (0.050 is 0.05).
func TestRowKeyCoversTheRequest(t *testing.T) {
	t.Parallel()
	key := workflow.RowKey("k")
	base := func() *workflow.Workflow {
		return &workflow.Workflow{ID: "wf-1", Kind: states.Locate, Account: "LV100001", Symbol: "HTBX", Requested: 100,
			Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05"), MaxCost: decimal.RequireFromString("10"), AutoAccept: true}}
	}
	w := base()
	w.MAC = key.Workflow(w)
	if !key.VerifyWorkflow(w) || workflow.RowKey("other").VerifyWorkflow(w) {
		t.Fatal("a row verifies under its own key only")
	}
	for name, edit := range map[string]func(*workflow.Workflow){
		"id": func(w *workflow.Workflow) { w.ID = "wf-2" }, "kind": func(w *workflow.Workflow) { w.Kind = states.CreditBack },
		"account": func(w *workflow.Workflow) { w.Account = "LV100002" }, "symbol": func(w *workflow.Workflow) { w.Symbol = "HTBY" },
		"requested":  func(w *workflow.Workflow) { w.Requested = 1000 },
		"maxPrice":   func(w *workflow.Workflow) { w.Policy.MaxPrice = decimal.RequireFromString("9999") },
		"maxCost":    func(w *workflow.Workflow) { w.Policy.MaxCost = decimal.Zero },
		"autoAccept": func(w *workflow.Workflow) { w.Policy.AutoAccept = false },
		"singleUse":  func(w *workflow.Workflow) { w.Policy.AllowSingleUse = true },
		"no MAC":     func(w *workflow.Workflow) { w.MAC = "" },
	} {
		c := *w
		edit(&c)
		if key.VerifyWorkflow(&c) {
			t.Errorf("%s changed: the row still verifies", name)
		}
	}
	later := *w
	later.State, later.Quantity, later.QuoteReqID, later.Policy.MaxPrice = states.Offered, 60, "q-2", decimal.RequireFromString("0.050")
	if !key.VerifyWorkflow(&later) {
		t.Error("the engine's own later steps made the row fail")
	}
}

// An order's MAC covers what is sent; the route paper assigns to an order
// sent without one is written after the MAC and verifies once the order
// is answered, never before (an intent would be sent to that route).
func TestRowKeyCoversTheOrder(t *testing.T) {
	t.Parallel()
	key := workflow.RowKey("k")
	o := &workflow.Order{ClientOrderID: "co-1", Account: "LV100001", Symbol: "AAPL", Side: "Sell", OpenClose: "Open", OrderType: "Limit",
		TimeInForce: "Day", Quantity: 10, LimitPrice: decimal.RequireFromString("189"), State: states.OrderIntent}
	o.MAC = key.Order(o)
	if !key.VerifyOrder(o) {
		t.Fatal("an order's own MAC does not verify")
	}
	for name, edit := range map[string]func(*workflow.Order){
		"side": func(o *workflow.Order) { o.Side = "Buy" }, "quantity": func(o *workflow.Order) { o.Quantity = 1000 },
		"limit": func(o *workflow.Order) { o.LimitPrice = decimal.RequireFromString("1") },
		"stop":  func(o *workflow.Order) { o.StopPrice = decimal.RequireFromString("1") },
		"type":  func(o *workflow.Order) { o.OrderType = "Market" }, "tif": func(o *workflow.Order) { o.TimeInForce = "GTC" },
		"route": func(o *workflow.Order) { o.Route = "DARK" }, "locate": func(o *workflow.Order) { o.LocateWorkflowID = "wf-x" },
	} {
		c := *o
		edit(&c)
		if key.VerifyOrder(&c) {
			t.Errorf("%s changed: the order still verifies", name)
		}
	}
	answered := *o
	answered.State, answered.Route = states.OrderWorking, "PAPER"
	if !key.VerifyOrder(&answered) {
		t.Error("an answered order with paper's route does not verify")
	}
}
