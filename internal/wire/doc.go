// Package wire carries the account API between processes: an owner serves
// its account (Served: the rules of local.Account) to followers, and a
// follower holds it as a Client, an account.Account whose every answer is
// the owner's.
//
// The wire is JSON over HTTP: POST /v1/<operation> with the operation's
// request type, answered by its result or an account.Error; GET
// /v1/follow, /v1/subscribe and /v1/questions stream newline-delimited
// messages (transport.go holds the messages, routes.go the routes both
// ends know, server.go the owner's end and client.go the follower's). A
// follower proves it holds the account's key pair (a one-use challenge,
// bound to its connection) before it is served. On one host the owner
// listens on a unix socket whose peer must be the same user (peer.go);
// other hosts reach it over TLS (Network: one port per process, the
// account named in the handshake, a certificate pinned from the lease, an
// owner token proved by both ends).
package wire
