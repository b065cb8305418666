package brokerclient

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
)

// ErrNoSecret: the client holds no secret to prove anything with.
var ErrNoSecret = errors.New("brokerclient: no secret to sign with")

// rowKeyLabel is the fixed message RowKey signs. A proof's message begins
// "locator follower" or "locator owner" (package wire), so no challenge a
// peer hands out can make Prove answer with the row key.
const rowKeyLabel = "locator row key v1"

// Prove is an HMAC-SHA256 of msg keyed by the client's secret (the API
// secret, or the partner program's client secret), and the identity of the
// credentials it holds (PacingKey). A process proves to another that it
// holds the same credentials by answering the other's challenge this way:
// the secret itself is never sent, and a proof is good for the one
// challenge only.
func (c *Client) Prove(msg []byte) (identity string, mac []byte, err error) {
	secret := c.secret
	if secret == "" && c.partner != nil {
		secret = c.partner.ClientSecret
	}
	if secret == "" {
		return "", nil, ErrNoSecret
	}
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(msg)
	return c.PacingKey(), h.Sum(nil), nil
}

// RowKey is the key an owner authenticates its database rows with (see
// workflow.RowKey): an HMAC-SHA256 of a fixed label keyed by the client's
// secret, so every process holding the credentials derives the same key,
// one without them cannot, and the secret itself is never stored.
func (c *Client) RowKey() ([]byte, error) {
	_, key, err := c.Prove([]byte(rowKeyLabel))
	return key, err
}
