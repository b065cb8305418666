// Answers: how a broker answer is read off the wire, bounded in bytes and
// in what it decodes into, and how a list in it is decoded row by row.

package brokerclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// An answer's bytes (maxAnswer) do not bound what it decodes into: 8 MB of
// `{"locateInventory":[{},{},…]}` is 2.7 million rows of 72 bytes each, and
// took a command to 1.6 GB. So every answer is also capped in its shape,
// counted as its bytes are read and before any of it is decoded: its rows
// (the elements of its arrays, at any depth: a list's rows, an order's
// legs, a route's order types) and its fields (the members of its
// objects, at any depth: fieldsPerRow for each row the cap allows). Past
// either cap nothing more is read and nothing of the answer is used: the
// call fails with a *TooManyRowsError. The caps stand far above what the
// broker sends (the busiest lists the spec allows are a 10,000-row ledger
// page and a day's locate history), so a real answer never meets them;
// what an answer within them decodes into is, besides the text it
// carries (at most its bytes), a few tens of MB at most (50,000 orders of
// 472 bytes; 160,000 undocumented keys of position rows).

// answerRows is each route's cap on the rows of one answer (a route is
// one endpoint: a key of RateLimits). A route not listed answers one
// object (an order, an account, an acknowledgement): objectRows.
var answerRows = map[string]int{
	routeAccountsList:      1_000,
	routePnL:               10_000,
	routeOrdersBook:        50_000,
	routeOrdersArchive:     50_000,
	routeOrdersPaginated:   10_000,
	routeRoutes:            1_000,
	routePositions:         10_000,
	routePositionsClosed:   5_000,
	routePositionsHistoric: 5_000,
	routeLocateHistory:     50_000,
	routeLocateInventory:   10_000,
	routeCashLedger:        50_000,
}

// objectRows caps the rows of an answer that is one object (an order's
// legs, a subscribe's topics).
const objectRows = 1_000

// fieldsPerRow is the fields an answer may carry for each row of its cap.
// It is an average over the cap, not a row's most: the widest row of the
// spec (an order) has 37 fields, but a real answer has far fewer rows
// than its cap (a full 10,000-row ledger page has 80,000 fields, its cap
// 1.6 million). Fields matter where they are kept one by one: the
// undocumented keys of an account or a position row (Extra).
const fieldsPerRow = 32

// answerCap is the most one answer may hold.
type answerCap struct {
	rows   int // array elements, at any depth
	fields int // object members, at any depth
}

// capOfRows is the cap of an answer of at most rows rows.
func capOfRows(rows int) answerCap { return answerCap{rows: rows, fields: rows * fieldsPerRow} }

// routeCap is the cap of an answer of route.
func routeCap(route string) answerCap {
	if rows, ok := answerRows[route]; ok {
		return capOfRows(rows)
	}
	return capOfRows(objectRows)
}

// streamCap is the cap of one message of a stream: the P&L stream's
// snapshot lists a position per lot, as the P&L answer does; a portfolio
// message is one order or position.
func streamCap(kind StreamKind) answerCap {
	if kind == StreamPnL {
		return routeCap(routePnL)
	}
	return capOfRows(objectRows)
}

// answerReader is an answer's body read through its bounds: past limit
// bytes it fails with an *AnswerTooLargeError, past its cap with a
// *TooManyRowsError (counting as the bytes pass, so nothing past either is
// read), and it keeps the answer's first bytes for an error to quote. Err
// is what the body itself failed with (the network's), apart from the
// bounds.
type answerReader struct {
	r        io.Reader
	op       string
	endpoint string
	limit    int64
	read     int64
	head     []byte // the first headBytes bytes
	shape    shapeCounter
	err      error
	bound    error // the bound passed: every later read returns it
}

// headBytes is how much of an answer is kept for a DecodeError: what it
// quotes (512 bytes) and room for a secret that begins there to be masked
// whole.
const headBytes = 4 << 10

// newAnswerReader reads r, an answer of op to endpoint whose length, when
// known, is length (-1: unknown), under limit bytes and cap c. A length
// already past limit is refused before anything is read.
func newAnswerReader(r io.Reader, length int64, op, endpoint string, limit int64, c answerCap) (*answerReader, error) {
	if length > limit {
		return nil, &AnswerTooLargeError{Op: op, Limit: limit}
	}
	return &answerReader{r: r, op: op, endpoint: endpoint, limit: limit, shape: shapeCounter{cap: c}}, nil
}

// readAll reads the whole answer, within its bounds. It reads in pieces,
// each as long as all before it up to 1 MiB, and joins them once the end
// is seen: an answer that overruns the bound costs about the bound, not
// the copies of a growing slice.
func (a *answerReader) readAll() ([]byte, error) {
	var pieces [][]byte
	size := 0
	for {
		p := make([]byte, min(max(size, 512), 1<<20))
		n, err := io.ReadFull(a, p)
		pieces = append(pieces, p[:n])
		size += n
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return bytes.Join(pieces, nil), nil
		case err != nil:
			return nil, err
		}
	}
}

func (a *answerReader) Read(p []byte) (int, error) {
	if a.bound != nil {
		return 0, a.bound
	}
	if int64(len(p)) > a.limit+1-a.read {
		p = p[:a.limit+1-a.read]
	}
	n, err := a.r.Read(p)
	if a.read+int64(n) > a.limit {
		n = int(a.limit - a.read)
		a.bound = &AnswerTooLargeError{Op: a.op, Limit: a.limit}
	}
	a.read += int64(n)
	if len(a.head) < headBytes {
		a.head = append(a.head, p[:min(n, headBytes-len(a.head))]...)
	}
	if i, what, limit := a.shape.scan(p[:n]); what != "" {
		a.bound = &TooManyRowsError{Op: a.op, Endpoint: a.endpoint, What: what, Limit: limit}
		return i, a.bound
	}
	if a.bound != nil {
		return n, a.bound
	}
	if err != nil && err != io.EOF {
		a.err = err
	}
	return n, err
}

// shapeCounter counts, byte by byte, the elements of an answer's arrays
// and the members of its objects, at any depth. It follows only what
// tells them apart (brackets, braces, commas, strings); the JSON decoder
// reading beside it checks the rest.
type shapeCounter struct {
	cap           answerCap
	rows, fields  int
	open          []byte // the enclosing containers, innermost last: '[' or '{'
	awaiting      bool   // right after '[', '{' or ',': the next value begins an element or member
	inStr, escape bool
}

// scan counts b's elements and members; past the cap it returns where in
// b and which cap ("rows" or "fields") was passed.
func (s *shapeCounter) scan(b []byte) (int, string, int) {
	for i, c := range b {
		if s.inStr {
			switch {
			case s.escape:
				s.escape = false
			case c == '\\':
				s.escape = true
			case c == '"':
				s.inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r', ':':
			continue
		case ',':
			s.awaiting = true
			continue
		case ']', '}':
			if len(s.open) > 0 {
				s.open = s.open[:len(s.open)-1]
			}
			s.awaiting = false
			continue
		}
		if s.awaiting && len(s.open) > 0 {
			s.awaiting = false
			if s.open[len(s.open)-1] == '[' {
				if s.rows++; s.rows > s.cap.rows {
					return i, "rows", s.cap.rows
				}
			} else if s.fields++; s.fields > s.cap.fields {
				return i, "fields", s.cap.fields
			}
		}
		switch c {
		case '"':
			s.inStr = true
		case '[', '{':
			// Every container but the answer's own is an element or a
			// member, so the caps bound this stack too.
			s.open = append(s.open, c)
			s.awaiting = true
		}
	}
	return len(b), "", 0
}

// ErrTooManyRows: a broker answer held more rows or fields than its
// endpoint's cap; none of it was used.
var ErrTooManyRows = errors.New("broker answer has too many rows")

// TooManyRowsError is a broker answer (a REST body or a stream message)
// that held more than its endpoint's cap of rows (array elements, at any
// depth) or of fields (object members): reading stopped there, nothing of
// it was decoded or used, and the call is not retried (the broker would
// answer the same again; a stream stops).
type TooManyRowsError struct {
	Op string
	// Endpoint is the spec's method and path of the call, or the stream's
	// address.
	Endpoint string
	// What was over its cap: "rows" or "fields".
	What  string
	Limit int
}

func (e *TooManyRowsError) Error() string {
	return fmt.Sprintf("brokerclient: %s (%s): the broker's answer holds more than %d %s, this endpoint's cap; none of it was used",
		e.Op, e.Endpoint, e.Limit, e.What)
}

// Is reports ErrTooManyRows.
func (e *TooManyRowsError) Is(target error) bool { return target == ErrTooManyRows }

// answerDecoder decodes one answer from its reader: its JSON value, then
// nothing but white space to the end, the secrets a request carried
// masked in what it decodes and its strings CleanText.
type answerDecoder struct {
	src *answerReader
	dec *json.Decoder
	sec secrets
}

func newAnswerDecoder(src *answerReader, sec secrets) *answerDecoder {
	return &answerDecoder{src: src, dec: json.NewDecoder(src), sec: sec}
}

// listAnswer is an answer whose list is decoded row by row (listOf).
type listAnswer interface {
	decodeList(a *answerDecoder) error
}

// decode reads the answer into v: a listAnswer row by row, anything else
// (one object, bounded by the reader's cap) whole. It returns the
// reader's own errors (the bounds, the network) as they are, and a
// *DecodeError for an answer that is not what v takes.
func (a *answerDecoder) decode(op string, v any) error {
	var err error
	if l, ok := v.(listAnswer); ok {
		err = l.decodeList(a)
	} else {
		err = a.value(v)
	}
	if err == nil {
		err = a.end()
	}
	var tooMany *TooManyRowsError
	var tooLarge *AnswerTooLargeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooMany):
		return tooMany
	case errors.As(err, &tooLarge):
		return tooLarge
	case a.src.err != nil:
		return a.src.err
	}
	return &DecodeError{Op: op, Err: err, Body: truncate(a.sec.maskBody(a.src.head))}
}

// value decodes the next JSON value into v, masked and cleaned.
func (a *answerDecoder) value(v any) error {
	var raw json.RawMessage
	if err := a.dec.Decode(&raw); err != nil {
		return err
	}
	if err := json.Unmarshal(a.sec.maskBody(raw), v); err != nil {
		return err
	}
	a.sec.cleanMasked(v)
	return nil
}

// end checks that nothing but white space follows the answer's value.
func (a *answerDecoder) end() error {
	if _, err := a.dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the answer's value")
		}
		return err
	}
	return nil
}

// listOf is a list answer's decoding (decodeList): its rows go to *out,
// one at a time off the wire. The service sends the list bare ([...]) or
// under key in an object (any case), beside other members: rest, when
// set, decodes those that name one of its fields (pagination, totals),
// and then the list cannot come bare; the others are skipped. A list that
// is absent, or null, is empty (*out nil); a present one gives a non-nil
// slice.
type listOf[T any] struct {
	out  *[]T
	key  string
	rest any
	// loose is for the lists whose envelope the spec does not show (the
	// order book, the routes, the positions): failing key, the object's
	// one array member is the list, and an object with members but no
	// list is an error, not an empty list. Such a member is read whole
	// before its rows are decoded, as it cannot be told from another
	// member until then.
	loose bool
}

func (l *listOf[T]) decodeList(a *answerDecoder) error {
	tok, err := a.dec.Token()
	switch {
	case err != nil:
		return err
	case tok == json.Delim('[') && l.rest == nil:
		*l.out, err = decodeRows[T](a, a.dec)
		return err
	case tok == json.Delim('{'):
		return l.members(a)
	case tok == nil:
		return nil
	}
	want := "a JSON array or object"
	if l.rest != nil {
		want = "a JSON object"
	}
	return fmt.Errorf("want %s, got %s", want, tokenKind(tok))
}

// tokenKind names what a JSON token is, never what it says (the broker's
// text stays out of errors but for the body's masked head).
func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		return fmt.Sprintf("%q", tok)
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// members reads the object of a list answer, past its opening brace.
func (l *listOf[T]) members(a *answerDecoder) error {
	var keyed, only []T
	var onlyErr error
	found, arrays, n := false, 0, 0
	for ; a.dec.More(); n++ {
		tok, err := a.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, l.key):
			if keyed, err = l.keyed(a); err != nil {
				return fmt.Errorf("%s: %w", l.key, err)
			}
			found = true
		default:
			var raw json.RawMessage
			if err := a.dec.Decode(&raw); err != nil {
				return err
			}
			if l.loose && bytes.HasPrefix(raw, []byte("[")) {
				arrays++
				d := json.NewDecoder(bytes.NewReader(raw))
				d.Token() // the opening bracket
				only, onlyErr = decodeRows[T](a, d)
			} else if l.rest != nil && jsonFieldNames(reflect.TypeOf(l.rest).Elem())[strings.ToLower(key)] {
				if err := a.rest(l.rest, key, raw); err != nil {
					return err
				}
			}
		}
	}
	if _, err := a.dec.Token(); err != nil { // the closing brace
		return err
	}
	switch {
	case found:
		*l.out = keyed
	case !l.loose || n == 0:
	case arrays == 1 && onlyErr != nil:
		return onlyErr
	case arrays == 1:
		*l.out = only
	default:
		return errors.New("no list in the response object")
	}
	return nil
}

// keyed reads the value of the list's own member: its rows, or null.
func (l *listOf[T]) keyed(a *answerDecoder) ([]T, error) {
	tok, err := a.dec.Token()
	switch {
	case err != nil:
		return nil, err
	case tok == json.Delim('['):
		return decodeRows[T](a, a.dec)
	case tok == nil:
		return nil, nil
	}
	return nil, fmt.Errorf("want an array, got %s", tokenKind(tok))
}

// rest decodes one member of a list answer's object into v, masked and
// cleaned.
func (a *answerDecoder) rest(v any, key string, raw json.RawMessage) error {
	member, err := json.Marshal(map[string]json.RawMessage{key: a.sec.maskBody(raw)})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(member, v); err != nil {
		return err
	}
	a.sec.cleanMasked(v)
	return nil
}

// decodeRows decodes the rows of an array from dec, past its opening
// bracket and through its closing one: each row read alone, its secrets
// masked and its strings cleaned, so what is held at once is the rows
// decoded and one row's bytes.
func decodeRows[T any](a *answerDecoder, dec *json.Decoder) ([]T, error) {
	out := []T{}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		var row T
		if err := json.Unmarshal(a.sec.maskBody(raw), &row); err != nil {
			return nil, fmt.Errorf("row %d: %w", len(out), err)
		}
		a.sec.cleanMasked(&row)
		out = append(out, row)
	}
	_, err := dec.Token() // the closing bracket
	return out, err
}

// paginationOf is the rest of a paged list answer: its pagination object,
// decoded into *P.
type paginationOf[P any] struct {
	P *P `json:"pagination"`
}
