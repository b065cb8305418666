// Package service is the account API's one implementation and what
// carries it between processes.
//
// Local implements account.Account on an owner's engine. Owner makes this
// process an account's live owner: it holds, on SQLite, the account's
// machine lock and, on both databases, its lease in the database (one row per account, renewed on
// the database's clock, with a term that fences every write of its
// engine), runs the engine, and serves the account API to other processes
// on a socket in the user's private runtime folder and, with a Network,
// over TLS to other hosts (certificate pinned from the lease, an owner
// token). Client is that API as a follower holds it: a follower proves it
// holds the account's key pair (a one-use challenge) before it is served.
// Handle is the account as one process holds it, owner or follower, and
// carries a request in flight to the next owner when the owner goes.
// Fleet keeps a daemon's accounts, standing by for those another daemon
// owns. The accounts of one key pair are owned by one process at a time
// (store.KeyPairHeldError): they share its client, and so its pacer.
//
// The wire is JSON over HTTP: POST /v1/<operation> with the operation's
// request type, answered by its result or an account.Error; GET
// /v1/follow, /v1/subscribe and /v1/questions stream newline-delimited
// messages (see transport.go for the messages, routes.go for the routes
// both sides know, server.go for the owner's side and client.go for the
// follower's).
package service
