// The config's JSON layer: encoding/json decodes, and this layer keeps the
// byte offset of every field and element so each error names its line, and
// refuses duplicate keys (encoding/json would silently keep the last one).

package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// parser keeps the whole file to turn offsets into lines.
type parser struct{ data []byte }

// line is the 1-based line of the byte at off.
func (p *parser) line(off int) int {
	off = max(0, min(off, len(p.data)))
	return 1 + bytes.Count(p.data[:off], []byte("\n"))
}

func (p *parser) errAt(off int, format string, args ...any) error {
	return &ConfigError{Line: p.line(off), Msg: fmt.Sprintf(format, args...)}
}

// syntaxError places a decoder error: a SyntaxError's offset counts the
// offending byte, so the line is that of the byte before it.
func (p *parser) syntaxError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return p.errAt(int(se.Offset)-1, "invalid JSON: %v", se)
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(p.data)) == 0:
		return &ConfigError{Line: 1, Msg: "the config is empty"}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		end := len(bytes.TrimRight(p.data, " \t\r\n"))
		return p.errAt(end, "invalid JSON: unexpected end of file (an unclosed brace, bracket or string)")
	}
	return &ConfigError{Line: 1, Msg: err.Error()}
}

// field is one key of a JSON object, with absolute offsets of the key and
// of its value.
type field struct {
	key   string
	off   int
	value json.RawMessage
	voff  int
}

// object splits an object found at base into its fields, refusing
// duplicate keys (encoding/json would silently keep the last one).
func (p *parser) object(raw []byte, base int, what string) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, p.errAt(base+skipSpace(raw, 0), "%s must be an object, not %s", what, describe(tok))
	}
	var out []field
	seen := map[string]int{}
	for dec.More() {
		koff := base + skipSep(raw, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return nil, p.syntaxError(err)
		}
		key, _ := tok.(string)
		voff := base + skipSep(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, p.syntaxError(err)
		}
		if first, dup := seen[key]; dup {
			return nil, p.errAt(koff, "field %q appears twice in %s (first on line %d)", key, what, p.line(first))
		}
		seen[key] = koff
		out = append(out, field{key: key, off: koff, value: v, voff: voff})
	}
	return out, nil
}

// element is one value of a JSON array with its absolute offset.
type element struct {
	value json.RawMessage
	off   int
}

func (p *parser) array(raw []byte, base int, what string) ([]element, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, p.errAt(base+skipSpace(raw, 0), "%s must be a list, not %s", what, describe(tok))
	}
	var out []element
	for dec.More() {
		off := base + skipSep(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, p.syntaxError(err)
		}
		out = append(out, element{value: v, off: off})
	}
	return out, nil
}

// describe names a JSON token's type for messages.
func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "a list"
		}
		return "an object"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// decodeField decodes f's value into dst, turning a type mismatch into a
// message about the field.
func (p *parser) decodeField(job string, f field, dst any, want string) error {
	if err := json.Unmarshal(f.value, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return p.errAt(f.voff, "job %s: %s must be %s, not %s", job, f.key, want, jsonKind(te.Value))
		}
		return p.errAt(f.voff, "job %s: %s must be %s: %v", job, f.key, want, err)
	}
	return nil
}

func jsonKind(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string", "number", "bool":
		if v == "bool" {
			return "a boolean"
		}
		return "a " + v
	}
	return v
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// skipSpace returns the offset of the first non-space byte at or after off.
func skipSpace(b []byte, off int) int {
	for off < len(b) && isSpace(b[off]) {
		off++
	}
	return off
}

// skipSep skips spaces and the separators a decoder leaves before the next
// token (',' between values, ':' after a key).
func skipSep(b []byte, off int) int {
	for off < len(b) && (isSpace(b[off]) || b[off] == ',' || b[off] == ':') {
		off++
	}
	return off
}
