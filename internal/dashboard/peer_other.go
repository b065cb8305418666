//go:build !linux

package dashboard

import "net/netip"

// peerUIDKnown says that this system does not tell who owns a peer's
// socket here: a loopback client is told apart by its address alone, and
// another local user is kept out by the token alone (see ownUser).
const peerUIDKnown = false

// peerUID is not known beyond Linux.
func peerUID(peer, local netip.AddrPort) (int, bool) { return 0, false }
