package brokerclient_test

import (
	"errors"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
)

// FuzzDecodeStreamMessage feeds arbitrary bytes to the stream decoder: it
// must never panic, and it returns either a message or a
// *StreamDecodeError. The seed corpus in testdata/fuzz holds one message of
// each kind both streams send, plus malformed ones, so plain `go test`
// runs them.
func FuzzDecodeStreamMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := brokerclient.DecodeStreamMessage(data)
		var de *brokerclient.StreamDecodeError
		switch {
		case err != nil && !errors.As(err, &de):
			t.Fatalf("error %T %v, want a *StreamDecodeError", err, err)
		case err != nil && m != nil:
			t.Fatalf("both a message %T and an error %v", m, err)
		case err == nil && m == nil:
			t.Fatal("neither a message nor an error")
		}
	})
}
