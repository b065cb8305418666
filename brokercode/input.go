package brokercode

import (
	"errors"
	"fmt"
)

// ErrInput matches every *InputError: input refused before anything was
// recorded or sent.
var ErrInput = errors.New("invalid input")

// InputError says which input is wrong and why.
type InputError struct {
	// Field names the input: "symbol", "quantity", "accountId", ...
	Field string
	// Message says what is wrong with it, for a person.
	Message string
}

// Error is "field: message", or the message alone when no field is named.
func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Is makes errors.Is(err, ErrInput) true.
func (e *InputError) Is(target error) bool { return target == ErrInput }

// Invalid returns an *InputError for field with a formatted message.
func Invalid(field, format string, args ...any) error {
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}
