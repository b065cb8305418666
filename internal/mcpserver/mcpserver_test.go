package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/engine"
	"github.com/locatorhq/locator/internal/console"
	"github.com/locatorhq/locator/internal/mcpserver"
	"github.com/locatorhq/locator/internal/service"
	"github.com/locatorhq/locator/internal/store"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/simtest"
)

// agent is an MCP client connected over the SDK's in-process transports
// to the server of LV100001 (live), which this process owns on the
// simulator's fake clock.
type agent struct {
	sim     *simtest.Bundle
	session *mcp.ClientSession
}

// connect owns the account and serves it to an MCP client as caller c
// sees it (c.Ask is never set: an agent cannot be asked).
func connect(t *testing.T, c account.Caller) *agent {
	t.Helper()
	sim := simtest.New(t)
	db := filepath.Join(t.TempDir(), "locator.db")
	st, err := store.Open(t.Context(), db, sim.Clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	run, err := os.MkdirTemp("", "lm") // a socket's path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	// Virtual time runs while the engine's poller and dispatcher wait on it.
	sim.RunClockWhen(t, 2)
	o, err := service.Own(t.Context(), service.OwnerConfig{
		Engine: engine.Config{Client: sim.Client(t, sim.Live), Store: st, Clock: sim.Clock, Account: "LV100001", Env: brokerclient.EnvLive},
		DB:     db, BaseURL: sim.URL, RuntimeDir: run, Role: wire.RoleCommand,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	server := mcpserver.New(o.Local().As(c), "test")
	st1, st2 := mcp.NewInMemoryTransports()
	ctx := t.Context()
	ss, err := server.Connect(ctx, st1, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test agent", Version: "v0"}, nil).Connect(ctx, st2, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &agent{sim: sim, session: cs}
}

// call calls tool with args, decoding its structured output into out
// (when the call did not fail) and returning whether it was a tool error
// and its text.
func (a *agent) call(t *testing.T, tool string, args map[string]any, out any) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := a.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if !res.IsError && out != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: output %s: %v", tool, raw, err)
		}
	}
	return res.IsError, strings.Join(text, "\n")
}

// count counts the simulator's requests of method whose path holds part.
func (a *agent) count(method, part string) int {
	n := 0
	for _, r := range a.sim.Sim.Requests() {
		if r.Method == method && strings.Contains(r.Path, part) {
			n++
		}
	}
	return n
}

// writes counts the requests that changed something at the broker.
func (a *agent) writes() int {
	n := 0
	for _, r := range a.sim.Sim.Requests() {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/_sim/") {
			n++
		}
	}
	return n
}

const (
	quotes  = "/locates/quote"
	accepts = "/locates/accept"
	cancels = "/locates/cancel/"
)

// The server lists its tools, each with an input schema from its Go
// struct (locate's requires max_price), the reads hinted read-only and
// the others not.
func TestToolsListed(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	res, err := a.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s: input schema %v, output schema %v", tool.Name, tool.InputSchema, tool.OutputSchema)
		}
		readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
		if want := tool.Name == "shortable" || tool.Name == "status" || tool.Name == "inventory"; readOnly != want {
			t.Errorf("%s: read-only hint %v, want %v", tool.Name, readOnly, want)
		}
		if tool.Name == "locate" {
			raw, _ := json.Marshal(tool.InputSchema)
			var schema struct{ Required []string }
			json.Unmarshal(raw, &schema)
			if !slices.Contains(schema.Required, "max_price") {
				t.Errorf("locate's input schema requires %v, want max_price among them: %s", schema.Required, raw)
			}
		}
	}
	slices.Sort(names)
	if want := []string{"credit_back", "inventory", "locate", "quote", "shortable", "status"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// Spec "Short locates": a quote is a price check: the broker's offer
// comes back as a decimal string, and is cancelled; one quote, one
// cancel, no accept.
func TestQuoteCommitsNothing(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	var out struct {
		Quotes []struct {
			Symbol, State, LocateType, PricePerShare, Total string
		}
	}
	if isErr, text := a.call(t, "quote", map[string]any{"symbols": []string{"htbx"}, "shares": 300}, &out); isErr {
		t.Fatalf("quote failed: %s", text)
	}
	if len(out.Quotes) != 1 || out.Quotes[0].Symbol != "HTBX" || out.Quotes[0].State != "priced" ||
		out.Quotes[0].PricePerShare != "0.0150" || out.Quotes[0].Total != "4.50" || out.Quotes[0].LocateType != "Locate" {
		t.Errorf("quotes %+v, want HTBX priced Locate at 0.0150, 4.50 for 300", out.Quotes)
	}
	if q, c, acc := a.count("POST", quotes), a.count("DELETE", cancels), a.count("POST", accepts); q != 1 || c != 1 || acc != 0 {
		t.Errorf("%d quotes, %d cancels, %d accepts; want 1, 1, 0", q, c, acc)
	}
}

// An agent never takes an uncapped offer: a locate without max_price (or
// with an empty or bad one) is a tool error, and nothing is sent (the
// owner's own poller reads on meanwhile).
func TestLocateWithoutCapSendsNothing(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	before := a.writes()
	for name, args := range map[string]map[string]any{
		"missing": {"symbol": "HTBX", "shares": 300},
		"empty":   {"symbol": "HTBX", "shares": 300, "max_price": ""},
		"zero":    {"symbol": "HTBX", "shares": 300, "max_price": "0"},
		"word":    {"symbol": "HTBX", "shares": 300, "max_price": "cheap"},
	} {
		isErr, text := a.call(t, "locate", args, nil)
		if !isErr || !strings.Contains(text, "max_price") {
			t.Errorf("%s max_price: error %v %q, want a tool error naming max_price", name, isErr, text)
		}
	}
	if n := a.writes() - before; n != 0 {
		t.Errorf("%d writes reached the broker, want 0", n)
	}
}

// docs/design.md rule 8 through the tools: bad input is a tool error
// saying nothing was sent, checked here or by the owner, and nothing is.
func TestBadInputSendsNothing(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"quote", map[string]any{"symbols": []string{}}},
		{"quote", map[string]any{"symbols": []string{"not a symbol"}}},
		{"quote", map[string]any{"symbols": []string{"HTBX"}, "shares": 250}},
		{"locate", map[string]any{"symbol": "HTBX", "shares": 250, "max_price": "0.02"}},
		{"locate", map[string]any{"symbol": "HT BX", "shares": 300, "max_price": "0.02"}},
		{"locate", map[string]any{"symbol": "HTBX", "shares": 300, "max_price": "0.02", "max_cost": "-1"}},
		{"credit_back", map[string]any{"symbol": "HTBX", "shares": 100, "type": "locate"}},
		{"shortable", map[string]any{"symbols": []string{"$$$"}}},
	} {
		if isErr, text := a.call(t, c.tool, c.args, nil); !isErr || !strings.Contains(text, "nothing was sent") {
			t.Errorf("%s %v: error %v %q, want a tool error saying nothing was sent", c.tool, c.args, isErr, text)
		}
	}
	if n := a.writes(); n != 0 {
		t.Errorf("%d writes reached the broker, want 0", n)
	}
}

// A locate under its cap fills with one quote and one accept; its status
// reads filled afterwards.
func TestLocateUnderCapFills(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	var out struct{ Locate mcpserver.Workflow }
	if isErr, text := a.call(t, "locate", map[string]any{"symbol": "HTBX", "shares": 300, "max_price": "0.02"}, &out); isErr {
		t.Fatalf("locate failed: %s", text)
	}
	if w := out.Locate; w.State != "filled" || w.Shares != 300 || w.PricePerShare != "0.0150" || w.Total != "4.50" || w.Exit != console.ExitOK {
		t.Errorf("locate %+v, want filled, 300 at 0.0150 = 4.50, exit 0", w)
	}
	if q, acc := a.count("POST", quotes), a.count("POST", accepts); q != 1 || acc != 1 {
		t.Errorf("%d quotes, %d accepts; want 1, 1", q, acc)
	}
	var st struct{ Workflow *mcpserver.Workflow }
	if isErr, text := a.call(t, "status", map[string]any{"id": out.Locate.ID}, &st); isErr || st.Workflow == nil || st.Workflow.State != "filled" {
		t.Errorf("status %s: %+v (%s), want filled", out.Locate.ID, st.Workflow, text)
	}
}

// An offer above max_price is declined by the cost policy (exit 4 in
// the outcome) and cancelled at the broker: no accept.
func TestLocateAboveCapDeclined(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	var out struct{ Locate mcpserver.Workflow }
	if isErr, text := a.call(t, "locate", map[string]any{"symbol": "HTBY", "shares": 200, "max_price": "0.01"}, &out); isErr {
		t.Fatalf("locate failed: %s", text)
	}
	if w := out.Locate; w.State != "declined" || w.Exit != console.ExitDeclined || !strings.Contains(w.Outcome, "declined by the cost policy") {
		t.Errorf("locate %+v, want declined by the cost policy, exit 4", w)
	}
	if q, c, acc := a.count("POST", quotes), a.count("DELETE", cancels), a.count("POST", accepts); q != 1 || c != 1 || acc != 0 {
		t.Errorf("%d quotes, %d cancels, %d accepts; want 1, 1, 0", q, c, acc)
	}
}

// Spec "Authentication", API keys rule 5: an agent whose settings mean
// paper is refused every write on a live account, nothing sent.
func TestPaperAgainstLiveRefused(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent", Env: brokerclient.EnvPaper})
	for tool, args := range map[string]map[string]any{
		"locate":      {"symbol": "HTBX", "shares": 300, "max_price": "0.02"},
		"quote":       {"symbols": []string{"HTBX"}},
		"credit_back": {"symbol": "HTBX", "shares": 100},
	} {
		if isErr, text := a.call(t, tool, args, nil); !isErr || !strings.Contains(text, "nothing was sent") {
			t.Errorf("%s: error %v %q, want refused, saying nothing was sent", tool, isErr, text)
		}
	}
	if n := a.writes(); n != 0 {
		t.Errorf("%d writes reached the broker, want 0", n)
	}
}

// Located shares come back by credit_back (one inventory row's shares),
// and the inventory tool reads the row as the broker has it.
func TestCreditBackAndInventory(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	if isErr, text := a.call(t, "locate", map[string]any{"symbol": "HTBX", "shares": 300, "max_price": "0.02"}, nil); isErr {
		t.Fatalf("locate failed: %s", text)
	}
	var out struct {
		CreditBacks []mcpserver.Workflow `json:"credit_backs"`
	}
	if isErr, text := a.call(t, "credit_back", map[string]any{"symbol": "HTBX", "shares": 100}, &out); isErr {
		t.Fatalf("credit_back failed: %s", text)
	}
	if len(out.CreditBacks) != 1 || out.CreditBacks[0].State != "credited" || out.CreditBacks[0].Shares != 100 {
		t.Errorf("credit-backs %+v, want one credited, 100 shares", out.CreditBacks)
	}
	if n := a.count("POST", "/locates/sell"); n != 1 {
		t.Errorf("%d sells, want 1", n)
	}
	var inv mcpserver.InventoryOutput
	if isErr, text := a.call(t, "inventory", nil, &inv); isErr {
		t.Fatalf("inventory failed: %s", text)
	}
	i := slices.IndexFunc(inv.Inventory, func(r brokerclient.InventoryRow) bool { return r.Symbol == "HTBX" && r.LocateType <= 2 })
	if i < 0 || inv.Inventory[i].Available+inv.Inventory[i].ToBeSold+inv.Inventory[i].Sold != 300 || inv.Inventory[i].Available > 200 {
		t.Errorf("inventory %+v, want HTBX's Locate row: 300 located, 100 of them credited back", inv.Inventory)
	}
}

// shortable tells whether each symbol is easy to borrow, from the
// owner's view, with the last offers seen (a price check's, here) and
// when; it sends no quote of its own.
func TestShortable(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	if isErr, text := a.call(t, "quote", map[string]any{"symbols": []string{"HTBX"}, "shares": 300}, nil); isErr {
		t.Fatalf("quote failed: %s", text)
	}
	var out struct {
		Symbols []struct {
			Symbol       string
			EasyToBorrow bool
			Offers       []struct{ PricePerShare string }
			OfferedAt    time.Time
			OfferState   string
		}
	}
	if isErr, text := a.call(t, "shortable", map[string]any{"symbols": []string{"AAPL", "HTBX"}}, &out); isErr {
		t.Fatalf("shortable failed: %s", text)
	}
	if len(out.Symbols) != 2 || out.Symbols[0].Symbol != "AAPL" || !out.Symbols[0].EasyToBorrow || out.Symbols[1].EasyToBorrow {
		t.Fatalf("shortable %+v, want AAPL easy to borrow, HTBX not", out.Symbols)
	}
	if h := out.Symbols[1]; len(h.Offers) != 1 || h.Offers[0].PricePerShare != "0.0150" || h.OfferedAt.IsZero() || h.OfferState != "priced" {
		t.Errorf("HTBX %+v, want the price check's offer at 0.0150, when, and priced", h)
	}
	if n := a.count("POST", quotes); n != 1 {
		t.Errorf("%d quotes, want the price check's 1", n)
	}
}

// status without an id is the account as its owner sees it: here this
// process owns it, running, with nothing open.
func TestStatusOfTheAccount(t *testing.T) {
	t.Parallel()
	a := connect(t, account.Caller{Name: "test agent"})
	var out mcpserver.StatusOutput
	if isErr, text := a.call(t, "status", nil, &out); isErr {
		t.Fatalf("status failed: %s", text)
	}
	if out.Account != "LV100001" || out.Env != "live" || !out.Running || len(out.Open) != 0 ||
		!strings.Contains(out.Owner, fmt.Sprintf("account LV100001 is owned by pid %d on ", os.Getpid())) {
		t.Errorf("status %+v, want LV100001 live, owned by this process, running, nothing open", out)
	}
	if isErr, text := a.call(t, "status", map[string]any{"id": "wf-none"}, nil); !isErr || !strings.Contains(text, "wf-none") {
		t.Errorf("status of an unknown id: error %v %q, want a tool error naming it", isErr, text)
	}
}
