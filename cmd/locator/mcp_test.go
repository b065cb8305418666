package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/brokersim"
	"github.com/locatorhq/locator/internal/mcpserver"
)

// agentSession is the SDK's own client running `locator mcp` (the built
// binary) over stdio, beside the bundle's simulator.
type agentSession struct {
	*mcp.ClientSession
	pid int
}

// startMCP runs `locator mcp` with extra arguments under an MCP client
// of the current protocol that cannot ask its person.
func (b *ownerBundle) startMCP(t *testing.T, args ...string) *agentSession {
	t.Helper()
	return b.startAgent(t, nil, "", args...)
}

// startAgent runs `locator mcp` with extra arguments under an MCP client
// with opts, speaking protocol version (empty: the SDK's latest).
func (b *ownerBundle) startAgent(t *testing.T, opts *mcp.ClientOptions, version string, args ...string) *agentSession {
	t.Helper()
	cmd := b.command(context.Background(), append([]string{"mcp"}, args...)...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test agent", Version: "v0"}, opts).Connect(t.Context(), &mcp.CommandTransport{Command: cmd},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("locator mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return &agentSession{ClientSession: cs, pid: cmd.Process.Pid}
}

// call calls tool and returns whether it was a tool error, its text, and
// the broker writes (anything but a GET) it caused, from the simulator's
// /_sim/requests log; its structured content, an error's too, is decoded
// into out.
func (a *agentSession) call(t *testing.T, b *ownerBundle, tool string, args map[string]any, out any) (bool, string, []string) {
	t.Helper()
	return a.callTracked(t, b, &mcp.CallToolParams{Name: tool, Arguments: args}, out)
}

// callTracked is call of params, which may carry a progress token.
func (a *agentSession) callTracked(t *testing.T, b *ownerBundle, params *mcp.CallToolParams, out any) (bool, string, []string) {
	t.Helper()
	from := len(b.requests(t))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second) // a hang guard
	defer cancel()
	res, err := a.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if out != nil && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: output %s: %v", params.Name, raw, err)
		}
	}
	var writes []string
	for _, r := range b.writesAfter(t, from) {
		writes = append(writes, r.Method+" "+writeKind(r))
	}
	return res.IsError, strings.Join(text, "\n"), writes
}

// writeKind names a locate write by its route: quote, accept or cancel.
func writeKind(r brokersim.RequestRecord) string {
	for _, k := range []string{"quote", "accept", "cancel", "sell"} {
		if strings.Contains(r.Path, "/locates/"+k) {
			return k
		}
	}
	return r.Path
}

// Done when: an MCP client runs `locator mcp` over stdio against
// a `locator sim` subprocess, with `locator serve` owning the account (the
// mcp process follows it) and without (the mcp process owns it), and
// judges from the simulator's request log: the first tools are listed,
// quote is one quote and its cancel with no accept, locate without
// max_price is a tool error with nothing sent, locate under a cap fills
// with one accept (shares, quantity's old name, still taken), a cap below
// the offer declines (its offer cancelled; a tool error of kind declined).
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 6)
	// Each phase its own symbols: a symbol quoted again within 30 s waits
	// its turn (spec "Locate limits").
	for i, phase := range []struct {
		name  string
		serve bool
	}{{"owning", false}, {"following serve", true}} {
		t.Run(phase.name, func(t *testing.T) {
			owner := 0
			if phase.serve {
				owner = b.serve(t).Process.Pid
			}
			a := b.startMCP(t)
			if owner == 0 {
				owner = a.pid
			}
			sym := func(n int) string { return fmt.Sprintf("OW%02d", 3*i+n) }

			a.firstToolsListed(t)
			var st struct{ Owner string }
			if isErr, text, _ := a.call(t, b, "status", nil, &st); isErr || !strings.Contains(st.Owner, fmt.Sprintf("owned by pid %d ", owner)) {
				t.Errorf("status: %q (%s), want the account owned by pid %d", st.Owner, text, owner)
			}

			var q struct {
				Quotes []struct{ Symbol, State, PricePerShare, Total string }
			}
			isErr, text, writes := a.call(t, b, "quote", map[string]any{"symbols": []string{sym(0)}, "shares": 300}, &q)
			if isErr || len(q.Quotes) != 1 || q.Quotes[0].State != "priced" || q.Quotes[0].PricePerShare != "0.0100" || q.Quotes[0].Total != "3.00" {
				t.Errorf("quote: %+v (%s), want %s priced at 0.0100, 3.00", q.Quotes, text, sym(0))
			}
			if want := []string{"POST quote", "DELETE cancel"}; !slices.Equal(writes, want) {
				t.Errorf("quote sent %v, want %v", writes, want)
			}

			isErr, text, writes = a.call(t, b, "locate", map[string]any{"symbol": sym(1), "shares": 300}, nil)
			if !isErr || !strings.Contains(text, "max_price") || len(writes) != 0 {
				t.Errorf("locate without max_price: error %v %q, sent %v; want a tool error naming max_price, nothing sent", isErr, text, writes)
			}

			var loc struct {
				Locate struct {
					State, PricePerShare string
					Shares               int64
				}
			}
			isErr, text, writes = a.call(t, b, "locate", map[string]any{"symbol": sym(1), "shares": 300, "max_price": "0.02"}, &loc)
			if isErr || loc.Locate.State != "filled" || loc.Locate.Shares != 300 || loc.Locate.PricePerShare != "0.0100" {
				t.Errorf("locate under the cap: %+v (%s), want filled, 300 at 0.0100", loc.Locate, text)
			}
			if want := []string{"POST quote", "POST accept"}; !slices.Equal(writes, want) {
				t.Errorf("locate under the cap sent %v, want %v", writes, want)
			}

			var dec struct {
				Locate struct{ State, Outcome string }
				Error  struct{ Kind string }
			}
			isErr, text, writes = a.call(t, b, "locate", map[string]any{"symbol": sym(2), "shares": 300, "max_price": "0.005"}, &dec)
			if !isErr || dec.Error.Kind != "declined" || dec.Locate.State != "declined" || !strings.Contains(dec.Locate.Outcome, "cost policy") {
				t.Errorf("locate over the cap: error %v, %+v (%s), want a tool error of kind declined, declined by the cost policy", isErr, dec, text)
			}
			if want := []string{"POST quote", "DELETE cancel"}; !slices.Equal(writes, want) {
				t.Errorf("locate over the cap sent %v, want %v", writes, want)
			}
			if err := a.Close(); err != nil {
				t.Errorf("locator mcp at the end of stdin: %v", err)
			}
		})
	}
}

// firstToolsListed checks that the first tools, which agents in use
// call, are still listed.
func (a *agentSession) firstToolsListed(t *testing.T) {
	t.Helper()
	res, err := a.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"quote", "shortable", "locate", "status", "credit_back", "inventory"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v: no %s", names, want)
		}
	}
}

// Spec "Authentication", API keys rule 5, through `locator mcp`: an agent
// whose settings mean paper against live LV100001 is refused, nothing
// sent: by the owner with `locator serve` running (a tool error), and at
// the start without one (exit 2 once stdin closes, as any command;
// meanwhile the agent's client initializes, lists the tools, and each call
// is a tool error saying why, where it used to see the connection closed).
func TestMCPPaperAgainstLive(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 1)
	code, out := b.run(t, []string{"LOCATOR_ENV=paper"}, "mcp")
	if code != 2 || !strings.Contains(out, "nothing was sent") {
		t.Errorf("locator mcp --env paper without an owner: exit %d %q, want exit 2 saying nothing was sent", code, out)
	}
	refused := b.startMCP(t, "--env", "paper")
	if tools, err := refused.ListTools(t.Context(), nil); err != nil || len(tools.Tools) != len(mcpserver.ToolNames(false)) {
		t.Errorf("tools/list of the refused account: %v %v, want every tool", tools, err)
	}
	isErr, text, writes := refused.call(t, b, "inventory", map[string]any{}, nil)
	if !isErr || !strings.Contains(text, "paper") || !strings.Contains(text, "nothing was sent") || len(writes) != 0 {
		t.Errorf("inventory of the refused account: error %v %q, sent %v; want refused saying why, nothing sent", isErr, text, writes)
	}
	b.serve(t)
	a := b.startMCP(t, "--env", "paper")
	isErr, text, writes = a.call(t, b, "locate", map[string]any{"symbol": "OW00", "shares": 300, "max_price": "0.02"}, nil)
	if !isErr || !strings.Contains(text, "nothing was sent") || len(writes) != 0 {
		t.Errorf("locate meaning paper: error %v %q, sent %v; want refused, nothing sent", isErr, text, writes)
	}
}

// An agent that cancels a locate mid-flight (the SDK's
// client sends notifications/cancelled when the call's context ends) ends
// its workflow as Ctrl-C ends a command's: withdrawn, nothing left open
// at the broker; and `locator mcp`, owning the account, keeps serving: the
// next calls answer (it used to die on the cancelled call's nil outcome,
// and the account's owner with it).
func TestMCPCancelledLocateLeavesTheServerServing(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 1)
	a := b.startMCP(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "locate", Arguments: map[string]any{"symbol": "OW00", "shares": 100, "max_price": "0.02"}})
		done <- err
	}()
	b.waitFor(t, "quote of OW00", quoteOf("OW00"))
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call answered as if it ran to its end")
	}
	// The same process answers the next calls, and the workflow ends.
	waitFor(t, "the cancelled locate's end", func() bool {
		var st struct {
			Open []any `json:"open"`
		}
		if isErr, text, _ := a.call(t, b, "status", map[string]any{}, &st); isErr {
			t.Fatalf("status after the cancelled call: %s", text)
		}
		return len(st.Open) == 0
	})
	if isErr, text, _ := a.call(t, b, "inventory", map[string]any{}, nil); isErr {
		t.Errorf("inventory after the cancelled call: %s", text)
	}
	b.workflows(t) // every one final
	b.noBrokerTrouble(t)
}

// An agent's day over stdio with the person behind it on an MCP client of
// an earlier protocol (2025-06-18, as the TypeScript SDK and inspector
// speak it), asked through ServerSession.Elicit: account, a locate with
// progress notifications, a short the person confirms (filled), a cover
// the person declines (nothing sent, judged from the simulator's log),
// positions, spend and a credit-back. Spec sections "Accounts and profit
// and loss", "Orders", "Positions", "Short locates".
func TestMCPAgentDayOverStdio(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	var asked []string // the elicitation handler runs on the client's goroutine, one call at a time
	var mu sync.Mutex
	progress := make(chan string, 256)
	a := b.startAgent(t, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if asked = append(asked, r.Params.Message); len(asked) == 1 {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params.Message },
	}, "2025-06-18")

	var acct struct{ Account, Env, BuyingPower string }
	if isErr, text, _ := a.call(t, b, "account", nil, &acct); isErr || acct.Account != "LV100001" || acct.Env != "live" || acct.BuyingPower == "" {
		t.Fatalf("account: %+v (%s)", acct, text)
	}
	locate := &mcp.CallToolParams{Name: "locate", Arguments: map[string]any{"symbol": "HTBX", "quantity": 300, "max_price": "0.02"}}
	locate.SetProgressToken("stdio-locate")
	if isErr, text, writes := a.callTracked(t, b, locate, nil); isErr || !slices.Equal(writes, []string{"POST quote", "POST accept"}) {
		t.Fatalf("locate: error %v %s, sent %v; want filled with a quote and an accept", isErr, text, writes)
	}
	waitProgress(t, progress, "→ filled")

	var short struct{ Order struct{ State string } }
	isErr, text, writes := a.call(t, b, "short", map[string]any{"symbol": "HTBX", "quantity": 100, "limit_price": "12.40", "ref_price": "12.50", "max_price": "0.02"}, &short)
	if isErr || short.Order.State != "filled" || len(writes) != 1 || !strings.HasSuffix(writes[0], "/order") {
		t.Errorf("short the person confirmed: error %v %s, %+v, sent %v; want one order, filled", isErr, text, short, writes)
	}
	var cover struct{ Error struct{ Kind string } }
	isErr, text, writes = a.call(t, b, "cover", map[string]any{"symbol": "HTBX", "quantity": 100, "limit_price": "12.60"}, &cover)
	if !isErr || cover.Error.Kind != "not_confirmed" || len(writes) != 0 {
		t.Errorf("cover the person declined: error %v %s, kind %q, sent %v; want not_confirmed, nothing sent", isErr, text, cover.Error.Kind, writes)
	}
	mu.Lock()
	if len(asked) != 2 || !strings.Contains(asked[0], "Sell short 100 HTBX at 12.40") || !strings.Contains(asked[1], "Buy to cover 100 HTBX at 12.60") {
		t.Errorf("questions %q, want the short's, then the cover's", asked)
	}
	mu.Unlock()

	var pos struct {
		Positions []struct{ Symbol, Side string }
	}
	if isErr, text, _ := a.call(t, b, "positions", nil, &pos); isErr || !slices.Contains(pos.Positions, struct{ Symbol, Side string }{"HTBX", "Short"}) {
		t.Errorf("positions: %+v (%s), want HTBX short", pos, text)
	}
	var spend struct{ Spend string }
	if isErr, text, _ := a.call(t, b, "spend", nil, &spend); isErr || spend.Spend != "4.50" {
		t.Errorf("spend: %+v (%s), want the locate's 4.50", spend, text)
	}
	if isErr, text, writes := a.call(t, b, "credit_back", map[string]any{"symbol": "HTBX", "quantity": 100}, nil); isErr || !slices.Equal(writes, []string{"POST sell"}) {
		t.Errorf("credit_back: error %v %s, sent %v; want one sell", isErr, text, writes)
	}
	b.workflows(t) // every one final
	b.noBrokerTrouble(t)
}

// waitProgress waits for a progress message holding want.
func waitProgress(t *testing.T, progress <-chan string, want string) {
	t.Helper()
	var seen []string
	for {
		select {
		case m := <-progress:
			if seen = append(seen, m); strings.Contains(m, want) {
				return
			}
		case <-time.After(time.Minute): // a hang guard: the notifications came before the call's answer
			t.Fatalf("no progress saying %q; saw %q", want, seen)
		}
	}
}

// `locator mcp --read-only` lists only the tools that change nothing, and
// a call of another is refused as an unknown tool, nothing sent;
// `--tools` naming a tool there is not, or a write tool with --read-only,
// is refused at the start (exit 2) with the tools there are.
func TestMCPReadOnlyAndTools(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 0)
	a := b.startMCP(t, "--read-only")
	res, err := a.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if want := mcpserver.ToolNames(true); !slices.Equal(names, want) {
		t.Errorf("--read-only lists %v, want %v", names, want)
	}
	from := len(b.requests(t))
	if _, err := a.CallTool(t.Context(), &mcp.CallToolParams{Name: "short", Arguments: map[string]any{"symbol": "HTBX", "quantity": 100,
		"limit_price": "12.40", "ref_price": "12.50", "max_price": "0.02", "confirmed": true}}); err == nil || !strings.Contains(err.Error(), "short") {
		t.Errorf("short on a read-only server: %v, want refused as an unknown tool", err)
	}
	if w := b.writesAfter(t, from); len(w) != 0 {
		t.Errorf("the refused short sent %v", w)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--tools", "quote,sell"}, "no tool named sell: the tools are account, approve,"},
		{[]string{"mcp", "--read-only", "--tools", "orders,cancel"}, "cancel change the account, and read-only serves only account,"},
	} {
		if code, out := b.run(t, nil, c.args...); code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d %q, want exit 2 saying %q", c.args, code, out, c.want)
		}
	}
}
