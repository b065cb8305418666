package dashboard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
)

// ownUser reports whether r may be served as far as its user goes: on
// loopback, where every user of the machine shares the addresses and a
// browser hands a host's cookies to all its ports (a page of another user
// on another 127.0.0.1 port receives the login cookie), only the user
// running the dashboard (s.uid) is served, whatever token, cookie or
// Origin the request carries. The peer's socket's owner comes from the
// kernel (s.peerUID, peerUID on Linux); when it cannot be found there the
// peer is refused (fail closed). Beyond loopback the question is not asked:
// TLS and the token decide, as for any host. A trusted proxy on loopback
// is a loopback peer like any other, so it must run as the same user.
//
// On systems where the owner of a peer's socket is not known
// (peerUIDKnown false: all but Linux) the check is not made: there the
// token alone keeps other local users out, and a login cookie another
// local user collects (from a page of theirs on another port) serves them.
func (s *Server) ownUser(r *http.Request) bool {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	if !peer.Addr().IsLoopback() || !peerUIDKnown {
		return true
	}
	uid, ok := s.peerUID(peer, localAddr(r))
	return ok && uid == s.uid
}

// localAddr is the address of this server that r came to (unmapped), from
// its connection; the zero AddrPort when r came on none.
func localAddr(r *http.Request) netip.AddrPort {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if a == nil {
		return netip.AddrPort{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// reach applies the rules every request passes before anything else, the
// answer links' too: plain HTTP only from a loopback peer (transport), and
// from a loopback peer only when it is this user's (ownUser). It answers a
// refusal itself (403, saying why; nothing is done) and returns false;
// else it says whether r came encrypted.
func (s *Server) reach(w http.ResponseWriter, r *http.Request) (secure, ok bool) {
	secure, ok = s.transport(r)
	if !ok {
		http.Error(w, "plain http is answered on loopback only: use https", http.StatusForbidden)
		return false, false
	}
	if !s.ownUser(r) {
		http.Error(w, fmt.Sprintf("on this machine the dashboard answers only the user running it (uid %d), and this connection is another user's "+
			"(or its user could not be found): nothing was done", s.uid), http.StatusForbidden)
		return false, false
	}
	return secure, true
}
