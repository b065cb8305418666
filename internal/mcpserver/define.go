package mcpserver

// How a tool is made: its input schema from its Go type (with the named
// types below), its handler's errors turned into results with isError and
// a kind, and its decimal inputs refused when they come as JSON numbers.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
)

// Decimal is an input given as a decimal string ("0.02", "12.40", "10"):
// money, a price, a percentage. A JSON number is refused with a message
// saying a string is wanted: a number's binary value is not the amount
// (0.013 arrives as 0.013000000000000001).
type Decimal string

// OrderType is an order's type, as the broker names it.
type OrderType string

// TimeInForce is an order's time in force, as the broker names it.
type TimeInForce string

// Shares is quantity's first name on the first tools (quote, locate,
// credit_back), still taken from agents that use it.
type Shares int64

// inputTypes are the schemas of the named input types.
var inputTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[Decimal](): {Type: "string"},
	reflect.TypeFor[OrderType](): {Type: "string", Enum: []any{"Limit", "Market", "Stop", "StopLimit"},
		Description: "the order's type: Limit (the default), Market, Stop or StopLimit"},
	reflect.TypeFor[TimeInForce](): {Type: "string", Enum: []any{"Day", "Day_Plus", "GoodTillCancel", "GTC_Plus", "IOC", "FOK"},
		Description: "the order's time in force: Day (the default), Day_Plus or GTC_Plus (extended hours, Limit orders only), GoodTillCancel, IOC or FOK"},
	reflect.TypeFor[Shares](): {Type: "integer", Deprecated: true, Description: "deprecated: the old name of quantity"},
}

// toolDef is one tool: what it is, its decimal inputs, its refusal of a
// call before it runs, and how it joins a server.
type toolDef struct {
	tool *mcp.Tool
	// decimals are the JSON names of its Decimal inputs.
	decimals []string
	refuse   func(error) *mcp.CallToolResult
	add      func(*mcp.Server)
}

// handler is a tool's work: its output, or why the call did not succeed
// (the output then holds what the call got to).
type handler[In, Out any] func(ctx context.Context, c *call, in In) (Out, error)

// call is one tool call, as its handler sees it.
type call struct {
	req *mcp.CallToolRequest
	t   *tools
}

// define makes the tool of h. Out embeds Failure, so that a call that did
// not succeed says why in its structured content.
func define[In, Out any](t *tools, tool *mcp.Tool, h handler[In, Out]) toolDef {
	if _, ok := any(new(Out)).(failing); !ok {
		panic(fmt.Sprintf("mcpserver: %s's output %T does not embed Failure", tool.Name, *new(Out)))
	}
	in, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: inputTypes})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: %s's input: %v", tool.Name, err)) // the types are this package's
	}
	tool.InputSchema = in
	return toolDef{
		tool:     tool,
		decimals: decimalFields(reflect.TypeFor[In]()),
		refuse: func(err error) *mcp.CallToolResult {
			res, out := failure(*new(Out), err)
			res.StructuredContent = out
			return res
		},
		add: func(s *mcp.Server) { mcp.AddTool(s, tool, serve(t, h)) },
	}
}

// serve is h as the SDK calls it: on an account that could not be opened
// every call is refused so; an error becomes a result with isError (a
// protocol error is for the protocol's own faults, spec "Tools: error
// handling"), and a question for the person comes back as the input it
// requires.
func serve[In, Out any](t *tools, h handler[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var out Out
		var err error
		if t.refused != nil {
			err = account.Wrap(account.KindRefused, nothingSent(t.refused).Error(), t.refused)
		} else {
			out, err = h(ctx, &call{req: req, t: t}, in)
		}
		var ask *inputRequired
		switch {
		case err == nil:
			return nil, out, nil
		case errors.As(err, &ask):
			return ask.res, out, nil
		}
		res, out := failure(out, err)
		return res, out, nil
	}
}

// ended is a call that ran to an end short of its goal (a locate
// declined or rejected, an order rejected, a person's no): its output is
// the record of that end.
type ended struct{ kind, words string }

func (e *ended) Error() string { return e.words }

// failure is the result of a call that did not succeed: isError set, its
// message as the text, and out, with its kind and message, as the
// structured content.
func failure[Out any](out Out, err error) (*mcp.CallToolResult, Out) {
	p := &Problem{Kind: kindOf(err), Message: err.Error()}
	if errors.Is(err, brokercode.ErrInput) {
		p.Message = nothingSent(err).Error()
	}
	any(&out).(failing).fail(p)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: p.Message}}}, out
}

// kindOf is what err says happened (Problem.Kind).
func kindOf(err error) string {
	var e *ended
	switch {
	case errors.As(err, &e):
		return e.kind
	case errors.Is(err, brokercode.ErrInput):
		return string(account.KindInput)
	}
	return string(account.KindOf(err))
}

// nothingSent is a refusal that says, as the CLI's do, that nothing was
// sent.
func nothingSent(err error) error {
	if strings.Contains(err.Error(), "nothing was sent") {
		return err
	}
	return fmt.Errorf("%w; nothing was sent", err)
}

// decimalFields are the JSON names of struct t's Decimal fields, those
// of its embedded structs included (encoding/json lifts them).
func decimalFields(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			names = append(names, decimalFields(f.Type)...)
		case f.Type == reflect.TypeFor[Decimal]():
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
		}
	}
	return names
}

// decimalsAsStrings refuses a call of a served tool that gives one of its
// decimal inputs as a JSON number, saying a string is wanted, before the
// SDK's schema check would refuse it in words an agent may not act on.
func decimalsAsStrings(served map[string]toolDef) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			c, ok := req.(*mcp.CallToolRequest)
			if !ok {
				return next(ctx, method, req)
			}
			def := served[c.Params.Name]
			var args map[string]json.RawMessage
			if len(def.decimals) == 0 || json.Unmarshal(c.Params.Arguments, &args) != nil {
				return next(ctx, method, req) // the SDK says what is wrong
			}
			for _, name := range def.decimals {
				if v := bytes.TrimSpace(args[name]); len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
					return def.refuse(account.Errorf(account.KindInput, fmt.Sprintf(
						"%s: %s is a JSON number; give it as a decimal string, such as \"%s\" (a number's binary value is not the amount); nothing was sent",
						name, v, v))), nil
				}
			}
			return next(ctx, method, req)
		}
	}
}
