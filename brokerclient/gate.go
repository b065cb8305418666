package brokerclient

import (
	"context"
	"errors"
	"fmt"
)

// Gate is asked before each request leaves (after its pacing): a non-nil
// error keeps it unsent. accept says the request is a locate accept,
// which must also be answered inside the offer's window. The owner of an
// account puts one in its engine's context so that nothing leaves, reads
// included, once the owner can no longer be sure it still owns the
// account (see service.Owner): another owner may be driving it by then.
type Gate func(accept bool) error

// ErrNotSent is matched by the error of a request its Gate held back:
// nothing reached the broker.
var ErrNotSent = errors.New("request not sent")

type gateKey struct{}

// WithGate returns ctx whose requests ask gate first.
func WithGate(ctx context.Context, gate Gate) context.Context {
	return context.WithValue(ctx, gateKey{}, gate)
}

// gateRequest asks ctx's Gate, if any, whether cl may leave now.
func gateRequest(ctx context.Context, cl call) error {
	gate, _ := ctx.Value(gateKey{}).(Gate)
	if gate == nil {
		return nil
	}
	if err := gate(cl.route == routeLocateAccept); err != nil {
		return fmt.Errorf("brokerclient: %s: %w (%w)", cl.op, ErrNotSent, err)
	}
	return nil
}
