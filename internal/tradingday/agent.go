package tradingday

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/internal/mcpserver"
)

// abandonMCP is the cancel-call operation made by an agent: `locator mcp`
// as a follower process of daemon d (its MCP server on a wire.Client over
// the owner's socket), and the Go SDK's MCP client on the other end of
// the transport. The agent calls locate under a cap with a progress
// token, and cancels the call op.Wait of virtual time after the first
// progress notification (which names the workflow), as a host does when
// its user stops it: the SDK sends notifications/cancelled and the
// server's handler withdraws the locate as Ctrl-C does in the CLI. The
// same session's next call (status of that workflow) must be answered
// (owner-serves-after-cancel: the server did not die with the call), and
// the locate, followed from another shell, ends final and agrees with
// the broker.
func (r *runner) abandonMCP(ctx context.Context, d *daemon, op Op) (string, error) {
	sh, err := r.shell(d, "an agent's MCP server", nil)
	if err != nil {
		return "", err
	}
	defer sh.Close()
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(sh, "days", mcpserver.Options{Clock: r.clk}).Connect(ctx, serverEnd, nil)
	if err != nil {
		return "", err
	}
	defer ss.Close()
	named := make(chan string, 1) // the workflow the first notification names
	client := mcp.NewClient(&mcp.Implementation{Name: "a day's agent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, p *mcp.ProgressNotificationClientRequest) {
			// "HTBX wf-…: quoting → offered …"
			if f := strings.Fields(p.Params.Message); len(f) > 1 {
				select {
				case named <- strings.TrimSuffix(f[1], ":"):
				default:
				}
			}
		}})
	cs, err := client.Connect(ctx, clientEnd, nil)
	if err != nil {
		return "", err
	}
	defer cs.Close()
	id, called, err := r.callAndCancel(ctx, cs, op, named)
	if err != nil || id == "" {
		return called, err
	}
	if v := r.answersAfterCancel(ctx, cs, id, op.Symbols[0]); v != nil {
		return called, v
	}
	words, err := r.servesAfterCancel(ctx, d, id, op.Symbols[0])
	return called + words, err
}

// callAndCancel calls the locate tool of op and cancels the call op.Wait
// after its first progress notification; it returns the workflow that
// notification named ("" when the locate was refused before it started)
// and what came of the call.
func (r *runner) callAndCancel(ctx context.Context, cs *mcp.ClientSession, op Op, named <-chan string) (string, string, error) {
	params := &mcp.CallToolParams{Name: "locate", Arguments: map[string]any{
		"symbol": op.Symbols[0], "quantity": op.Quantity, "max_price": "0.10", "allow_single_use": op.SingleUse}}
	params.SetProgressToken("locate")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(cctx, params)
		answered <- answer{res, err}
	}()
	var id string
	select {
	case id = <-named:
	case a := <-answered:
		// Refused before it started: nothing to cancel.
		return "", "mcp locate answered before any progress: " + toolText(a.res, a.err), nil
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
	if err := r.sleep(ctx, op.Wait); err != nil {
		return "", "", err
	}
	cancel()
	a := <-answered
	switch {
	case errors.Is(a.err, context.Canceled):
		return id, fmt.Sprintf("mcp locate %s cancelled mid-flight; ", id), nil
	case a.err != nil:
		return "", "", fmt.Errorf("mcp locate %s: %w", id, a.err)
	}
	return id, fmt.Sprintf("mcp locate %s ended before the cancel; ", id), nil
}

// answersAfterCancel calls status of workflow id on the session whose
// locate call was cancelled: the server answers it.
func (r *runner) answersAfterCancel(ctx context.Context, cs *mcp.ClientSession, id, symbol string) *Violation {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "status", Arguments: map[string]any{"id": id}})
	if err == nil && !res.IsError {
		var out mcpserver.StatusOutput
		raw, _ := json.Marshal(res.StructuredContent)
		if err = json.Unmarshal(raw, &out); err == nil && (out.Workflow == nil || out.Workflow.ID != id) {
			err = fmt.Errorf("status answered %s", raw)
		}
	}
	if err == nil && res.IsError {
		err = errors.New(toolText(res, nil))
	}
	if err != nil {
		return &Violation{Invariant: "owner-serves-after-cancel", Detail: fmt.Sprintf("%s (%s): after its locate call was cancelled, the MCP server's next call (status) failed: %v", id, symbol, err)}
	}
	return nil
}

// toolText is what a tool call came to, in words.
func toolText(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return err.Error()
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if res.IsError {
		return "error: " + strings.Join(text, " ")
	}
	return strings.Join(text, " ")
}
