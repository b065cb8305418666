package mcpserver

// The questions the CLI puts to a person (an order to send, an offer to
// approve), put to the person behind an agent's client by MCP
// elicitation, before anything is sent.
//
// A tool that needs a yes returns the question as the input its call
// requires (CallToolResult.InputRequests, the protocol's multi round-trip
// requests): a client of the current protocol asks its person and calls
// again with the answer; for a client of an earlier one the SDK asks
// through ServerSession.Elicit and calls the handler again itself. Either
// way the handler runs twice and keeps nothing between: the answer comes
// back with the request state, a signature of the question's words, and
// is taken only when the words the call would be asked now are the same
// (the same order, the same offer at the same price).

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/account"
)

// confirmID names the one question a call puts: its answer comes back
// under it.
const confirmID = "confirm"

// kindNotConfirmed is the kind of a call the person said no to.
const kindNotConfirmed = "not_confirmed"

// confirmSchema is the form of the question: one yes or no.
var confirmSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"confirm": {Type: "boolean", Title: "Send it", Description: "yes sends it as described; no sends nothing"},
	},
	Required: []string{"confirm"},
}

// inputRequired is a call that needs an answer first: res carries the
// question.
type inputRequired struct{ res *mcp.CallToolResult }

func (*inputRequired) Error() string { return "a question for the person behind the client" }

// confirm has the person behind the agent's client say yes to what,
// unless the call says they did (confirmed). It is nil to go on; an
// *inputRequired to put the question; an error, nothing sent, when the
// client cannot ask (no elicitation capability), the person said no, or
// the answer was to another question than this call would put.
func (c *call) confirm(confirmed bool, what string) error {
	if confirmed {
		return nil
	}
	p := c.req.Params
	if ans, ok := p.InputResponses[confirmID].(*mcp.ElicitResult); ok {
		if !hmac.Equal([]byte(p.RequestState), []byte(c.t.sign(what))) {
			return account.Errorf(account.KindChanged, "the answer was to another question than this call's ("+what+"): look again; nothing was sent")
		}
		if ans.Action == "accept" && ans.Content["confirm"] == true {
			return nil
		}
		return &ended{kind: kindNotConfirmed, words: "not confirmed by the person: " + what + "; nothing was sent"}
	}
	if caps := c.req.ClientCapabilities(); caps == nil || caps.Elicitation == nil || (caps.Elicitation.Form == nil && caps.Elicitation.URL != nil) {
		return account.Errorf(account.KindRefused, "this needs a person's yes ("+what+"), and this client cannot ask its person "+
			"(no form elicitation): ask them, then call again with confirmed: true; nothing was sent")
	}
	return &inputRequired{res: &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{confirmID: &mcp.ElicitParams{Message: what + "?", RequestedSchema: confirmSchema}},
		RequestState:  c.t.sign(what),
	}}
}

// sign is the request state of a question: an HMAC of its words under
// the server's key, which a client can echo but not make.
func (t *tools) sign(what string) string {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(what))
	return hex.EncodeToString(m.Sum(nil))
}
