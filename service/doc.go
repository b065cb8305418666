// Package service makes one live process the owner of an account: it holds
// the account's lease in the database (renewed by heartbeats), runs the
// account's engine, and takes the requests of every other process — a
// terminal, the scheduled jobs, an execution helper — on a local socket
// beside the database (its path is in the lease; the socket is the owner's
// user's only, so no token is needed). Other processes follow their
// workflows over that socket, answer offers put to them there, and become
// the owner themselves when the owner goes away.
//
// The protocol is JSON over HTTP on the socket:
//
//	POST /locate       LocateRequest        -> IDResponse
//	POST /credit-back  CreditBackRequest    -> IDResponse
//	POST /short        ShortRequest         -> ShortResponse (blocks until the order is final or working)
//	POST /cancel       CancelRequest        -> {}
//	POST /answer       AnswerRequest        -> {}
//	GET  /follow?id=ID[&ask=1]              -> newline-delimited Messages until the workflow ends
//
// Errors are {"error": text, "kind": input | not_open | sizing | failed}.
package service
