package console

import (
	"context"
	"errors"

	"github.com/locatorhq/locator/account"
)

// Exit codes (docs/design.md contract): what a command that ends with an
// outcome or an error exits with.
const (
	ExitOK          = 0   // done, including a person's own decline or cancel
	ExitFailure     = 1   // unexpected failure
	ExitUsage       = 2   // bad usage or input, or refused before sending
	ExitBroker      = 3   // the broker rejected, expired or cancelled it
	ExitDeclined    = 4   // declined by the cost policy or the locate budget
	ExitInterrupted = 130 // interrupted
)

// Exit is the exit code of a command that ends with e.
func Exit(e account.End) int {
	switch e {
	case account.EndDone:
		return ExitOK
	case account.EndBroker:
		return ExitBroker
	case account.EndDeclined:
		return ExitDeclined
	case account.EndInterrupted:
		return ExitInterrupted
	}
	return ExitFailure
}

// ExitOf is the exit code of a command that ends with err (0 for nil): 130
// when it was interrupted, 2 for an error whose kind says nothing was
// sent for bad input or a refusal, 1 otherwise.
func ExitOf(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	switch account.KindOf(err) {
	case account.KindInput, account.KindRefused, account.KindNotOpen, account.KindSizing, account.KindChanged, account.KindUsed:
		return ExitUsage
	}
	return ExitFailure
}
