// Package service is who owns an account, and for how long.
//
// Owner makes this process an account's live owner: it holds, on SQLite,
// the account's machine lock and, on both databases, its lease in the
// database (one row per account, renewed on the database's clock, with a
// term that fences every write of its engine), runs the engine with the
// account's rules on it (local.Account), and serves the account API to
// other processes on a socket in the user's private runtime folder and,
// with a wire.Network, over TLS to other hosts. Handle is the account as
// one process holds it, owner or follower (a wire.Client), and carries a
// request in flight to the next owner when the owner goes. Fleet keeps a
// daemon's accounts, standing by for those another daemon owns. The
// accounts of one key pair are owned by one process at a time
// (store.KeyPairHeldError): they share its client, and so its pacer.
// Dialer opens an account from the command's settings: its broker client,
// its store, and the Config a Handle is opened with; and a read command's
// reads (Dialer.Reader): its live owner's, or, with none, the same reads
// on its own client and the database opened for reading (local.Alone).
package service
