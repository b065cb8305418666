package brokerclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// WriteGate is asked before each write leaves (every request that is not
// a GET, after its pacing): a non-nil error keeps the write unsent. accept
// says the write is a locate accept, which must also be answered inside
// the offer's window. The owner of an account puts one in its engine's
// context so that no write leaves once the owner can no longer be sure it
// still owns the account (see service.Owner).
type WriteGate func(accept bool) error

// ErrNotSent is matched by the error of a write its WriteGate held back:
// nothing reached the broker.
var ErrNotSent = errors.New("write not sent")

type gateKey struct{}

// WithWriteGate returns ctx whose writes ask gate first.
func WithWriteGate(ctx context.Context, gate WriteGate) context.Context {
	return context.WithValue(ctx, gateKey{}, gate)
}

// gateWrite asks ctx's WriteGate, if any, whether cl may leave now.
func gateWrite(ctx context.Context, cl call) error {
	gate, _ := ctx.Value(gateKey{}).(WriteGate)
	if gate == nil || cl.method == http.MethodGet {
		return nil
	}
	if err := gate(cl.route == routeLocateAccept); err != nil {
		return fmt.Errorf("brokerclient: %s: %w (%w)", cl.op, ErrNotSent, err)
	}
	return nil
}
