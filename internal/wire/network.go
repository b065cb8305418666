package wire

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locatorhq/locator/account"
)

// OwnerTokenEnv names the variable holding the token that processes of
// other hosts present to an account's owner (see Network). It is a
// secret: never a flag, never in the database.
const OwnerTokenEnv = "LOCATOR_OWNER_TOKEN"

// minTokenLen is the shortest owner token accepted: 128 bits as hex.
const minTokenLen = 32

// Network is how a process serves the accounts it owns to processes of
// other hosts: the account API over TLS 1.3, on one port for all of them
// (one rule for a firewall), reached at its advertised address, for
// callers holding Token. Each owner has a certificate of its own, made at
// its start, whose public key's SHA-256 goes into its lease with the
// address. A follower, which reads both from the shared database, names
// the account in its handshake (SNI) and checks the certificate: the
// connection reaches that account's owner or fails, and is served by that
// owner's server alone, which ends it when the owner goes.
//
// The token never travels: right after the handshake each end proves it
// holds it with an HMAC bound to this very connection (a TLS exporter
// value, RFC 8446 section 7.5) and to the owner's certificate as that end
// knows it (see connProof). A host that rewrote the lease to point
// followers at itself holds neither the owner's certificate nor the
// connection the owner sees: what a follower proves to it is of no use
// anywhere else, and without the token it cannot prove itself back, so
// the follower stops there. The follower then proves it holds the
// account's key pair, bound to the connection the same way (see proof).
type Network struct {
	Token   string
	address string // https://host:port, as other hosts dial it
	ln      net.Listener
	limits  NetworkLimits
	tlsCfg  *tls.Config

	mu     sync.Mutex
	owners map[string]*ownerListener // by account, lower case (SNI's case)
	// pending are the connections not admitted yet, oldest first.
	pending   []*pendingConn
	followers string // the followers file (AllowFollowers), or ""
}

// pendingConn is a connection not admitted yet, from peer (an address).
type pendingConn struct {
	peer string
	c    net.Conn
}

// NetworkLimits bound what a connection to the network's port may hold
// before and after it is admitted; a zero field takes its default.
type NetworkLimits struct {
	// AdmitWait bounds the TLS handshake and the token's proof together
	// (default 10 s): a connection that has not proven the token by then
	// is closed.
	AdmitWait time.Duration
	// HandshakeWait bounds the TLS handshake alone (default 3 s; a
	// follower's takes milliseconds).
	HandshakeWait time.Duration
	// IdleWait closes an admitted connection that carries no request for
	// that long (default 2 min); a follower dials again when it needs to.
	IdleWait time.Duration
	// MaxPending caps the connections of one peer address not admitted
	// yet (default 32), MaxPendingTotal those of every address (default
	// 256): one more takes the place of the oldest (of its address, or of
	// all), which is closed. So connections held open and silent, from a
	// follower's own address or from many, never keep a follower out: its
	// connection proves the token in milliseconds, long before as many new
	// ones could push it out.
	MaxPending      int
	MaxPendingTotal int
}

// Defaults of NetworkLimits.
const (
	defaultAdmitWait       = 10 * time.Second
	defaultHandshakeWait   = 3 * time.Second
	defaultIdleWait        = 2 * time.Minute
	defaultMaxPending      = 32
	defaultMaxPendingTotal = 256
)

// NewNetwork listens on listen (HOST, on a free port, or HOST:PORT) for
// the owners of this process, advertised as advertise (default: listen's
// host), for followers holding token, which must be long enough not to be
// guessed, within limits. Close stops it.
func NewNetwork(listen, advertise, token string, limits NetworkLimits) (*Network, error) {
	if err := CheckToken(token); err != nil {
		return nil, err
	}
	if limits.AdmitWait <= 0 {
		limits.AdmitWait = defaultAdmitWait
	}
	if limits.IdleWait <= 0 {
		limits.IdleWait = defaultIdleWait
	}
	if limits.HandshakeWait <= 0 {
		limits.HandshakeWait = defaultHandshakeWait
	}
	if limits.MaxPending <= 0 {
		limits.MaxPending = defaultMaxPending
	}
	if limits.MaxPendingTotal <= 0 {
		limits.MaxPendingTotal = defaultMaxPendingTotal
	}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		listen = net.JoinHostPort(listen, "0")
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	host := advertise
	if host == "" {
		host, _, _ = net.SplitHostPort(listen)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	n := &Network{Token: token, address: "https://" + net.JoinHostPort(host, port), ln: ln, limits: limits,
		owners: map[string]*ownerListener{}}
	n.tlsCfg = &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if o := n.owner(hello.ServerName); o != nil {
			return &o.cert, nil
		}
		return nil, fmt.Errorf("this process does not own account %q", hello.ServerName)
	}}
	go n.accept()
	return n, nil
}

// Address is where other hosts reach the network (https://host:port).
func (n *Network) Address() string { return n.address }

// IdleWait is how long a follower's connection may idle between requests
// before the owner closes it.
func (n *Network) IdleWait() time.Duration { return n.limits.IdleWait }

// Close stops listening; the owners' connections end with their owners.
func (n *Network) Close() error { return n.ln.Close() }

// CheckToken refuses a token too short to guess at.
func CheckToken(token string) error {
	if len(token) < minTokenLen {
		return fmt.Errorf("%s must hold at least %d characters (try: openssl rand -hex 16)", OwnerTokenEnv, minTokenLen)
	}
	return nil
}

// accept admits each connection in a goroutine of its own.
func (n *Network) accept() {
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return // closed
		}
		go n.admit(c)
	}
}

// admit hands c to the owner its handshake names, once it finished its
// TLS handshake within HandshakeWait and, within AdmitWait, proved the
// token or (a client that is not locator, speaking HTTP at once) sent
// the first request's head with an admitted bearer (see bearerOf);
// anything else (a scanner, a follower with an old pin, another token, an
// account gone, a peer that just holds the connection) is closed, a
// refused bearer told why first. While it waits it counts against the
// caps on connections not admitted yet (see NetworkLimits.MaxPending).
func (n *Network) admit(c net.Conn) {
	p := n.hold(c)
	defer n.release(p)
	start := time.Now()
	c.SetDeadline(start.Add(min(n.limits.HandshakeWait, n.limits.AdmitWait)))
	tc := tls.Server(c, n.tlsCfg)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return
	}
	c.SetDeadline(start.Add(n.limits.AdmitWait))
	o := n.owner(tc.ConnectionState().ServerName)
	in := bufio.NewReaderSize(tc, maxHead)
	var conn net.Conn
	switch {
	case o == nil:
	case speaksHTTP(in):
		conn = n.admitBearer(tc, in)
	case AdmitToken(tc, in, n.keys(time.Now()), o.pin):
		conn = &bufferedConn{Conn: tc, in: in}
	}
	if conn == nil {
		tc.Close()
		return
	}
	if !n.release(p) {
		return // pushed out (closed) as it was admitted
	}
	c.SetDeadline(time.Time{})
	if !o.deliver(conn) {
		tc.Close()
	}
}

// maxHead bounds the head of a bearer's first request (as net/http's
// default bounds a request's headers, and more).
const maxHead = 64 << 10

// speaksHTTP reports whether the connection opened with an HTTP request
// rather than the proof of the token (32 bytes of an HMAC, which begin
// with one of these methods once in about 600 million connections).
func speaksHTTP(in *bufio.Reader) bool {
	head, err := in.Peek(4)
	if err != nil {
		return false
	}
	switch string(head) {
	case "GET ", "POST", "PUT ", "HEAD", "DELE", "PATC", "OPTI":
		return true
	}
	return false
}

// admitBearer is the connection of a client that is not locator, once the
// head of its first request carries an admitted bearer (its requests are
// checked again one by one: see Server.Routes); nil, with the refusal
// written, when not.
func (n *Network) admitBearer(tc *tls.Conn, in *bufio.Reader) net.Conn {
	head, err := requestHead(in)
	if err != nil {
		return nil
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		return nil
	}
	host, err := n.bearerOf(req.Header.Get("Authorization"), time.Now())
	if err != nil {
		writeRefusal(tc, err)
		return nil
	}
	return &bufferedConn{Conn: tc, in: in, bearer: func(authorization string) (string, error) {
		h, err := n.bearerOf(authorization, time.Now())
		if err == nil && h != host {
			err = errBearerRefused // another host's, on this one's connection
		}
		return h, err
	}}
}

// requestHead is the head of the request in holds (up to its blank line),
// peeked, not read: the owner's server reads the request from in whole.
func requestHead(in *bufio.Reader) ([]byte, error) {
	for {
		b, err := in.Peek(in.Buffered())
		if err != nil {
			return nil, err
		}
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			return b[:i+4], nil
		}
		if len(b) >= maxHead {
			return nil, errors.New("request head too large")
		}
		// One more read of what the client sent.
		if _, err := in.Peek(len(b) + 1); err != nil {
			return nil, err
		}
	}
}

// writeRefusal answers a bearer's first request with err, an
// account.Error as JSON (401 with the scheme to use, or 426 for
// errUpgrade), and the connection closes.
func writeRefusal(tc *tls.Conn, err error) {
	status, extra := http.StatusUnauthorized, "WWW-Authenticate: Bearer realm=\"locator\"\r\n"
	if err == errUpgrade {
		status, extra = http.StatusUpgradeRequired, ""
	}
	b, _ := json.Marshal(account.AsError(err))
	fmt.Fprintf(tc, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), extra, len(b), b)
}

// bufferedConn is an admitted connection, read through the reader that
// admitted it (which may hold what the client sent next). bearer is set
// on a bearer's connection: it checks each request's Authorization and
// says whose credential it is.
type bufferedConn struct {
	net.Conn
	in     *bufio.Reader
	bearer func(authorization string) (host string, err error)
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.in.Read(p) }

// connKey is the context key of the connection a request came on.
type connKey struct{}

// ConnContext is the owner's network server's http.Server.ConnContext: it
// gives the routes the connection the Network admitted, which net/http
// does not see as TLS (see tlsState), and tells a bearer's from a
// follower's (see Server.Routes).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if b, ok := c.(*bufferedConn); ok {
		return context.WithValue(ctx, connKey{}, b)
	}
	return ctx
}

// tlsState is the TLS state of the connection r came on: r.TLS, or that
// of the Network's connection (see ConnContext); nil on the socket.
func tlsState(r *http.Request) *tls.ConnectionState {
	if r.TLS != nil {
		return r.TLS
	}
	if b, ok := r.Context().Value(connKey{}).(*bufferedConn); ok {
		if tc, ok := b.Conn.(*tls.Conn); ok {
			cs := tc.ConnectionState()
			return &cs
		}
	}
	return nil
}

// hold counts c among the connections not admitted yet, closing the
// oldest of its address when that address holds MaxPending, and the
// oldest of all when all hold MaxPendingTotal.
func (n *Network) hold(c net.Conn) *pendingConn {
	peer, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	p := &pendingConn{peer: peer, c: c}
	n.mu.Lock()
	defer n.mu.Unlock()
	same := 0
	for _, q := range n.pending {
		if q.peer == peer {
			same++
		}
	}
	if same >= n.limits.MaxPending {
		n.evictLocked(slices.IndexFunc(n.pending, func(q *pendingConn) bool { return q.peer == peer }))
	}
	if len(n.pending) >= n.limits.MaxPendingTotal {
		n.evictLocked(0)
	}
	n.pending = append(n.pending, p)
	return p
}

// evictLocked closes the i-th connection not admitted yet and stops
// counting it. n.mu is held.
func (n *Network) evictLocked(i int) {
	n.pending[i].c.Close()
	n.pending = slices.Delete(n.pending, i, i+1)
}

// release stops counting p (admitted, or closed); it reports false when
// p was no longer counted: evicted, its connection closed.
func (n *Network) release(p *pendingConn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	i := slices.Index(n.pending, p)
	if i >= 0 {
		n.pending = slices.Delete(n.pending, i, i+1)
	}
	return i >= 0
}

// Each end of a connection to the network proves it holds the token with
// connProof, the follower first, as one message each way:
//
//	follower -> owner: connProof("follower") (32 bytes)
//	owner -> follower: admitted + connProof("owner"), or refusedToken and close
const (
	admitted     byte = 'y'
	refusedToken byte = 'n'
)

// connProof is an HMAC-SHA256 keyed by the token of side's name, the
// connection's TLS exporter value and the pin of the owner's certificate
// as that end knows it (the owner its own, the follower the one it saw,
// which its lease named): a proof made on one connection, or to another
// certificate, proves nothing on another.
func connProof(token, side string, cs tls.ConnectionState, pin string) ([]byte, error) {
	ekm, err := cs.ExportKeyingMaterial("EXPORTER-locator-owner-token", nil, 32)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, []byte(token))
	fmt.Fprintf(m, "locator %s\n%x\n%s", side, ekm, pin)
	return m.Sum(nil), nil
}

// AdmitToken is the owner's end: whether the follower proved one of keys
// (the token, or a follower host's credential: see AllowFollowers) on tc,
// reading its proof from in (tc, or a reader over it), to this owner's
// certificate (pin); the owner proves the same key back.
func AdmitToken(tc *tls.Conn, in io.Reader, keys []string, pin string) bool {
	got := make([]byte, sha256.Size)
	if _, err := io.ReadFull(in, got); err != nil {
		return false
	}
	token := ""
	for _, k := range keys {
		want, err := connProof(k, "follower", tc.ConnectionState(), pin)
		if err != nil {
			return false
		}
		if hmac.Equal(got, want) {
			token = k
		}
	}
	if token == "" {
		tc.Write([]byte{refusedToken})
		return false
	}
	mine, err := connProof(token, "owner", tc.ConnectionState(), pin)
	if err != nil {
		return false
	}
	_, err = tc.Write(append([]byte{admitted}, mine...))
	return err == nil
}

// PresentToken is the follower's end: it proves the token on tc to the
// certificate it saw (pin), and checks the owner's proof back. A refusal
// and an owner that cannot prove the token are errors of kind
// KindRefused; nothing else was sent.
func PresentToken(tc *tls.Conn, token, pin, address string) error {
	cs := tc.ConnectionState()
	mine, err := connProof(token, "follower", cs, pin)
	if err != nil {
		return err
	}
	if _, err := tc.Write(mine); err != nil {
		return err
	}
	reply := make([]byte, 1+len(mine))
	if _, err := io.ReadFull(tc, reply[:1]); err != nil {
		return err
	}
	if reply[0] == 'H' {
		return account.Errorf(account.KindRefused, fmt.Sprintf("the owner at %s runs an older locator (it answered HTTP to the proof of %s): upgrade it; nothing was sent", address, OwnerTokenEnv))
	}
	if reply[0] != admitted {
		return account.Errorf(account.KindRefused, fmt.Sprintf("the owner at %s refused this process's %s (another token than the owner's); nothing was sent", address, OwnerTokenEnv))
	}
	want, err := connProof(token, "owner", cs, pin)
	if err != nil {
		return err
	}
	if _, err := io.ReadFull(tc, reply[1:]); err != nil {
		return err
	}
	if !hmac.Equal(reply[1:], want) {
		return account.Errorf(account.KindRefused, fmt.Sprintf("the host at %s, with the certificate the account's lease names, does not hold %s: "+
			"it is not the account's owner (whoever wrote that lease row points followers at it); nothing was sent", address, OwnerTokenEnv))
	}
	return nil
}

func (n *Network) owner(account string) *ownerListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.owners[strings.ToLower(account)]
}

// Listen serves account's owner on the network with a fresh self-signed
// certificate: its connections come from the listener returned, until it
// is closed; pin is the certificate's.
func (n *Network) Listen(account string) (ln net.Listener, pin string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "locator owner of " + account},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, "", err
	}
	o := &ownerListener{n: n, account: strings.ToLower(account), addr: n.ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{}),
		cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pin: PinOf(cert)}
	n.mu.Lock()
	n.owners[o.account] = o
	n.mu.Unlock()
	return o, o.pin, nil
}

// ownerListener is one owner's share of the network: the connections that
// named its account.
type ownerListener struct {
	n       *Network
	account string
	addr    net.Addr
	cert    tls.Certificate
	pin     string // cert's
	conns   chan net.Conn
	done    chan struct{}
	once    sync.Once
}

// deliver hands c to the owner; false once it has closed.
func (o *ownerListener) deliver(c net.Conn) bool {
	select {
	case o.conns <- c:
		return true
	case <-o.done:
		return false
	}
}

func (o *ownerListener) Accept() (net.Conn, error) {
	select {
	case c := <-o.conns:
		return c, nil
	case <-o.done:
		return nil, net.ErrClosed
	}
}

// Close takes the owner off the network: new handshakes naming its account
// fail from now on.
func (o *ownerListener) Close() error {
	o.once.Do(func() {
		o.n.mu.Lock()
		if o.n.owners[o.account] == o {
			delete(o.n.owners, o.account)
		}
		o.n.mu.Unlock()
		close(o.done)
	})
	return nil
}

func (o *ownerListener) Addr() net.Addr { return o.addr }

// PinOf is the SHA-256 of a certificate's public key, hex.
func PinOf(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:])
}

// DialRemote returns the account API of acct's owner of another host,
// serving at address (https://host:port, from its lease) with the
// certificate pin names, for caller holding token (each connection proves
// it, see Network); otherwise as Dial.
func DialRemote(acct, address, pin, token string, caller account.Caller, prover Prover, baseURL string) (*Client, error) {
	u, err := url.Parse(address)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("wire: the owner's address %q is not https://host:port", address)
	}
	if pin == "" {
		return nil, errors.New("wire: the owner's lease names no certificate to check")
	}
	if err := CheckToken(token); err != nil {
		return nil, account.Errorf(account.KindRefused, "the account's owner is on another host: "+err.Error()+"; nothing was sent")
	}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		ServerName: acct, // which of the process's owners this is for
		// The certificate is self-signed: what vouches for it is the
		// database, whose lease row names its public key.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || subtle.ConstantTimeCompare([]byte(PinOf(cs.PeerCertificates[0])), []byte(pin)) != 1 {
				return errors.New("the owner's certificate is not the one its lease names")
			}
			return nil
		},
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		d := tls.Dialer{Config: cfg}
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return nil, err
		}
		tc := c.(*tls.Conn)
		wait, ok := ctx.Deadline()
		if !ok {
			wait = time.Now().Add(defaultAdmitWait)
		}
		tc.SetDeadline(wait)
		if err := PresentToken(tc, token, pin, address); err != nil {
			tc.Close()
			return nil, err
		}
		tc.SetDeadline(time.Time{})
		return tc, nil
	}
	return newClient("https://owner", dial, caller, prover, baseURL), nil
}
