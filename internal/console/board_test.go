package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/states"
	"github.com/locatorhq/locator/workflow"
)

// The live table keeps one row per requested symbol (a symbol asked twice
// keeps two) and redraws over itself.
func TestBoardRowsPerSymbol(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	b := NewBoard(&buf, []account.LocateItem{{Symbol: "HTBX", Quantity: 100}, {Symbol: "HTBY", Quantity: 200}, {Symbol: "HTBX", Quantity: 300}})
	b.Update(workflow.Update{Workflow: &workflow.Workflow{ID: "wf-1", Symbol: "HTBX", State: states.Quoting, Quantity: 100}})
	b.Update(workflow.Update{Workflow: &workflow.Workflow{ID: "wf-2", Symbol: "HTBX", State: states.Quoting, Quantity: 300}})
	b.Update(workflow.Update{Workflow: &workflow.Workflow{ID: "wf-1", Symbol: "HTBX", State: states.Filled, Quantity: 100,
		Price: decimal.RequireFromString("0.015")}, Reason: "filled"})
	b.Close(nil)
	frames := strings.Split(buf.String(), "\x1b[4A") // each redraw moves up over header + 3 rows
	if len(frames) != 4 {
		t.Fatalf("%d frames, want 4 (the first and three redraws)", len(frames))
	}
	last := strings.Split(strings.TrimSpace(frames[len(frames)-1]), "\n")
	want := []string{"HTBX 100 filled 100 0.0150 filled", "HTBY 200 checking", "HTBX 300 quoting 300"}
	for i, w := range want {
		if got := strings.Join(strings.Fields(strings.ReplaceAll(last[i+1], "\x1b[2K", "")), " "); got != w {
			t.Errorf("row %d: %q, want %q", i, got, w)
		}
	}
}
