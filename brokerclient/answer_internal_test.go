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
