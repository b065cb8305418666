package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/brokersim"
)

// agentSession is the SDK's own client running `locator mcp` (the built
// binary) over stdio, beside the bundle's simulator.
type agentSession struct {
	*mcp.ClientSession
	pid int
}

// startMCP runs `locator mcp` with extra arguments under an MCP client.
func (b *ownerBundle) startMCP(t *testing.T, args ...string) *agentSession {
	t.Helper()
	cmd := b.command(context.Background(), append([]string{"mcp"}, args...)...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test agent", Version: "v0"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("locator mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return &agentSession{ClientSession: cs, pid: cmd.Process.Pid}
}

// call calls tool and returns whether it was a tool error, its text, and
// the broker writes (anything but a GET) it caused, from the simulator's
// /_sim/requests log.
func (a *agentSession) call(t *testing.T, b *ownerBundle, tool string, args map[string]any, out any) (bool, string, []string) {
	t.Helper()
	from := len(b.requests(t))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
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
// judges from the simulator's request log: the five tools are listed,
// quote is one quote and its cancel with no accept, locate without
// max_price is a tool error with nothing sent, locate under a cap fills
// with one accept, a cap below the offer declines (its offer cancelled).
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

			res, err := a.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"quote", "shortable", "locate", "status", "credit_back"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools %v: no %s", names, want)
				}
			}

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
			}
			isErr, text, writes = a.call(t, b, "locate", map[string]any{"symbol": sym(2), "shares": 300, "max_price": "0.005"}, &dec)
			if isErr || dec.Locate.State != "declined" || !strings.Contains(dec.Locate.Outcome, "cost policy") {
				t.Errorf("locate over the cap: %+v (%s), want declined by the cost policy", dec.Locate, text)
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

// Spec "Authentication", API keys rule 5, through `locator mcp`: an agent
// whose settings mean paper against live LV100001 is refused, nothing
// sent: by the owner with `locator serve` running (a tool error), and at
// the start without one (exit 2 once stdin closes, as any command; issue
// 37 item 3: meanwhile the agent's client initializes, lists the tools,
// and each call is a tool error saying why, where it used to see the
// connection closed).
func TestMCPPaperAgainstLive(t *testing.T) {
	t.Parallel()
	b := setupOwners(t, 1)
	code, out := b.run(t, []string{"LOCATOR_ENV=paper"}, "mcp")
	if code != 2 || !strings.Contains(out, "nothing was sent") {
		t.Errorf("locator mcp --env paper without an owner: exit %d %q, want exit 2 saying nothing was sent", code, out)
	}
	refused := b.startMCP(t, "--env", "paper")
	if tools, err := refused.ListTools(t.Context(), nil); err != nil || len(tools.Tools) != 6 {
		t.Errorf("tools/list of the refused account: %v %v, want the 6 tools", tools, err)
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
