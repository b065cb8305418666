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
	"time"

	"github.com/locatorhq/locator/account"
)

// OwnerTokenEnv names the variable holding the token that processes of
// other hosts present to an account's owner (see Network). It is a
// secret: never a flag, never in the database.
const OwnerTokenEnv = "LOCATOR_OWNER_TOKEN"

// minTokenLen is the shortest owner token accepted: 128 bits as hex.
const minTokenLen = 32

// Network is how an owner serves processes of other hosts: the account
// API over TLS on Listen, reached at Advertise, for callers presenting
// Token. Its certificate is made at each start; its public key's SHA-256
// goes into the lease row with the address, so a follower, which reads
// both from the shared database, checks it is talking to the owner the
// database names. The token proves the follower to the owner; the
// follower still proves it holds the account's key pair, as on the
// socket.
type Network struct {
	Listen    string // host:port (port 0: any free port)
	Advertise string // the host other hosts dial; default Listen's host
	Token     string
}

// NewNetwork serves other hosts on host (a free port per account, named
// in its lease), reached at advertise (default: host), for followers
// presenting token, which must be long enough not to be guessed.
func NewNetwork(host, advertise, token string) (*Network, error) {
	if err := CheckToken(token); err != nil {
		return nil, err
	}
	return &Network{Listen: net.JoinHostPort(host, "0"), Advertise: advertise, Token: token}, nil
}

// CheckToken refuses a token too short to guess at.
func CheckToken(token string) error {
	if len(token) < minTokenLen {
		return fmt.Errorf("%s must hold at least %d characters (try: openssl rand -hex 16)", OwnerTokenEnv, minTokenLen)
	}
	return nil
}

// listenTLS listens on n.Listen with a fresh self-signed certificate, and
// returns the listener, the address to advertise and the certificate's
// pin.
func listenTLS(n Network) (net.Listener, string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "locator owner"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, "", "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, "", "", err
	}
	ln, err := tls.Listen("tcp", n.Listen, &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
		MinVersion:   tls.VersionTLS13,
	})
	if err != nil {
		return nil, "", "", fmt.Errorf("service: listen on %s: %w", n.Listen, err)
	}
	host := n.Advertise
	if host == "" {
		host, _, _ = net.SplitHostPort(n.Listen)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return ln, "https://" + net.JoinHostPort(host, port), pinOf(cert), nil
}

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

// DialRemote returns the account API of an owner of another host, serving
// at address (https://host:port, from its lease) with the certificate pin
// names, for caller presenting token; otherwise as Dial.
func DialRemote(address, pin, token string, caller account.Caller, prover Prover, baseURL string) (*Client, error) {
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
