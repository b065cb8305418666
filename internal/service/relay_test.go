package service_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokerclient"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/internal/wire"
	"github.com/locatorhq/locator/workflow"
)

// selfSigned is a certificate of the relay's own, as any host can make.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "relay"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// relay poses as the owner of an account: a TLS server with a
// certificate of its own, to which a database writer points the lease,
// passing on to the real owner at owner (whose pin it reads from the
// lease before rewriting it) what followers send it.
type relay struct {
	address, pin string

	mu       sync.Mutex
	captured []byte        // the token's proof a follower sent (relay without the token)
	replayed []byte        // the real owner's answer to that proof replayed
	tried    chan struct{} // closed once the proof was replayed
	session  string        // what the owner answered to the follower's key-pair proof
	owner    *http.Client
}

// locate sends the relay's own locate to the owner, with the session it
// got, if any: the owner's status code.
func (r *relay) locate(t *testing.T) int {
	t.Helper()
	r.mu.Lock()
	session := r.session
	r.mu.Unlock()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://owner/v1/locate",
		strings.NewReader(`{"items":[{"symbol":"HTBX","quantity":5000,"policy":{"maxPrice":"0.05"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Locator-Caller", `{"id":"relay","name":"relay"}`)
	req.Header.Set("Locator-Session", session)
	resp, err := r.owner.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// newRelay starts a relay for acct. Without the token it takes the
// follower's token proof, answers with bytes of its own (it cannot make
// the owner's) and replays the proof to the owner on a connection of its
// own. With the token (a host of the cluster turned hostile) it admits the
// follower and passes its requests on, over connections of its own that
// it proves the token on, keeping the session the owner answered.
func newRelay(t *testing.T, acct, owner, ownerPin, token string) *relay {
	t.Helper()
	cert := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &relay{address: "https://" + ln.Addr().String(), pin: wire.PinOf(cert.Leaf), tried: make(chan struct{})}
	host := strings.TrimPrefix(owner, "https://")
	toOwner := func() (*tls.Conn, error) {
		return tls.Dial("tcp", host, &tls.Config{MinVersion: tls.VersionTLS13, ServerName: acct, InsecureSkipVerify: true})
	}
	tr := &http.Transport{DialTLSContext: func(_ context.Context, _, _ string) (net.Conn, error) {
		c, err := toOwner()
		if err != nil {
			return nil, err
		}
		if err := wire.PresentToken(c, token, ownerPin, owner); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}}
	t.Cleanup(tr.CloseIdleConnections)
	r.owner = &http.Client{Transport: tr}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(&url.URL{Scheme: "https", Host: "owner"}) },
		Transport: tr,
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.URL.Path != "/v1/session" {
				return nil
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body = io.NopCloser(bytes.NewReader(b))
			var s struct{ Session string }
			json.Unmarshal(b, &s)
			r.mu.Lock()
			r.session = s.Session
			r.mu.Unlock()
			return err
		},
	}
	served := make(chan net.Conn)
	srv := &http.Server{Handler: proxy}
	go srv.Serve(chanListener{ln.Addr(), served, make(chan struct{}), new(sync.Once)})
	t.Cleanup(func() { srv.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := tls.Server(c, &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}})
				if tc.Handshake() != nil {
					tc.Close()
					return
				}
				if token != "" {
					if !wire.AdmitToken(tc, tc, []string{token}, r.pin) {
						tc.Close()
						return
					}
					served <- tc
					return
				}
				defer tc.Close()
				proof := make([]byte, 32)
				if _, err := io.ReadFull(tc, proof); err != nil {
					return
				}
				tc.Write(append([]byte{'y'}, bytes.Repeat([]byte{7}, 32)...))
				answer := []byte{}
				if oc, err := toOwner(); err == nil {
					oc.SetDeadline(time.Now().Add(10 * time.Second))
					oc.Write(proof)
					answer, _ = io.ReadAll(oc)
					oc.Close()
				}
				r.mu.Lock()
				r.captured, r.replayed = proof, answer
				r.mu.Unlock()
				close(r.tried)
			}()
		}
	}()
	return r
}

// chanListener hands an http.Server the connections the relay admitted.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  *sync.Once
}

func (l chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l chanListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l chanListener) Addr() net.Addr { return l.addr }

// Write access to the shared database is not enough to
// trade. A database writer points the account's lease (address and pin)
// at a relay of its own, and a follower of another host dials it from the
// lease. A relay without the token learns nothing it can use: the
// follower's proof of the token, replayed to the owner on the relay's own
// connection, is refused, and the follower stops with a clear error, since
// the relay cannot prove the token back. Even a relay holding the token (a
// hostile host of the cluster) that passes the owner's challenge and the
// follower's key-pair proof on gets no session: the proof names the
// follower's connection to the relay and the relay's certificate, the
// owner checks it against its own, and refuses. No request of the relay
// reaches the broker (spec "Short locates": not one write in the
// simulator's request log), and the follower is told, not served.
func TestRelayedFollowerGainsNothing(t *testing.T) {
	t.Parallel()
	network, err := wire.NewNetwork("127.0.0.1", "", testToken, wire.NetworkLimits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { network.Close() })
	db := storetest.Postgres(t)
	o := ownOn(t, db, network)
	real := o.owner.Lease()
	writer, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { writer.Close() })
	locate := account.LocateRequest{Items: []account.LocateItem{{Symbol: "HTBX", Quantity: 5000, Policy: workflow.Policy{MaxPrice: decimal.RequireFromString("0.05")}}}}
	// Follower hosts on credentials of their own. A host
	// holding one (host-a) is admitted by the owner, yet cannot pose as
	// the owner to another host's follower (host-c): that follower's proof
	// is keyed by another credential, and it stops there.
	const until = "2099-01-01T00:00:00Z"
	followers := filepath.Join(t.TempDir(), "followers")
	if err := os.WriteFile(followers, []byte("host-a "+until+"\nhost-c "+until+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := network.AllowFollowers(followers); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, token, follower, says string
	}{
		{"relay without the token", "", testToken, "does not hold " + wire.OwnerTokenEnv},
		{"relay with the token", testToken, testToken, "made on another connection than the owner's"},
		{"relay with another host's credential", wire.FollowerCredential(testToken, "host-a", until),
			wire.FollowerCredential(testToken, "host-c", until), "refused this process's " + wire.OwnerTokenEnv},
	} {
		r := newRelay(t, "LV100001", real.Address, real.Pin, c.token)
		if _, err := writer.ExecContext(t.Context(), `UPDATE leases SET address = $1, pin = $2 WHERE account = 'LV100001'`, r.address, r.pin); err != nil {
			t.Fatal(err)
		}
		l, err := o.st.LiveLease(t.Context(), "LV100001")
		if err != nil || l.Address != r.address || l.Pin != r.pin {
			t.Fatalf("%s: the lease reads %+v, %v; want the relay's", c.name, l, err)
		}
		before := writes(o)
		cl, err := wire.DialRemote(l.Account, l.Address, l.Pin, c.follower, account.Caller{Name: "follower", Env: brokerclient.EnvLive}, o.sim.Client(t, o.sim.Live), o.sim.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Locate(t.Context(), locate)
		cl.Close()
		if account.KindOf(err) != account.KindRefused || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "nothing was sent") {
			t.Errorf("%s: the follower got %v; want refused, saying %q", c.name, err, c.says)
		}
		if c.token == "" {
			<-r.tried
			r.mu.Lock()
			captured, replayed := r.captured, r.replayed
			r.mu.Unlock()
			// The follower's proof reached the relay, and is refused
			// where the relay replays it.
			if len(captured) != 32 || len(replayed) != 1 || replayed[0] != 'n' {
				t.Errorf("%s: captured %d bytes, the owner answered their replay %q; want 32 refused with 'n'", c.name, len(captured), replayed)
			}
		} else {
			// The relay's own locate, with whatever session it got.
			r.mu.Lock()
			session := r.session
			r.mu.Unlock()
			if session != "" {
				t.Errorf("%s: the owner gave the relay session %q", c.name, session)
			}
			if code := r.locate(t); code == http.StatusOK {
				t.Errorf("%s: the owner served the relay's own locate", c.name)
			}
		}
		if n := writes(o) - before; n != 0 {
			t.Errorf("%s: %d writes reached the broker", c.name, n)
		}
	}
}
