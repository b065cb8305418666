package service

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
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
// callers presenting Token. Each owner has a certificate of its own, made
// at its start, whose public key's SHA-256 goes into its lease with the
// address. A follower, which reads both from the shared database, names
// the account in its handshake (SNI) and checks the certificate: the
// connection reaches that account's owner or fails, and is served by that
// owner's server alone, which ends it when the owner goes. The token
// proves the follower to the owner; the follower still proves it holds
// the account's key pair, as on the socket.
type Network struct {
	Token   string
	address string // https://host:port, as other hosts dial it
	ln      net.Listener

	mu     sync.Mutex
	owners map[string]*ownerListener // by account, lower case (SNI's case)
}

// NewNetwork listens on listen (HOST, on a free port, or HOST:PORT) for
// the owners of this process, advertised as advertise (default: listen's
// host), for followers presenting token, which must be long enough not to
// be guessed. Close stops it.
func NewNetwork(listen, advertise, token string) (*Network, error) {
	if err := CheckToken(token); err != nil {
		return nil, err
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
	n := &Network{Token: token, address: "https://" + net.JoinHostPort(host, port), ln: ln, owners: map[string]*ownerListener{}}
	go n.accept()
	return n, nil
}

// Address is where other hosts reach the network (https://host:port).
func (n *Network) Address() string { return n.address }

// Close stops listening; the owners' connections end with their owners.
func (n *Network) Close() error { return n.ln.Close() }

// CheckToken refuses a token too short to guess at.
func CheckToken(token string) error {
	if len(token) < minTokenLen {
		return fmt.Errorf("%s must hold at least %d characters (try: openssl rand -hex 16)", OwnerTokenEnv, minTokenLen)
	}
	return nil
}

// handshakeWait bounds a TLS handshake on the network's port.
const handshakeWait = 10 * time.Second

// accept hands each connection, once its handshake named an account this
// process owns, to that account's owner.
func (n *Network) accept() {
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if o := n.owner(hello.ServerName); o != nil {
			return &o.cert, nil
		}
		return nil, fmt.Errorf("this process does not own account %q", hello.ServerName)
	}}
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return // closed
		}
		go func() {
			tc := tls.Server(c, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), handshakeWait)
			defer cancel()
			if err := tc.HandshakeContext(ctx); err != nil {
				c.Close() // a scanner, a follower with an old pin or of an account gone
				return
			}
			if o := n.owner(tc.ConnectionState().ServerName); o == nil || !o.deliver(tc) {
				tc.Close()
			}
		}()
	}
}

func (n *Network) owner(account string) *ownerListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.owners[strings.ToLower(account)]
}

// listen serves account's owner on the network with a fresh self-signed
// certificate: its connections come from the listener returned, until it
// is closed; pin is the certificate's.
func (n *Network) listen(account string) (ln net.Listener, pin string, err error) {
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
		cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}
	n.mu.Lock()
	n.owners[o.account] = o
	n.mu.Unlock()
	return o, pinOf(cert), nil
}

// ownerListener is one owner's share of the network: the connections that
// named its account.
type ownerListener struct {
	n       *Network
	account string
	addr    net.Addr
	cert    tls.Certificate
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

// pinOf is the SHA-256 of a certificate's public key, hex.
func pinOf(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:])
}

// tokenGuard refuses a request without the owner's token (compared in
// constant time), before anything else reads it.
func tokenGuard(token string, h http.Handler) http.Handler {
	want := sha256.Sum256([]byte("Bearer " + token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(http.StatusUnauthorized)
			send(w, account.Errorf(account.KindRefused, "this process does not hold the owner's token ("+OwnerTokenEnv+"); nothing was sent"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// DialRemote returns the account API of acct's owner of another host,
// serving at address (https://host:port, from its lease) with the
// certificate pin names, for caller presenting token; otherwise as Dial.
func DialRemote(acct, address, pin, token string, caller account.Caller, prover Prover, baseURL string) (*Client, error) {
	u, err := url.Parse(address)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("service: the owner's address %q is not https://host:port", address)
	}
	if pin == "" {
		return nil, errors.New("service: the owner's lease names no certificate to check")
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
			if len(cs.PeerCertificates) == 0 || subtle.ConstantTimeCompare([]byte(pinOf(cs.PeerCertificates[0])), []byte(pin)) != 1 {
				return errors.New("the owner's certificate is not the one its lease names")
			}
			return nil
		},
	}
	tr := &http.Transport{DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		d := tls.Dialer{Config: cfg}
		return d.DialContext(ctx, "tcp", u.Host)
	}}
	return newClient("https://owner", bearer{token: token, next: tr}, caller, prover, baseURL), nil
}

// bearer adds the owner's token to every request.
type bearer struct {
	token string
	next  *http.Transport
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (b bearer) CloseIdleConnections() { b.next.CloseIdleConnections() }
