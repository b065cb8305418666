package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locatorhq/locator/internal/console"
)

// maxLine bounds one message on stdin, as the SDK's own stdio transport
// bounds a frame (mcp.DefaultMaxLineLength).
const maxLine = mcp.DefaultMaxLineLength

// Stdio is the protocol over r and w, one JSON-RPC message a line, as
// mcp.IOTransport carries it, except that a line that is not a JSON-RPC
// message (not JSON, not a request or a response, or longer than maxLine)
// is answered on w with the JSON-RPC error for it (parse error or invalid
// request, id null) and passed over: the SDK's transport ends the session
// on such a line, and an agent's host then only sees its server gone.
// Neither r nor w is closed.
func Stdio(r io.Reader, w io.Writer) mcp.Transport {
	// One message at a time on w: the SDK's answers and filterLines'
	// refusals share it.
	out := &console.SyncWriter{W: w}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(filterLines(r, pw, out)) }()
	return &mcp.IOTransport{Reader: pr, Writer: leftOpen{out}}
}

// filterLines copies r's lines that are JSON-RPC messages to pass, and
// answers the others on out, until r ends (nil at its end).
func filterLines(r io.Reader, pass io.Writer, out io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, long, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 || long {
			if reply := refusal(line, long); reply != nil {
				if _, err := out.Write(reply); err != nil {
					return err
				}
			} else if _, err := pass.Write(append(line, '\n')); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its end; long when it ran past maxLine
// (its rest is read and dropped).
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		part, err := br.ReadSlice('\n')
		if !long {
			line = append(line, part...)
			if len(line) > maxLine {
				line, long = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), long, err
	}
}

// refusal is the JSON-RPC error answering line, or nil for a message the
// SDK can take.
func refusal(line []byte, long bool) []byte {
	var code int64
	var message string
	switch {
	case long:
		code, message = jsonrpc.CodeParseError, "parse error: a message longer than the line bound"
	case !json.Valid(line):
		code, message = jsonrpc.CodeParseError, "parse error: not JSON"
	case bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")):
		// A batch, which the SDK's transport reads itself.
	default:
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			code, message = jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message"
		}
	}
	if code == 0 {
		return nil
	}
	reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}})
	return append(reply, '\n')
}

// leftOpen is a writer the transport's Close leaves open (mcp.IOTransport
// closes its writer when the session ends; stdout stays the process's).
type leftOpen struct{ io.Writer }

func (leftOpen) Close() error { return nil }
