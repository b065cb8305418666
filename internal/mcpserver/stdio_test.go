package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/locatorhq/locator/internal/mcpserver"
)

// rawAgent talks JSON-RPC to a server over Stdio line by line, as an
// agent's host does, malformed lines included.
type rawAgent struct {
	in  *io.PipeWriter
	out *bufio.Scanner
}

func startRaw(t *testing.T, why error) *rawAgent {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.Refused(why, "test", mcpserver.Options{}).Run(t.Context(), mcpserver.Stdio(inR, outW))
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a hang guard
			t.Error("the server did not end when stdin closed")
		}
		outR.Close()
	})
	return &rawAgent{in: inW, out: bufio.NewScanner(outR)}
}

// send writes line and reads the one answer it gets.
func (a *rawAgent) send(t *testing.T, line string) map[string]any {
	t.Helper()
	if _, err := io.WriteString(a.in, line+"\n"); err != nil {
		t.Fatalf("write %q: %v", line, err)
	}
	scanned := make(chan bool, 1)
	go func() { scanned <- a.out.Scan() }()
	select {
	case ok := <-scanned:
		if !ok {
			t.Fatalf("no answer to %q: %v", line, a.out.Err())
		}
	case <-time.After(10 * time.Second): // a hang guard: an answer takes milliseconds
		t.Fatalf("no answer to %q in 10 s: the session ended", line)
	}
	var m map[string]any
	if err := json.Unmarshal(a.out.Bytes(), &m); err != nil {
		t.Fatalf("answer %q: %v", a.out.Text(), err)
	}
	return m
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// A line that is not a JSON-RPC message is answered with
// the JSON-RPC error for it (-32700 parse error, -32600 invalid request)
// and the session goes on; and an account refused at start-up is still
// served: initialize and tools/list answer, and each tool call is a tool
// error saying why, nothing sent.
func TestStdioAnswersMalformedLinesAndRefusedAccount(t *testing.T) {
	t.Parallel()
	a := startRaw(t, errors.New("paper selected, but LV100001 is a live account"))
	for line, want := range map[string]float64{`not json`: -32700, `{"jsonrpc":"2.0","id":`: -32700, `{"x":1}`: -32600} {
		if m := a.send(t, line); errorCode(m) != want || m["id"] != nil {
			t.Errorf("%s: answered %v, want error %v with id null", line, m, want)
		}
	}
	init := a.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if init["result"] == nil {
		t.Fatalf("initialize after malformed lines: %v", init)
	}
	if _, err := io.WriteString(a.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	list := a.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	tools, _ := list["result"].(map[string]any)["tools"].([]any)
	if len(tools) != len(mcpserver.ToolNames(false)) {
		t.Errorf("tools/list of a refused account: %d tools, want all %d", len(tools), len(mcpserver.ToolNames(false)))
	}
	call := a.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"inventory","arguments":{}}}`)
	res, _ := call["result"].(map[string]any)
	text, _ := json.Marshal(res["content"])
	if res["isError"] != true || !strings.Contains(string(text), "is a live account") || !strings.Contains(string(text), "nothing was sent") {
		t.Errorf("a call on the refused account: %v, want a tool error saying why", call)
	}
	if m := a.send(t, `garbage again`); errorCode(m) != -32700 {
		t.Errorf("a malformed line after the session began: %v", m)
	}
	if m := a.send(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); m["result"] == nil {
		t.Errorf("ping after it: %v", m)
	}
}
