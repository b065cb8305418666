package brokerclient_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/locatorhq/locator/brokerclient"
)

// The row key (the database rows' MAC key, workflow.RowKey) is the same
// for every client of one secret, another for another secret, none for bearer
// tokens alone; and it is not the key-pair proof of any challenge a peer sends,
// which all begin "locator follower" or "locator owner" (package wire).
func TestRowKeyIsTheSecrets(t *testing.T) {
	t.Parallel()
	client := func(secret string) *brokerclient.Client {
		t.Helper()
		opts := []brokerclient.Option{brokerclient.WithBaseURL("http://127.0.0.1:1"), brokerclient.WithTokenSource(bearer{})}
		if secret != "" {
			opts[1] = brokerclient.WithCredentials("KEY1", secret)
		}
		c, err := brokerclient.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, errA := client("s3cret").RowKey()
	b, errB := client("s3cret").RowKey()
	other, errO := client("another").RowKey()
	if errA != nil || errB != nil || errO != nil || len(a) != 32 || !bytes.Equal(a, b) || bytes.Equal(a, other) {
		t.Fatalf("row keys %x, %x, %x (%v, %v, %v): want one per secret", a, b, other, errA, errB, errO)
	}
	if bytes.Contains(a, []byte("s3cret")) {
		t.Fatal("the row key holds the secret")
	}
	if _, proof, _ := client("s3cret").Prove([]byte("locator follower\nnonce\nhttp://127.0.0.1:1\nchannel")); bytes.Equal(proof, a) {
		t.Fatal("a proof is the row key")
	}
	if _, err := client("").RowKey(); !errors.Is(err, brokerclient.ErrNoSecret) {
		t.Fatalf("bearer tokens alone: %v, want ErrNoSecret", err)
	}
}

// bearer is a token source without a secret behind it.
type bearer struct{}

func (bearer) Token(context.Context) (string, error) { return "token", nil }
