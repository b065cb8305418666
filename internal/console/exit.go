package console

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/fileperm"
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

// UsageError is bad usage or input: exit 2, nothing was sent.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a UsageError of the formatted message.
func Usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// CodeError ends a command with exit code Code, saying Msg.
type CodeError struct {
	Code int
	Msg  string
}

func (e *CodeError) Error() string { return e.Msg }

// Ended is an outcome as a command's end: nil for 0, else a CodeError
// in the outcome's words.
func Ended(o account.Outcome) error {
	code := Exit(o.End)
	if code == ExitOK {
		return nil
	}
	return &CodeError{Code: code, Msg: o.Words}
}

// Ending is the exit code a command that returned err (not nil) exits
// with, and the message it prints: a CodeError's code, 2 for a
// UsageError, an unsafe file or bad input (said to have sent nothing), an
// account.Error's kind (ExitOf), 130 when interrupted (ctx ended: a
// command cut off exits 130 whatever error its cut-off work returned).
func Ending(ctx context.Context, err error) (int, string) {
	var ue *UsageError
	var ce *CodeError
	code, msg := ExitFailure, err.Error()
	var ae *account.Error
	switch {
	case errors.As(err, &ce):
		code = ce.Code
	case errors.As(err, &ue), errors.Is(err, fileperm.ErrUnsafe):
		code = ExitUsage
	case errors.As(err, &ae) && !errors.Is(err, brokercode.ErrInput):
		code = ExitOf(ae)
	case errors.Is(err, brokercode.ErrInput):
		code = ExitUsage
		if !strings.Contains(msg, "nothing was sent") {
			msg += "; nothing was sent"
		}
	case errors.Is(err, brokerclient.ErrLoginRequired):
		msg += "\nrun 'locator login --partner' to sign in again"
	case errors.Is(err, context.Canceled):
		code, msg = ExitInterrupted, "interrupted"
	}
	if ctx.Err() != nil && code != ExitInterrupted {
		code = ExitInterrupted
	}
	return code, msg
}
