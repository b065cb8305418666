package answerlink

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Answer is what a link answers.
type Answer string

// Answers.
const (
	Approve Answer = "approve"
	Decline Answer = "decline"
)

// Link is what a signed link says: answer the offer of workflow Workflow
// of Account whose leg is Offer, at Price a share, with Answer, until
// Deadline. Symbol and Shares are shown on its page.
type Link struct {
	Account  string
	Workflow string
	Offer    string
	Price    decimal.Decimal
	Symbol   string
	Shares   int64
	Answer   Answer
	Deadline time.Time
}

// claims is a link's signed form: short names, the deadline in Unix
// milliseconds.
type claims struct {
	Account  string `json:"a"`
	Workflow string `json:"w"`
	Offer    string `json:"o"`
	Price    string `json:"p"`
	Symbol   string `json:"s"`
	Shares   int64  `json:"n"`
	Answer   Answer `json:"x"`
	Deadline int64  `json:"d"`
}

// MinSecret is the shortest secret a key is derived from, in bytes: 32
// random characters, as `openssl rand -base64 32` prints.
const MinSecret = 32

// maxToken bounds a token's length (a link's is about 300 characters), so
// a long path costs nothing to refuse.
const maxToken = 2048

// keyLabel names what the key derived from the secret is for, and the
// version of the links it signs.
const keyLabel = "locator answer links v1"

// Errors of Verify.
var (
	// ErrInvalid: the token is not one this key signed (a changed
	// character, a token cut short, another secret's).
	ErrInvalid = errors.New("this link is not valid: it was changed, cut short, or signed with another secret")
	// ErrExpired: the link's answer deadline has passed.
	ErrExpired = errors.New("this link has expired: its offer's answer deadline has passed")
)

// tokenEncoding is strict: a changed character in the last position of a
// part, whose unused bits an ordinary decoder ignores, is refused too.
var tokenEncoding = base64.RawURLEncoding.Strict()

// Key signs and verifies links. It is derived from a secret, never the
// secret itself.
type Key struct {
	mac []byte
}

// NewKey derives the key of links from secret, which must be at least
// MinSecret bytes. The error never quotes the secret.
func NewKey(secret string) (*Key, error) {
	if len(secret) < MinSecret {
		return nil, fmt.Errorf("the answer link secret is %d bytes: want at least %d random ones (openssl rand -base64 32)", len(secret), MinSecret)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(keyLabel))
	return &Key{mac: m.Sum(nil)}, nil
}

// sum is the HMAC of a token's payload.
func (k *Key) sum(payload []byte) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write(payload)
	return m.Sum(nil)
}

// formLabel separates a link page's form token from a link's signature,
// both HMACs under the key (a signed payload is JSON: it never begins so).
const formLabel = "form\x00"

// formToken is what the form of link token's page carries back: an HMAC
// of the token under the key, so only a page served with this key holds
// it. A POST to the link without it (a form of another site, or of a page
// of another user on another port of this machine, which a browser would
// post) is refused.
func (k *Key) formToken(token string) string {
	return tokenEncoding.EncodeToString(k.sum([]byte(formLabel + token)))
}

// Sign returns l's token: the claims and their HMAC, each in unpadded
// base64url, joined by a dot. It holds no character a URL path escapes.
func (k *Key) Sign(l Link) string {
	payload, _ := json.Marshal(claims{Account: l.Account, Workflow: l.Workflow, Offer: l.Offer, Price: l.Price.String(),
		Symbol: l.Symbol, Shares: l.Shares, Answer: l.Answer, Deadline: l.Deadline.UnixMilli()})
	return tokenEncoding.EncodeToString(payload) + "." + tokenEncoding.EncodeToString(k.sum(payload))
}

// Verify returns the link token says when this key signed it (ErrInvalid
// otherwise, for any changed character) and its deadline is after now
// (ErrExpired otherwise). The signature is checked, in constant time,
// before anything of the claims is read.
func (k *Key) Verify(token string, now time.Time) (Link, error) {
	p, s, ok := strings.Cut(token, ".")
	if !ok || len(token) > maxToken {
		return Link{}, ErrInvalid
	}
	payload, err := tokenEncoding.DecodeString(p)
	if err != nil {
		return Link{}, ErrInvalid
	}
	sig, err := tokenEncoding.DecodeString(s)
	if err != nil || !hmac.Equal(sig, k.sum(payload)) {
		return Link{}, ErrInvalid
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Link{}, ErrInvalid
	}
	price, err := decimal.NewFromString(c.Price)
	if err != nil || (c.Answer != Approve && c.Answer != Decline) {
		return Link{}, ErrInvalid
	}
	l := Link{Account: c.Account, Workflow: c.Workflow, Offer: c.Offer, Price: price, Symbol: c.Symbol, Shares: c.Shares,
		Answer: c.Answer, Deadline: time.UnixMilli(c.Deadline).UTC()}
	if !now.Before(l.Deadline) {
		return l, ErrExpired
	}
	return l, nil
}
