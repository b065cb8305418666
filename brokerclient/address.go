package brokerclient

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/locatorhq/locator/brokercode"
)

// AddressUse is what an address is for; it decides the schemes it may
// have and whether it may carry a query.
type AddressUse int

// Uses of an address.
const (
	// BrokerAddress is the REST base address: http or https, and no query
	// or fragment (paths are appended to it).
	BrokerAddress AddressUse = iota
	// StreamAddress is the WebSocket base address: ws or wss, no query or
	// fragment.
	StreamAddress
	// LoginAddress is a partner login or token address: http or https; a
	// query is allowed (the program may be issued one).
	LoginAddress
	// WebhookAddress is a notification receiver: http or https; a query
	// is allowed.
	WebhookAddress
)

// String names the use, as errors say it.
func (u AddressUse) String() string {
	switch u {
	case StreamAddress:
		return "stream address"
	case LoginAddress:
		return "login address"
	case WebhookAddress:
		return "webhook address"
	}
	return "broker address"
}

// schemes are the plain and the encrypted scheme of the use.
func (u AddressUse) schemes() (plain, secure string) {
	if u == StreamAddress {
		return "ws", "wss"
	}
	return "http", "https"
}

// ErrAddress: an address locator would send a secret or an event to was
// refused before anything was sent to it (errors.Is ErrInvalidInput too).
var ErrAddress = errors.New("address refused")

// AddressError says why an address was refused. Its text never quotes the
// address: it may carry a password or be a secret itself (a webhook).
type AddressError struct {
	Use    AddressUse
	Reason string
}

func (e *AddressError) Error() string { return fmt.Sprintf("%s refused: %s", e.Use, e.Reason) }

// Is reports ErrAddress and brokercode.ErrInput.
func (e *AddressError) Is(target error) bool {
	return target == ErrAddress || target == brokercode.ErrInput
}

// CheckAddress is the one rule for every address locator sends key
// headers, tokens or events to (the broker's REST and stream addresses, the
// partner login and token addresses, webhooks): an absolute URL of the
// use's schemes with a host; no user name or password in it (they would be
// sent and printed); for a base address no query or fragment; and an
// encrypted scheme (https, wss) unless the host is this machine's loopback,
// so no secret crosses a network in clear. It returns the parsed URL.
func CheckAddress(raw string, use AddressUse) (*url.URL, error) {
	refuse := func(format string, args ...any) (*url.URL, error) {
		return nil, &AddressError{Use: use, Reason: fmt.Sprintf(format, args...)}
	}
	plain, secure := use.schemes()
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != plain && u.Scheme != secure) || u.Host == "" {
		return refuse("want %s://host[:port] (or %s:// on this machine's loopback)", secure, plain)
	}
	if u.User != nil {
		return refuse("it carries a user name or password: remove them (credentials come from the environment)")
	}
	if (use == BrokerAddress || use == StreamAddress) && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "") {
		return refuse("a base address takes no query or fragment")
	}
	if u.Scheme == plain && !Loopback(u.Hostname()) {
		return refuse("%s:// beyond this machine's loopback would cross the network in clear: use %s://", plain, secure)
	}
	return u, nil
}

// Loopback reports whether host (a name or an address, without port) is
// this machine's loopback: localhost, 127.0.0.0/8 or ::1. An empty host
// or 0.0.0.0 is every interface, not loopback.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
