package dashboard

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
)

// Connections are bounded per client and in all, so one client cannot
// starve the others nor the server run out of descriptors: a client
// holds at most maxClientConns at once, the server maxConns. A connection
// that would pass either bound takes the place of the oldest waiting one
// (accepted or kept alive, not inside a request) of the client it counts
// against, or of the client holding most when the server is full; only when
// all of them are inside requests is the newcomer closed. So connections
// held open and silent (by another local user, say) never make a request
// wait: the next connection closes one of them, and a client's idle
// keep-alive closed under it is retried by the client.
const (
	maxConns       = 64
	maxClientConns = 16
)

// clientOf names the client a connection comes from: its address (an
// IPv6 one by its /64, what one host is usually given), and on loopback,
// where every local user shares 127.0.0.1, also the user id owning the
// peer's socket where the system tells it (peerUID), so another local user
// is another client.
func clientOf(c net.Conn) string {
	peer, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	client := clientAddr(peer.Addr())
	if peer.Addr().Unmap().IsLoopback() {
		local, err := netip.ParseAddrPort(c.LocalAddr().String())
		if err == nil {
			if uid, ok := peerUID(peer, local); ok {
				client += " uid " + strconv.Itoa(uid)
			}
		}
	}
	return client
}

// clientAddr is the client part of an address: the address itself for
// IPv4, its /64 for IPv6.
func clientAddr(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// conns are the connections the server holds, by client.
type conns struct {
	max, perClient int

	mu       sync.Mutex
	seq      uint64
	byClient map[string]map[*conn]struct{}
	n        int
}

// conn is a connection counted against its client until it is closed.
type conn struct {
	net.Conn
	set    *conns
	client string
	seq    uint64 // order of acceptance
	busy   int    // requests being served on it (under set.mu)
}

// Close closes the connection and stops counting it.
func (c *conn) Close() error {
	c.set.mu.Lock()
	c.set.drop(c)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// drop stops counting c (if it still is); under mu.
func (s *conns) drop(c *conn) {
	m := s.byClient[c.client]
	if _, ok := m[c]; !ok {
		return
	}
	delete(m, c)
	s.n--
	if len(m) == 0 {
		delete(s.byClient, c.client)
	}
}

// admit counts c against its client, making room as the bounds say: it
// returns the connection to close for it (nil: none needed), or false when
// there is no room (every connection in the way is inside a request).
func (s *conns) admit(c *conn) (victim *conn, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := s.byClient[c.client]
	switch {
	case len(mine) >= s.perClient:
		if victim = oldestWaiting(mine); victim == nil {
			return nil, false
		}
	case s.n >= s.max:
		var most map[*conn]struct{}
		for _, m := range s.byClient {
			if len(m) > len(most) && oldestWaiting(m) != nil {
				most = m
			}
		}
		if victim = oldestWaiting(most); victim == nil {
			return nil, false
		}
	}
	if victim != nil {
		s.drop(victim)
	}
	s.seq++
	c.seq = s.seq
	if s.byClient[c.client] == nil {
		s.byClient[c.client] = map[*conn]struct{}{}
	}
	s.byClient[c.client][c] = struct{}{}
	s.n++
	return victim, true
}

// oldestWaiting is the earliest accepted connection of m that is not
// inside a request; nil when there is none.
func oldestWaiting(m map[*conn]struct{}) *conn {
	var old *conn
	for c := range m {
		if c.busy == 0 && (old == nil || c.seq < old.seq) {
			old = c
		}
	}
	return old
}

// serving marks c as inside a request until the returned func is called.
func (s *conns) serving(c *conn) func() {
	s.mu.Lock()
	c.busy++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		c.busy--
		s.mu.Unlock()
	}
}

// listener admits what its inner listener accepts under conns' bounds.
type listener struct {
	net.Listener
	set *conns
}

func (l listener) Accept() (net.Conn, error) {
	for {
		raw, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &conn{Conn: raw, set: l.set, client: clientOf(raw)}
		victim, ok := l.set.admit(c)
		if !ok {
			raw.Close()
			continue
		}
		if victim != nil {
			victim.Conn.Close() // its server side sees it closed and lets go
		}
		return c, nil
	}
}

// connKey holds a request's connection in its context.
type connKey struct{}

// withConn puts the connection a request came on in its context (the
// server's ConnContext).
func withConn(ctx context.Context, c net.Conn) context.Context {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	if c, ok := c.(*conn); ok {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

// requestClient names the client of r: its connection's (clientOf), or
// from its remote address when it came another way (a handler called
// directly).
func requestClient(r *http.Request) string {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok {
		return c.client
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return clientAddr(peer.Addr())
}

// counted serves next with the request's connection marked as inside a
// request, so admit does not close it under the request.
func (s *conns) counted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(*conn); ok {
			defer s.serving(c)()
		}
		next.ServeHTTP(w, r)
	})
}
