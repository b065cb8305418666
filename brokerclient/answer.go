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
// call fails with a *TooManyRowsError. A list is decoded a row at a time
// (a JSON decoder walks the answer, read whole within its bounds), and a
// row is bounded in bytes (maxRowBytes) as the whole answer is. The caps
// stand far above what the broker sends (the busiest lists the spec
// allows are a 10,000-row ledger page and a day's locate history), so a
// real answer never meets them; what an answer within them decodes into
// is, besides the text it carries (at most its bytes), a few tens of MB at
// most (50,000 orders of 472 bytes; 160,000 undocumented keys of position
// rows).

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
// bytes, or maxRowBytes in a row, it fails with an *AnswerTooLargeError,
// past its cap with a *TooManyRowsError, counting as the bytes pass, so
// nothing past either is read.
type answerReader struct {
	r        io.Reader
	op       string
	endpoint string
	limit    int64
	read     int64
	shape    shapeCounter
	bound    error // the bound passed: every later read returns it
}

// newAnswerReader reads r, an answer of op to endpoint whose length, when
// known, is length (-1: unknown), under limit bytes and cap c. A length
// already past limit is refused before anything is read.
func newAnswerReader(r io.Reader, length int64, op, endpoint string, limit int64, c answerCap) (*answerReader, error) {
	if length > limit {
		return nil, &AnswerTooLargeError{Op: op, Limit: limit}
	}
	return &answerReader{r: r, op: op, endpoint: endpoint, limit: limit, shape: shapeCounter{cap: c}}, nil
}

// readAll reads the whole answer, within its bounds, in one slice.
func (a *answerReader) readAll() ([]byte, error) {
	pieces, err := a.readPieces()
	if err != nil {
		return nil, err
	}
	return bytes.Join(pieces, nil), nil
}

// readPieces reads the whole answer, within its bounds, in pieces, each
// as long as all before it up to 1 MiB: an answer that overruns the bound
// costs about the bound, not the copies of a growing slice.
func (a *answerReader) readPieces() ([][]byte, error) {
	var pieces [][]byte
	size := 0
	for {
		p := make([]byte, min(max(size, 512), 1<<20))
		n, err := io.ReadFull(a, p)
		pieces = append(pieces, p[:n])
		size += n
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return pieces, nil
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
	if b := a.shape.scan(p[:n]); b != withinBounds {
		a.bound = a.boundError(b)
	}
	if a.bound != nil {
		return n, a.bound
	}
	return n, err
}

// boundError is the error of the bound b.
func (a *answerReader) boundError(b bound) error {
	switch b {
	case overRows:
		return &TooManyRowsError{Op: a.op, Endpoint: a.endpoint, What: "rows", Limit: a.shape.cap.rows}
	case overFields:
		return &TooManyRowsError{Op: a.op, Endpoint: a.endpoint, What: "fields", Limit: a.shape.cap.fields}
	}
	return &AnswerTooLargeError{Op: a.op, Limit: maxRowBytes, Row: true}
}

// maxRowBytes bounds a row of an answer (an element of its outermost
// array): the longest real one, a ledger row with the longest notes, is
// under 1 KiB. A list is decoded a row at a time, and the decoder's
// buffer, which doubles as a value grows, holds the row; an answer that
// is one object (no list) is bounded by maxAnswer alone.
const maxRowBytes = 1 << 20

// bound names the bound of its shape an answer passed.
type bound int

const (
	withinBounds bound = iota
	overRows
	overFields
	overRowBytes
)

// shapeCounter counts the elements of an answer's arrays and the members
// of its objects, at any depth, and measures the rows of its outermost
// array. It follows only what tells them apart (brackets, braces, commas,
// strings, which it skips to their closing quote a run at a time); the
// JSON decoder reading the answer checks the rest.
type shapeCounter struct {
	cap          answerCap
	rows, fields int
	open         []byte // the enclosing containers, innermost last: '[' or '{'
	awaiting     bool   // right after '[', '{' or ',': the next value begins an element or member
	inStr        bool
	slashes      int   // in a string: the backslashes that end what was scanned of it
	outer        int   // 1 + the index in open of the outermost array; 0: none open
	pos          int64 // bytes scanned
	rowStart     int64 // where the outermost array's current row began
	inRow        bool
}

// scan counts b's elements and members, and measures its rows; it
// returns the first bound passed, if any.
func (s *shapeCounter) scan(b []byte) bound {
	for i := 0; i < len(b); {
		if s.inStr {
			n := s.skipString(b[i:])
			i += n
			s.pos += int64(n)
		} else {
			c := b[i]
			i++
			s.pos++
			if over := s.token(c); over != withinBounds {
				return over
			}
		}
		if s.inRow && s.pos-s.rowStart > maxRowBytes {
			return overRowBytes
		}
	}
	return withinBounds
}

// token handles a byte outside strings.
func (s *shapeCounter) token(c byte) bound {
	switch c {
	case ' ', '\t', '\n', '\r', ':':
		return withinBounds
	case ',', ']', '}':
		s.close(c)
		return withinBounds
	}
	if s.awaiting && len(s.open) > 0 {
		if over := s.begin(); over != withinBounds {
			return over
		}
	}
	switch c {
	case '"':
		s.inStr, s.slashes = true, 0
	case '[', '{':
		// Every container but the answer's own is an element or a
		// member, so the caps bound this stack too.
		s.open = append(s.open, c)
		s.awaiting = true
		if c == '[' && s.outer == 0 {
			s.outer = len(s.open)
		}
	}
	return withinBounds
}

// skipString skips the rest of a string, through its closing quote (a
// quote after an even run of backslashes), or all of b; it returns how
// many bytes it skipped.
func (s *shapeCounter) skipString(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			s.slashes = trailingSlashes(b[i:], s.slashes)
			return len(b)
		}
		q := i + j
		if trailingSlashes(b[i:q], s.slashes)%2 == 0 {
			s.inStr = false
			return q + 1
		}
		i, s.slashes = q+1, 0 // an escaped quote
	}
}

// trailingSlashes is the run of backslashes that ends b, which continues
// a run of before when b is all backslashes.
func trailingSlashes(b []byte, before int) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	if n == len(b) {
		return before + n
	}
	return n
}

// begin counts the element or member that begins at the current byte.
func (s *shapeCounter) begin() bound {
	s.awaiting = false
	if s.open[len(s.open)-1] == '{' {
		if s.fields++; s.fields > s.cap.fields {
			return overFields
		}
		return withinBounds
	}
	if s.rows++; s.rows > s.cap.rows {
		return overRows
	}
	if len(s.open) == s.outer {
		s.inRow, s.rowStart = true, s.pos-1
	}
	return withinBounds
}

// close handles a comma, which ends an element or a member, or the end of
// a container.
func (s *shapeCounter) close(c byte) {
	if len(s.open) == s.outer {
		s.inRow = false
	}
	if c == ',' {
		s.awaiting = true
		return
	}
	if len(s.open) == s.outer {
		s.outer = 0
	}
	if len(s.open) > 0 {
		s.open = s.open[:len(s.open)-1]
	}
	s.awaiting = false
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

// answerDecoder decodes one answer, read whole within its bounds first:
// so nothing is decoded of an answer past them, and the decoding's work
// never counts against the request's time on the network (a 64 MiB
// answer decoded as it arrived took past the client's 15 s on a loaded
// machine). A list answer is then walked by a JSON decoder, a row at a
// time, over the pieces it was read in, each let go once read; an answer
// of one object is decoded whole. The secrets the request carried are
// masked in what it decodes, and its strings are CleanText.
type answerDecoder struct {
	dec *json.Decoder
	sec secrets
}

// listAnswer is an answer whose list is decoded row by row (listOf).
type listAnswer interface {
	decodeList(a *answerDecoder) error
}

// decodeAnswerFrom reads the answer from src and decodes it into v. It
// returns src's errors (the bounds, the network) as they are, and a
// *DecodeError for an answer that is not what v takes.
func decodeAnswerFrom(src *answerReader, sec secrets, op string, v any) error {
	pieces, err := src.readPieces()
	if err != nil {
		return err
	}
	head := answerHead(pieces)
	if l, ok := v.(listAnswer); ok {
		readers := make([]io.Reader, len(pieces))
		for i, p := range pieces {
			readers[i] = bytes.NewReader(p)
		}
		a := &answerDecoder{dec: json.NewDecoder(io.MultiReader(readers...)), sec: sec}
		if err = l.decodeList(a); err == nil {
			err = a.end()
		}
	} else if err = json.Unmarshal(sec.maskBody(bytes.Join(pieces, nil)), v); err == nil {
		sec.cleanMasked(v)
	}
	if err != nil {
		return &DecodeError{Op: op, Err: err, Body: truncate(sec.maskBody(head))}
	}
	return nil
}

// headBytes is how much of an answer is kept for a DecodeError to quote:
// what it quotes (512 bytes) and room for a secret that begins there to
// be masked whole.
const headBytes = 4 << 10

// answerHead is the first headBytes of an answer read in pieces.
func answerHead(pieces [][]byte) []byte {
	var head []byte
	for _, p := range pieces {
		if len(head) >= headBytes {
			break
		}
		head = append(head, p[:min(len(p), headBytes-len(head))]...)
	}
	return head
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
// decoded one at a time. The service sends the list bare ([...]) or
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
