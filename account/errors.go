package account

import (
	"errors"

	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/workflow"
)

// Kind says what an error of the account API means to its caller (the CLI
// maps it to the exit code of a command that ends with it). Kinds cross a
// transport unchanged; code branches on them, never on messages.
type Kind string

// Kinds of errors.
const (
	// KindInput: the request is malformed; nothing was recorded or sent.
	KindInput Kind = "input"
	// KindRefused: the request is well formed but refused before anything
	// was sent: the account is the other environment or not active, the
	// caller may not act for it, it is owned through another database.
	KindRefused Kind = "refused"
	// KindNotOpen: the workflow or order has ended, or is unknown.
	KindNotOpen Kind = "not_open"
	// KindSizing: sizing says the short cannot be placed now (buying
	// power, located shares, account status); nothing was sent.
	KindSizing Kind = "sizing"
	// KindChanged: the answer was for an offer that is no longer the one
	// waiting (a Reg SHO pair changed sides); nothing was sent.
	KindChanged Kind = "changed"
	// KindUsed: the answer came by a signed link of an offer whose links
	// were used before (they answer once); nothing was sent.
	KindUsed Kind = "used"
	// KindOwnerGone: the account's owner went away mid-request; the
	// caller's handle follows or becomes the next owner and asks again.
	KindOwnerGone Kind = "owner_gone"
	// KindFailed: anything else (a store or broker failure).
	KindFailed Kind = "failed"
)

// Error is every error the account API returns.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	cause   error  // in this process only (see Wrap)
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the error this one was made from, in the process that made it.
func (e *Error) Unwrap() error { return e.cause }

// Is matches the domain's sentinels, so callers of the engine and of the
// account API test errors alike: KindInput is brokercode.ErrInput and
// KindNotOpen is workflow.ErrNotOpen.
func (e *Error) Is(target error) bool {
	switch target {
	case brokercode.ErrInput:
		return e.Kind == KindInput
	case workflow.ErrNotOpen:
		return e.Kind == KindNotOpen
	case ErrOwnerGone:
		return e.Kind == KindOwnerGone
	}
	return false
}

// ErrOwnerGone is matched by an Error of KindOwnerGone.
var ErrOwnerGone = errors.New("account: the owner went away")

// ErrAnsweredElsewhere is the cause (context.Cause) of a question's
// context ending because its offer was answered, cancelled or ended
// elsewhere first; a question withdrawn for lack of time ends with
// context.DeadlineExceeded.
var ErrAnsweredElsewhere = errors.New("answered elsewhere")

// Errorf is an Error of kind k.
func Errorf(k Kind, msg string) *Error { return &Error{Kind: k, Message: msg} }

// Wrap is an Error of kind k saying msg that, in this process, still
// matches cause (errors.Is, errors.As); a transport carries the kind and
// the message alone.
func Wrap(k Kind, msg string, cause error) *Error { return &Error{Kind: k, Message: msg, cause: cause} }

// KindOf is err's kind: KindFailed for an error that is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindFailed
}

// AsError is err as an *Error: the one it is or wraps, else one of
// KindFailed with its message (what a transport sends for an error that
// carries no kind, such as a context's end).
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Errorf(KindFailed, err.Error())
}

func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}
