package brokerclient

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
)

// ErrNoSecret: the client holds no secret to prove anything with.
var ErrNoSecret = errors.New("brokerclient: no secret to sign with")

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
