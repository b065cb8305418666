package brokerclient

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// An answer's byte bound is exact: an answer of limit bytes is read whole,
// whatever the pieces it is read in; one byte more, or a Content-Length
// past the limit (refused before anything is read), is ErrAnswerTooLarge.
func TestReadAnswerBound(t *testing.T) {
	t.Parallel()
	const limit = 5000 // several pieces: 512, 512, 1024, 2048, …
	body := strings.Repeat("x", limit)
	for _, tc := range []struct {
		name          string
		body          string
		contentLength int64
		tooLarge      bool
	}{
		{"empty", "", -1, false},
		{"at the limit", body, -1, false},
		{"one byte over", body + "y", -1, true},
		{"declared over", "", limit + 1, true},
	} {
		src, err := newAnswerReader(strings.NewReader(tc.body), tc.contentLength, "op", "GET /op", limit, capOfRows(objectRows))
		var got []byte
		if err == nil {
			got, err = src.readAll()
		}
		switch {
		case tc.tooLarge && !errors.Is(err, ErrAnswerTooLarge):
			t.Errorf("%s: err = %v, want ErrAnswerTooLarge", tc.name, err)
		case !tc.tooLarge && (err != nil || !bytes.Equal(got, []byte(tc.body))):
			t.Errorf("%s: %d bytes, %v; want the %d bytes sent", tc.name, len(got), err, len(tc.body))
		}
	}
}

// The shape counter counts the same, and ends each string at the same
// quote, whether an answer comes whole or a byte at a time: a quote after
// an even run of backslashes ends a string, after an odd one it is text,
// also when the run is split between reads.
func TestShapeCounterReadsAnyPieces(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc          string
		rows, fields int
	}{
		{`[]`, 0, 0},
		{`{}`, 0, 0},
		{`[{},{},{}]`, 3, 0},
		{`{"a":[1,2],"b":{"c":[]}}`, 2, 3},
		{`["[,]", "{,}", "\"[", "\\", "\\\"]", "x\\\\"]`, 6, 0},
		{`[{"text":"a\\\\\"b,[]","k":[{"l":1},[2]]}, 3]`, 5, 3},
	} {
		whole := shapeCounter{cap: capOfRows(100)}
		if b := whole.scan([]byte(tc.doc)); b != withinBounds || whole.rows != tc.rows || whole.fields != tc.fields || whole.inStr || len(whole.open) != 0 {
			t.Errorf("%s whole: %d rows, %d fields, in a string %v, %d open (%v); want %d rows, %d fields, all closed",
				tc.doc, whole.rows, whole.fields, whole.inStr, len(whole.open), b, tc.rows, tc.fields)
		}
		bytewise := shapeCounter{cap: capOfRows(100)}
		for i := range len(tc.doc) {
			bytewise.scan([]byte(tc.doc[i : i+1]))
		}
		if bytewise.rows != whole.rows || bytewise.fields != whole.fields || bytewise.inStr || len(bytewise.open) != 0 {
			t.Errorf("%s a byte at a time: %d rows, %d fields, in a string %v; whole: %d rows, %d fields",
				tc.doc, bytewise.rows, bytewise.fields, bytewise.inStr, whole.rows, whole.fields)
		}
	}
}
