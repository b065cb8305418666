package brokerclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/locatorhq/locator/brokercode"
)

// Env is the environment a user selected: paper or live. The key pair
// selects it on the shared host; the account's accountType tells which one
// the credentials actually reach.
type Env string

// Environments.
const (
	EnvPaper Env = "paper"
	EnvLive  Env = "live"
)

// EnvOf returns the environment an accountType belongs to: "Paper" is
// paper, anything else (Live, Margin, Cash, ...) is live.
func EnvOf(accountType string) Env {
	if accountType == "Paper" {
		return EnvPaper
	}
	return EnvLive
}

var (
	// ErrEnvMismatch: the account is not in the environment the user
	// selected (spec: Authentication, "API keys" rule 5).
	ErrEnvMismatch = errors.New("account environment does not match the selected environment")
	// ErrAccountNotActive: the account's status is not Active, so writes are
	// refused before they are sent.
	ErrAccountNotActive = errors.New("account is not active")
)

// EnvMismatchError says the account's accountType belongs to another
// environment than the one wanted.
type EnvMismatchError struct {
	AccountID   string
	AccountType string
	Want, Got   Env
}

func (e *EnvMismatchError) Error() string {
	return fmt.Sprintf("brokerclient: account %s is %s (accountType %q), but %s was selected; writes are blocked",
		e.AccountID, e.Got, e.AccountType, e.Want)
}

// Is reports ErrEnvMismatch.
func (e *EnvMismatchError) Is(target error) bool { return target == ErrEnvMismatch }

// AccountNotActiveError says the account's status does not allow trading.
type AccountNotActiveError struct {
	AccountID string
	Status    string
}

func (e *AccountNotActiveError) Error() string {
	return fmt.Sprintf("brokerclient: account %s is not Active (accountStatus %q); writes are blocked", e.AccountID, e.Status)
}

// Is reports ErrAccountNotActive.
func (e *AccountNotActiveError) Is(target error) bool { return target == ErrAccountNotActive }

// CheckEnvironment reads the account detail and compares its accountType
// with want, as the spec asks clients to do after authenticating. It returns
// the account, and an *EnvMismatchError (errors.Is ErrEnvMismatch) when the
// environments differ.
//
// Spec: Authentication, "API keys" rule 5; GET /v1/api/account/{accountId}.
func (c *Client) CheckEnvironment(ctx context.Context, accountID string, want Env) (*Account, error) {
	if err := checkWant(want); err != nil {
		return nil, err
	}
	acct, _, err := c.Accounts.Get(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return acct, checkEnv(acct, want)
}

// GuardWrites is the check to run before any write (orders, locates,
// cancels): the account must be in the wanted environment
// (ErrEnvMismatch) and Active (ErrAccountNotActive). It returns the account
// read.
func (c *Client) GuardWrites(ctx context.Context, accountID string, want Env) (*Account, error) {
	acct, err := c.CheckEnvironment(ctx, accountID, want)
	if err != nil {
		return acct, err
	}
	return acct, checkActive(acct)
}

// CheckWrites is GuardWrites's check of an account already read: its row
// in the key pair's account list (AccountsService.List: the list and the
// detail share the fields checked), read once for all of a key pair's
// accounts rather than each account's detail in turn.
func CheckWrites(acct *Account, want Env) error {
	if err := checkWant(want); err != nil {
		return err
	}
	if err := checkEnv(acct, want); err != nil {
		return err
	}
	return checkActive(acct)
}

// checkActive is an *AccountNotActiveError when acct is not Active.
func checkActive(acct *Account) error {
	if !acct.IsActive() {
		return &AccountNotActiveError{AccountID: acct.Account, Status: acct.AccountStatus}
	}
	return nil
}

// checkWant refuses an environment that is neither paper nor live.
func checkWant(want Env) error {
	if want != EnvPaper && want != EnvLive {
		return brokercode.Invalid("env", "%q: want %q or %q", string(want), EnvPaper, EnvLive)
	}
	return nil
}

// checkEnv is an *EnvMismatchError when acct's accountType is not of want.
func checkEnv(acct *Account, want Env) error {
	if got := EnvOf(acct.AccountType); got != want {
		return &EnvMismatchError{AccountID: acct.Account, AccountType: acct.AccountType, Want: want, Got: got}
	}
	return nil
}
