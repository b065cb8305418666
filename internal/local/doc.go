// Package local holds the account API's one implementation, Account, on
// the engine of the process that owns the account: input validation, the
// live/paper guard, the cost policy, the questions put to callers, and
// the errors' kinds (Classify) all live here. Every caller reaches it
// through Account.As: in this process, or from another one through the
// owner's wire.Server, so no rule exists twice. Alone runs the same
// reads (account.Reader) for a process that finds no live owner of the
// account, on its own client and the database opened for reading.
package local
