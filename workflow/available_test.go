package workflow_test

import (
	"testing"

	"github.com/locatorhq/locator/workflow"
)

// shortSell is a working Sell/Open of 300 HTBX, 100 executed.
func shortSell(mods ...func(*workflow.BookOrder)) workflow.BookOrder {
	o := workflow.BookOrder{Symbol: "HTBX", Side: "Sell", OpenClose: "Open", Status: "New", Quantity: 300, Executed: 100}
	for _, m := range mods {
		m(&o)
	}
	return o
}

// Spec "Locate inventory row": size shorts from `available` only; the
// shares a working short sale will take still show as available, so they
// are taken off (spec "Order statuses" for which orders still work).
func TestWorkingShortSell(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		o         workflow.BookOrder
		working   bool
		remaining int64
	}{
		{"Sell/Open New counts its remaining shares", shortSell(), true, 200},
		{"Sell/Open PendingNew counts", shortSell(func(o *workflow.BookOrder) { o.Status = "PendingNew" }), true, 200},
		{"Sell/Open Accepted counts", shortSell(func(o *workflow.BookOrder) { o.Status = "Accepted" }), true, 200},
		{"Sell/Open PartiallyFilled counts", shortSell(func(o *workflow.BookOrder) { o.Status = "PartiallyFilled" }), true, 200},
		{"Sell without openClose counts (opens a short)", shortSell(func(o *workflow.BookOrder) { o.OpenClose = "" }), true, 200},
		{"leavesQuantity wins when given", shortSell(func(o *workflow.BookOrder) { o.Leaves = 50 }), true, 50},
		{"canceled part is not remaining", shortSell(func(o *workflow.BookOrder) { o.Canceled = 100 }), true, 100},
		{"remaining is never negative", shortSell(func(o *workflow.BookOrder) { o.Executed, o.Canceled = 300, 100 }), true, 0},
		{"Buy/Open does not count", shortSell(func(o *workflow.BookOrder) { o.Side = "Buy" }), false, 200},
		{"Buy/Close (a cover) does not count", shortSell(func(o *workflow.BookOrder) { o.Side, o.OpenClose = "Buy", "Close" }), false, 200},
		{"Buy without openClose does not count", shortSell(func(o *workflow.BookOrder) { o.Side, o.OpenClose = "Buy", "" }), false, 200},
		{"Sell/Close (a long sale) does not count", shortSell(func(o *workflow.BookOrder) { o.OpenClose = "Close" }), false, 200},
		{"DoneForDay does not count (cannot fill today)", shortSell(func(o *workflow.BookOrder) { o.Status = "DoneForDay" }), false, 200},
		{"Filled does not count", shortSell(func(o *workflow.BookOrder) { o.Status, o.Executed = "Filled", 300 }), false, 0},
		{"Canceled does not count", shortSell(func(o *workflow.BookOrder) { o.Status = "Canceled" }), false, 200},
		{"Rejected does not count", shortSell(func(o *workflow.BookOrder) { o.Status = "Rejected" }), false, 200},
		{"Expired does not count", shortSell(func(o *workflow.BookOrder) { o.Status = "Expired" }), false, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.o.WorkingShortSell(); got != c.working {
				t.Errorf("WorkingShortSell() = %v, want %v", got, c.working)
			}
			if got := c.o.Remaining(); got != c.remaining {
				t.Errorf("Remaining() = %d, want %d", got, c.remaining)
			}
			var want int64
			if c.working {
				want = c.remaining
			}
			book := []workflow.BookOrder{c.o}
			if got := workflow.WorkingShortSells(book, "HTBX"); got != want {
				t.Errorf("WorkingShortSells = %d, want %d", got, want)
			}
			if got := workflow.Available(1000, book, "HTBX"); got != 1000-want {
				t.Errorf("Available(1000) = %d, want %d", got, 1000-want)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	book := []workflow.BookOrder{
		shortSell(), // 200 remaining
		shortSell(func(o *workflow.BookOrder) { o.OpenClose, o.Quantity, o.Executed = "", 100, 0 }),             // 100
		shortSell(func(o *workflow.BookOrder) { o.Symbol = "AAPL" }),                                            // other symbol
		shortSell(func(o *workflow.BookOrder) { o.Symbol = "htbx" }),                                            // symbols match exactly
		shortSell(func(o *workflow.BookOrder) { o.Side, o.OpenClose = "Buy", "Close" }),                         // a cover
		shortSell(func(o *workflow.BookOrder) { o.Status = "DoneForDay" }),                                      // done today
		shortSell(func(o *workflow.BookOrder) { o.Status, o.Executed = "Filled", 300 }),                         // filled
		shortSell(func(o *workflow.BookOrder) { o.Status, o.Canceled, o.Executed = "Canceled", 300, 0 }),        // canceled
		shortSell(func(o *workflow.BookOrder) { o.Status, o.Executed, o.Canceled = "PartiallyFilled", 400, 0 }), // overfilled: 0
	}
	cases := []struct {
		name    string
		located int64
		book    []workflow.BookOrder
		symbol  string
		working int64
		want    int64
	}{
		{"located less the working short sells", 1000, book, "HTBX", 300, 700},
		{"exactly taken", 300, book, "HTBX", 300, 0},
		{"never negative", 100, book, "HTBX", 300, 0},
		{"nothing located", 0, book, "HTBX", 300, 0},
		{"other symbol: its own orders only", 500, book, "AAPL", 200, 300},
		{"empty book", 500, nil, "HTBX", 0, 500},
		{"symbol with no orders", 500, book, "MSFT", 0, 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := workflow.WorkingShortSells(c.book, c.symbol); got != c.working {
				t.Errorf("WorkingShortSells = %d, want %d", got, c.working)
			}
			if got := workflow.Available(c.located, c.book, c.symbol); got != c.want {
				t.Errorf("Available = %d, want %d", got, c.want)
			}
		})
	}
}
